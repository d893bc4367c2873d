/* Resuming a file transfer (option continue): the runs written so far, the resume file OUTPUT.mhttp beside the output (its text format, saved after fdatasync, read back), and what a continued transfer tells its split. */
#include "mh_api_int.h"
#include "mh_clock.h"
#include "mh_log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MH__RESUME_MAGIC "mhttp-resume 1\n"
#define MH__RESUME_MAX (1u << 20) /* a resume file larger than this is not ours */

/* ---- runs ------------------------------------------------------------------------------------- */

int mh__runs_add(struct mh__runs *r, uint64_t off, uint64_t len) {
  if (!len)
    return 0;
  uint64_t end = off + len;
  unsigned i = 0;
  while (i < r->n && r->v[i].off + r->v[i].len < off)
    i++;
  unsigned j = i; /* runs i..j-1 touch [off, end): merged into one */
  while (j < r->n && r->v[j].off <= end)
    j++;
  if (j > i) {
    uint64_t lo = r->v[i].off < off ? r->v[i].off : off;
    uint64_t hi = r->v[j - 1].off + r->v[j - 1].len > end ? r->v[j - 1].off + r->v[j - 1].len : end;
    r->v[i] = (struct mh_split_run){lo, hi - lo};
    memmove(&r->v[i + 1], &r->v[j], (r->n - j) * sizeof r->v[0]);
    r->n -= j - i - 1;
    return 0;
  }
  if (r->n == r->cap) {
    unsigned cap = r->cap ? 2 * r->cap : 16;
    struct mh_split_run *v = realloc(r->v, cap * sizeof *v);
    if (!v)
      return -ENOMEM;
    r->v = v, r->cap = cap;
  }
  memmove(&r->v[i + 1], &r->v[i], (r->n - i) * sizeof r->v[0]);
  r->v[i] = (struct mh_split_run){off, len};
  r->n++;
  return 0;
}

void mh__runs_free(struct mh__runs *r) {
  free(r->v);
  *r = (struct mh__runs){0};
}

/* ---- the file's text -------------------------------------------------------------------------- */

char *mh__resume_format(const struct mh__resume *rs, size_t *len) {
  size_t cap = strlen(rs->url) + strlen(rs->validator) + 128 + rs->runs.n * 44;
  char *b = malloc(cap);
  if (!b)
    return NULL;
  size_t n = (size_t)snprintf(b, cap, MH__RESUME_MAGIC "url %s\nlength %" PRIu64 "\nvalidator %s\n", rs->url, rs->total,
                              rs->validator);
  for (unsigned i = 0; i < rs->runs.n && n < cap; i++)
    n += (size_t)snprintf(b + n, cap - n, "range %" PRIu64 " %" PRIu64 "\n", rs->runs.v[i].off, rs->runs.v[i].len);
  *len = n;
  return b;
}

/* One "key value" line into rs. 0 or -1. */
static int mh__resume_line(struct mh__resume *rs, const char *k, const char *v, int *seen) {
  char *end;
  if (!strcmp(k, "url") && strlen(v) < sizeof rs->url)
    return snprintf(rs->url, sizeof rs->url, "%s", v), *seen |= 1, 0;
  if (!strcmp(k, "validator") && strlen(v) < sizeof rs->validator)
    return snprintf(rs->validator, sizeof rs->validator, "%s", v), 0;
  if (!strcmp(k, "length")) {
    rs->total = strtoull(v, &end, 10);
    return *v && !*end && rs->total && rs->total != UINT64_MAX ? (*seen |= 2, 0) : -1;
  }
  if (strcmp(k, "range") || !(*seen & 2))
    return -1;
  uint64_t off = strtoull(v, &end, 10), len;
  if (end == v || *end != ' ' || !(len = strtoull(end + 1, &end, 10)) || *end)
    return -1;
  const struct mh_split_run *last = rs->runs.n ? &rs->runs.v[rs->runs.n - 1] : NULL;
  if (off > rs->total || len > rs->total - off || (last && off <= last->off + last->len))
    return -1; /* past the object, out of order, overlapping or touching: not written by us */
  return mh__runs_add(&rs->runs, off, len) < 0 ? -1 : 0;
}

