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
#define MH__RESUME_MAX (1u << 20)  /* a resume file larger than this is not ours */

/* ---- runs ------------------------------------------------------------------------------------- */

int mh__runs_add(struct mh__runs *r, uint64_t off, uint64_t len) {
  if (!len)
    return 0;
  uint64_t end = off + len;
  unsigned i = 0;
  while (i < r->n && r->v[i].off + r->v[i].len < off)
    i++;
  unsigned j = i;  /* runs i..j-1 touch [off, end): merged into one */
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
  size_t n = (size_t)snprintf(b, cap, MH__RESUME_MAGIC "url %s\nlength %" PRIu64 "\nvalidator %s\n", rs->url,
                              rs->total, rs->validator);
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
    return -1;  /* past the object, out of order, overlapping or touching: not written by us */
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

/* Saves what the output holds: its bytes on disk first (fdatasync), then the file that names
 * them, replaced whole (rename), so a crash never leaves it naming bytes that are not there. */
void mh__resume_save(struct mhttp_xfer *x) {
  if (x->dest != MH__DEST_FILE || x->fd < 0 || x->total == UINT64_MAX)
    return;  /* an unknown length is written in order: the output's size says what it holds */
  struct mh__resume rs = {.total = x->total, .runs = x->written};
  snprintf(rs.url, sizeof rs.url, "%s", x->url0);  /* as given: a redirect is followed again */
  snprintf(rs.validator, sizeof rs.validator, "%s", x->validator);
  size_t len;
  char *t = mh__resume_format(&rs, &len), path[MH__API_URL_MAX + 16], tmp[MH__API_URL_MAX + 24];
  mh__resume_path(x, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  int fd = t && fdatasync(x->fd) == 0 ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
  int ok = fd >= 0 && write(fd, t, len) == (ssize_t)len && fdatasync(fd) == 0;
  if (fd >= 0)
    close(fd);
  if (!ok || rename(tmp, path) < 0) {
    mh_info("api: cannot save %s: %s", path, strerror(errno));
    unlink(tmp);
  }
  free(t);
  x->written_dirty = 0;
  x->unsaved = 0;
  x->saved_us = mh_now_us();
}

uint64_t mh__resume_from(const struct mhttp_xfer *x) {
  const struct mh__runs *r = &x->have.runs;
  uint64_t from = r->n && r->v[0].off == 0 ? r->v[0].len : 0;
  if (x->have.total && from >= x->have.total)
    from = x->have.total - 1;  /* all there: the last byte checks the representation */
  return from;
}

void mh__resume_done(struct mhttp_xfer *x) {
  char path[MH__API_URL_MAX + 16];
  mh__resume_path(x, path, sizeof path);
  unlink(path);
}

/* 1 when the resume file names bytes past the output's end: the output was truncated after it
 * was saved (a restart that did not get to remove it), so it describes nothing there. */
static int mh__resume_past_end(const struct mhttp_xfer *x) {
  struct stat st;
  const struct mh__runs *r = &x->have.runs;
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
      x->have.total = 0;  /* unknown: the split checks only that the bytes fit the object */
      x->resuming = 1;
      return mh__runs_add(&x->have.runs, 0, (uint64_t)st.st_size) < 0 ? -1 : 0;
    }
    return 0;  /* nothing to resume: an ordinary download */
  }
  ssize_t n = fstat(fd, &st) == 0 && st.st_size < MH__RESUME_MAX && (t = malloc((size_t)st.st_size + 1))
                  ? read(fd, t, (size_t)st.st_size) : -1;
  close(fd);
  int rc = n < 0 || mh__resume_parse(t, (size_t)n, &x->have) < 0 ? -1 : 0;
  free(t);
  x->resuming = rc == 0;
  if (rc == 0 && mh__resume_past_end(x)) {
    mh_info("api: %s names bytes %s does not hold: fetching it whole", path, x->o.output);
    mh__runs_free(&x->have.runs);  /* a crash while it started over (mh__x_open) */
    return 0;
  }
  if (rc < 0)
    mh__x_fail(x, MHTTP_E_RESUME, "%s: not a resume file", path);
  else if (strcmp(x->have.url, x->url0))
    mh__x_fail(x, MHTTP_E_RESUME, "%s belongs to %.200s", path, x->have.url), rc = -1, x->resuming = 0;
  return rc;
}