int mh__resume_parse(const char *text, size_t len, struct mh__resume *rs) {
  memset(rs, 0, sizeof *rs);
  size_t ml = strlen(MH__RESUME_MAGIC);
  if (len < ml || memcmp(text, MH__RESUME_MAGIC, ml) || memchr(text, 0, len))
    return -1;
  int seen = 0;
  for (size_t at = ml; at < len;) {
    const char *nl = memchr(text + at, '\n', len - at);
    char line[MH__API_URL_MAX + 16];
    size_t ll = nl ? (size_t)(nl - text) - at : len - at;
    if (!nl || ll >= sizeof line)
      goto bad;
    memcpy(line, text + at, ll);
    line[ll] = 0;
    char *sp = strchr(line, ' ');
    if (!sp)
      goto bad;
    *sp = 0;
    if (mh__resume_line(rs, line, sp + 1, &seen) < 0)
      goto bad;
    at += ll + 1;
  }
  if (seen == 3)
    return 0;
bad:
  mh__runs_free(&rs->runs);
  return -1;
}

/* ---- the transfer's side ---------------------------------------------------------------------- */

static void mh__resume_path(const struct mhttp_xfer *x, char *p, size_t cap) {
  snprintf(p, cap, "%s.mhttp", x->o.output);
}

/* One save of the resume file: its text (what the output held when it was asked), a descriptor
 * of the output to fdatasync, and where it goes. */
struct mh__save {
  uv_work_t req;
  struct mhttp_xfer *x;
  int fd;         /* the output, dup'ed: the transfer may close its own meanwhile */
  unsigned epoch; /* x->rs.save_epoch when it was asked */
  char *text;
  size_t len;
  char path[MH__API_URL_MAX + 16];
};

/* The record for what x->rs.written names now, or NULL (out of memory, nothing to save). */
static struct mh__save *mh__save_new(struct mhttp_xfer *x) {
  if (x->dst.kind != MH__DEST_FILE || x->dst.fd < 0 || x->rep.total == UINT64_MAX)
    return NULL; /* an unknown length is written in order: the output's size says what it holds */
  struct mh__save *sv = calloc(1, sizeof *sv);
  struct mh__resume rs = {.total = x->rep.total, .runs = x->rs.written};
  snprintf(rs.url, sizeof rs.url, "%s", x->url0); /* as given: a redirect is followed again */
  snprintf(rs.validator, sizeof rs.validator, "%s", x->rs.validator);
  if (!sv || !(sv->text = mh__resume_format(&rs, &sv->len))) {
    free(sv);
    return NULL;
  }
  sv->x = x;
  sv->fd = x->dst.fd;
  sv->epoch = ++x->rs.save_epoch;
  mh__resume_path(x, sv->path, sizeof sv->path);
  x->rs.written_dirty = 0;
  x->rs.unsaved = 0;
  x->rs.saved_us = mh_now_us();
  return sv;
}

/* The write order that keeps the resume file from ever naming bytes that are not on disk: the
 * output's bytes first (fdatasync), then the record to a temp file (fdatasync) renamed over the
 * old one, under the session's mutex and only when no later save was asked meanwhile (an
 * older record never replaces a newer one, nor comes back after mh__resume_done). */
static void mh__save_write(struct mh__save *sv) {
  char tmp[sizeof sv->path + 8];
  snprintf(tmp, sizeof tmp, "%s.tmp", sv->path);
  if (fdatasync(sv->fd) < 0) {
    mh_info("api: cannot save %s: %s", sv->path, strerror(errno));
    return;
  }
  pthread_mutex_lock(&sv->x->s->mu);
  if (sv->epoch == sv->x->rs.save_epoch) {
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int ok = fd >= 0 && write(fd, sv->text, sv->len) == (ssize_t)sv->len && fdatasync(fd) == 0;
    if (fd >= 0)
      close(fd);
    if (!ok || rename(tmp, sv->path) < 0) {
      mh_info("api: cannot save %s: %s", sv->path, strerror(errno));
      unlink(tmp);
    }
  }
  pthread_mutex_unlock(&sv->x->s->mu);
}

static void mh__save_free(struct mh__save *sv) {
  free(sv->text);
  free(sv);
}

void mh__resume_save(struct mhttp_xfer *x) {
  struct mh__save *sv = mh__save_new(x);
  if (sv)
    mh__save_write(sv), mh__save_free(sv);
}

static void mh__save_work(uv_work_t *req) { mh__save_write(req->data); }

static void mh__save_after(uv_work_t *req, int status) {
  (void)status;
  struct mh__save *sv = req->data;
  struct mhttp_xfer *x = sv->x;
  close(sv->fd);
  mh__save_free(sv);
  x->rs.saving = 0;
  mh__x_closed(x); /* the reference the save held */
}

/* The periodic save, off the loop (libuv's thread pool: an fdatasync of megabytes would stall
 * every connection of the session); at most one at a time, the next tick asks again. */
void mh__resume_save_async(struct mhttp_xfer *x) {
  if (x->rs.saving)
    return;
  struct mh__save *sv = mh__save_new(x);
  if (!sv)
    return;
  sv->req.data = sv;
  if ((sv->fd = fcntl(x->dst.fd, F_DUPFD_CLOEXEC, 0)) < 0 ||
      uv_queue_work(x->s->loop, &sv->req, mh__save_work, mh__save_after) < 0) {
    if (sv->fd >= 0)
      close(sv->fd);
    mh__save_free(sv);
    x->rs.written_dirty = 1; /* not saved: the next tick tries again */
    return;
  }
  x->rs.saving = 1;
  x->closing++; /* the transfer's memory stays until the save is done */
}

uint64_t mh__resume_from(const struct mhttp_xfer *x) {
  const struct mh__runs *r = &x->rs.have.runs;
  uint64_t from = r->n && r->v[0].off == 0 ? r->v[0].len : 0;
  if (x->rs.have.total && from >= x->rs.have.total)
    from = x->rs.have.total - 1; /* all there: the last byte checks the representation */
  return from;
}

void mh__resume_done(struct mhttp_xfer *x) {
  char path[MH__API_URL_MAX + 16];
  mh__resume_path(x, path, sizeof path);
  pthread_mutex_lock(&x->s->mu);
  x->rs.save_epoch++; /* a save still running must not bring it back */
  unlink(path);
  pthread_mutex_unlock(&x->s->mu);
}

/* 1 when the resume file names bytes past the output's end: the output was truncated after it
 * was saved (a restart that did not get to remove it), so it describes nothing there. */
static int mh__resume_past_end(const struct mhttp_xfer *x) {
  struct stat st;
  const struct mh__runs *r = &x->rs.have.runs;
  if (!r->n)
    return 0;
  return stat(x->o.output, &st) < 0 || r->v[r->n - 1].off + r->v[r->n - 1].len > (uint64_t)st.st_size;
}

/* continue=1: what the output holds, from its resume file, else its size (curl -C -). 0, or -1
 * with the failure recorded (MHTTP_E_RESUME). */
int mh__resume_load(struct mhttp_xfer *x) {
  char path[MH__API_URL_MAX + 16], *t = NULL;
  mh__resume_path(x, path, sizeof path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0) {
    if (errno == ENOENT && stat(x->o.output, &st) == 0 && st.st_size > 0) {
      x->rs.have.total = 0; /* unknown: the split checks only that the bytes fit the object */
      x->rs.resuming = 1;
      return mh__runs_add(&x->rs.have.runs, 0, (uint64_t)st.st_size) < 0 ? -1 : 0;
    }
    return 0; /* nothing to resume: an ordinary download */
  }
  ssize_t n = fstat(fd, &st) == 0 && st.st_size < MH__RESUME_MAX && (t = malloc((size_t)st.st_size + 1))
                  ? read(fd, t, (size_t)st.st_size)
                  : -1;
  close(fd);
  int rc = n < 0 || mh__resume_parse(t, (size_t)n, &x->rs.have) < 0 ? -1 : 0;
  free(t);
  x->rs.resuming = rc == 0;
  if (rc == 0 && mh__resume_past_end(x)) {
    mh_info("api: %s names bytes %s does not hold: fetching it whole", path, x->o.output);
    mh__runs_free(&x->rs.have.runs); /* a crash while it started over (mh__x_open) */
    return 0;
  }
  if (rc < 0)
    mh__x_fail(x, MHTTP_E_RESUME, "%s: not a resume file", path);
  else if (strcmp(x->rs.have.url, x->url0))
    mh__x_fail(x, MHTTP_E_RESUME, "%s belongs to %.200s", path, x->rs.have.url), rc = -1, x->rs.resuming = 0;
  return rc;
}
