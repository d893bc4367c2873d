/* Where an API transfer's body goes: a file (pwrite at offsets), an fd (in order, pushback on EAGAIN) or the caller's callback, as the split's sink and for the transfer's own reading; the checksum at the end. */
#include "mh_api_int.h"
#include "mh_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* 0 when the bytes the output still lacks of an object of total bytes fit the free space of
 * its file system (its directory's, before it exists); else -1, the failure recorded, before
 * anything is written: a server claiming more than the disk holds is refused at once rather
 * than after filling it. */
static int mh__x_fits(struct mhttp_xfer *x, uint64_t total, int keep) {
  char dir[MH__API_URL_MAX];
  snprintf(dir, sizeof dir, "%s", x->o.output);
  char *slash = strrchr(dir, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else
    slash[slash == dir] = 0; /* "/x" keeps "/" */
  struct statvfs fs;
  if (total == UINT64_MAX || statvfs(dir, &fs) < 0)
    return 0; /* unknown: the writes tell */
  uint64_t held = 0, free_b = (uint64_t)fs.f_bavail * fs.f_frsize;
  struct stat st;
  if (!keep && stat(x->o.output, &st) == 0 && S_ISREG(st.st_mode))
    free_b += (uint64_t)st.st_blocks * 512; /* the truncation gives an old output's blocks back */
  for (unsigned i = 0; keep && i < x->rs.have.runs.n; i++)
    held += x->rs.have.runs.v[i].len;
  uint64_t need = total > held ? total - held : 0;
  if (need <= free_b)
    return 0;
  mh__x_fail(x, MHTTP_E_WRITE, "%s: the object's %llu bytes do not fit: %llu bytes free on its file system",
             x->o.output, (unsigned long long)need, (unsigned long long)free_b);
  return -1;
}

/* The output, when the answer's head is known: truncated, unless a continued transfer's split
 * keeps what it holds (the same representation). 0 or -1 (failure recorded). */
static int mh__x_open(struct mhttp_xfer *x, uint64_t total) {
  if (x->sp) { /* else the transfer read the answer itself and noted both (mh_api_relay.c) */
    const char *v = mh_split_validator(x->sp);
    snprintf(x->rs.validator, sizeof x->rs.validator, "%s", v ? v : "");
    x->rs.resumed = x->rs.resuming ? mh_split_resumed(x->sp) : 0;
  }
  int keep = x->rs.resumed > 0;
  /* the split found another representation (one read by itself said so: mh_api_relay.c); an
   * output whose runs the probe covers anyway starts over without having changed */
  int changed = (x->rs.have.validator[0] && strcmp(x->rs.have.validator, x->rs.validator)) ||
                (x->rs.have.total && x->rs.have.total != total);
  x->rs.restarted |= x->sp && x->rs.resuming && x->rs.have.runs.n && !keep && changed;
  if (mh__x_fits(x, total, keep) < 0)
    return -1;
  x->dst.fd = open(x->o.output, O_RDWR | O_CREAT | O_CLOEXEC | (keep ? 0 : O_TRUNC), 0644);
  if (x->dst.fd < 0) {
    mh__x_fail(x, MHTTP_E_WRITE, "%s: %s", x->o.output, strerror(errno));
    return -1;
  }
  /* the output starts over: an old resume file must never name its new bytes. Removed after
   * the truncation: a crash between the two leaves a resume file naming bytes past the end,
   * which mh__resume_load refuses, never an old output without one (taken whole by its size) */
  if (!keep)
    mh__resume_done(x);
  mh_sink_file_init(&x->dst.file, x->dst.fd, 0);
  for (unsigned i = 0; keep && i < x->rs.have.runs.n; i++)
    if (mh__runs_add(&x->rs.written, x->rs.have.runs.v[i].off, x->rs.have.runs.v[i].len) < 0)
      return mh__x_fail(x, MHTTP_E_NOMEM, "out of memory"), -1;
  return 0;
}

/* The answer's head was accepted: the file is made (not before: an error status writes
 * nothing), EV_START. 0 or -1 (failure recorded). */
int mh__x_head(struct mhttp_xfer *x, int status, uint64_t total) {
  if (x->dst.head_seen)
    return 0;
  if (x->dst.kind == MH__DEST_FILE && mh__x_open(x, total) < 0)
    return -1;
  x->dst.head_seen = 1;
  pthread_mutex_lock(&x->s->mu);
  x->rep.http_status = status;
  x->rep.total = total;
  x->rep.done += x->rs.resumed;
  pthread_mutex_unlock(&x->s->mu);
  /* before the first byte: an output the split writes out of order must never be left
   * without the file that says which bytes it holds (a later continue would take its size) */
  mh__resume_save(x);
  mh__x_event(x, MHTTP_EV_START, NULL, NULL);
  return 0;
}

/* An fd that would block: watched until writable, then offered again. */
static void mh__fd_writable(uv_poll_t *h, int status, int events) {
  (void)status;
  (void)events;
  mh__x_writable(h->data);
}

/* Writes what the fd takes: a short write is followed by another at once (a pipe whose reader
 * left answers the next one with EPIPE; nothing would offer the rest again). */
static ssize_t mh__fd_put(struct mhttp_xfer *x, const char *p, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(x->dst.fd, p + done, len - done);
    if (n >= 0)
      done += (size_t)n;
    else if (errno == EAGAIN || errno == EWOULDBLOCK)
      break;
    else if (errno != EINTR) {
      mh__x_fail(x, MHTTP_E_WRITE, "write to fd %d: %s", x->dst.fd, strerror(errno));
      return -EIO;
    }
  }
  if (done == len)
    return (ssize_t)done;
  x->dst.full = 1;
  if (!x->dst.fd_poll_init) {
    if (uv_poll_init(x->s->loop, &x->dst.fd_poll, x->dst.fd) < 0) {
      mh__x_fail(x, MHTTP_E_WRITE, "fd %d cannot be polled", x->dst.fd);
      return -EIO;
    }
    x->dst.fd_poll.data = x;
    x->dst.fd_poll_init = 1;
  }
  uv_poll_start(&x->dst.fd_poll, UV_WRITABLE, mh__fd_writable);
  x->dst.fd_poll_on = 1;
  return (ssize_t)done;
}

static ssize_t mh__cb_put(struct mhttp_xfer *x, uint64_t off, const char *p, size_t len) {
  int d = mh__api_user_begin();
  long n = x->dst.cb(x->dst.cb_arg, off, p, len);
  mh__api_user_end(d);
  if (n < 0 || (size_t)n > len) {
    mh__x_fail(x, MHTTP_E_WRITE, "the write callback %s", n < 0 ? "failed" : "took more than offered");
    return -EIO;
  }
  if ((size_t)n < len)
    x->dst.full = 1; /* offered again after mhttp_xfer_pause(x, 0) */
  return n;
}

/* ---- the three sinks, one per destination type (mh_sink.h) -------------------------------- */

#define MH__X_OF(k) ((struct mhttp_xfer *)((char *)(k)-offsetof(struct mhttp_xfer, dst.sink)))

/* 0 when the destination may be offered bytes now; else what data() returns. */
static ssize_t mh__x_gate(const struct mhttp_xfer *x) {
  if (x->rep.pending_code != MHTTP_OK)
    return -EIO;
  return x->dst.paused || x->dst.full || x->st == MH__X_ENDED ? 0 : 1;
}

/* n bytes of p were taken (n from the destination's put): counted, and hashed in order for a
 * checksum (an ordered sink, or the relay; a file is read back instead). */
static ssize_t mh__x_took(struct mhttp_xfer *x, const char *p, ssize_t n) {
  if (n <= 0)
    return n < 0 ? -EIO : 0;
  if (x->o.has_checksum && x->dst.kind != MH__DEST_FILE)
    mh_sha256_update(&x->dst.sha, p, (size_t)n);
  pthread_mutex_lock(&x->s->mu);
  x->rep.done += (uint64_t)n;
  pthread_mutex_unlock(&x->s->mu);
  return n;
}

/* The head the split offers: what it says is the transfer's status and length (the bytes are
 * the program's, not a destination's). */
static ssize_t mh__k_head(struct mh_sink *k, const struct mh_sink_head *h, size_t from) {
  return mh__x_head(MH__X_OF(k), h->status, h->length) < 0 ? -EIO : (ssize_t)(h->len - from);
}

/* The split ended: the transfer acts on r once the pump returned (mh__x_kick). */
static void mh__k_end(struct mh_sink *k, const struct mh_split_result *r) { MH__X_OF(k)->split_res = *r; }

/* A file: written at each byte's offset (mh_sink_file), the runs it holds recorded for a
 * later continue. */
static ssize_t mh__file_data(struct mh_sink *k, uint64_t off, const char *p, size_t len) {
  struct mhttp_xfer *x = MH__X_OF(k);
  ssize_t n = mh__x_gate(x);
  if (n <= 0)
    return n;
  n = x->dst.file.sink.ops->data(&x->dst.file.sink, off, p, len);
  if (n < 0)
    mh__x_fail(x, MHTTP_E_WRITE, "%s: %s", x->o.output, strerror((int)-n));
  else if (mh__runs_add(&x->rs.written, off, (uint64_t)n) < 0)
    return mh__x_fail(x, MHTTP_E_NOMEM, "out of memory"), -EIO;
  x->rs.written_dirty = 1;
  x->rs.unsaved += n > 0 ? (uint64_t)n : 0;
  return mh__x_took(x, p, n);
}

static ssize_t mh__fd_data(struct mh_sink *k, uint64_t off, const char *p, size_t len) {
  struct mhttp_xfer *x = MH__X_OF(k);
  (void)off; /* ordered: the fd's position */
  ssize_t n = mh__x_gate(x);
  return n <= 0 ? n : mh__x_took(x, p, mh__fd_put(x, p, len));
}

static ssize_t mh__cb_data(struct mh_sink *k, uint64_t off, const char *p, size_t len) {
  struct mhttp_xfer *x = MH__X_OF(k);
  ssize_t n = mh__x_gate(x);
  return n <= 0 ? n : mh__x_took(x, p, mh__cb_put(x, off, p, len));
}

static const struct mh_sink_ops mh__file_sink = {
    .name = "api-file", .ordered = 0, .head = mh__k_head, .data = mh__file_data, .end = mh__k_end};
/* an fd is a stream */
static const struct mh_sink_ops mh__fd_sink = {
    .name = "api-fd", .ordered = 1, .head = mh__k_head, .data = mh__fd_data, .end = mh__k_end};
/* the caller chooses the order; a checksum over a callback's bytes needs them in order */
static const struct mh_sink_ops mh__cb_sink[2] = {
    {.name = "api-callback", .ordered = 0, .head = mh__k_head, .data = mh__cb_data, .end = mh__k_end},
    {.name = "api-callback", .ordered = 1, .head = mh__k_head, .data = mh__cb_data, .end = mh__k_end},
};

void mh__x_sink_init(struct mhttp_xfer *x) {
  switch (x->dst.kind) {
  case MH__DEST_FILE: x->dst.sink.ops = &mh__file_sink; break;
  case MH__DEST_FD: x->dst.sink.ops = &mh__fd_sink; break;
  default: x->dst.sink.ops = &mh__cb_sink[x->dst.cb_ordered || x->o.has_checksum]; break;
  }
  mh_sha256_init(&x->dst.sha);
}

ssize_t mh__x_put(struct mhttp_xfer *x, uint64_t off, const char *p, size_t len) {
  return x->dst.sink.ops->data(&x->dst.sink, off, p, len);
}

void mh__x_writable(struct mhttp_xfer *x) {
  x->dst.full = 0;
  if (x->dst.fd_poll_on)
    uv_poll_stop(&x->dst.fd_poll), x->dst.fd_poll_on = 0;
  if (x->st == MH__X_ENDED || x->dst.paused)
    return;
  if (x->sp)
    mh_sink_writable(&x->dst.sink); /* the split offers the rest (through mh__x_kick) */
  else if (x->st == MH__X_RELAY)
    mh__x_relay_flush(x);
  mh__x_settle(x);
}

/* The file's digest, read back: its ranges arrived in any order. */
static int mh__file_digest(struct mhttp_xfer *x, struct mh_digest_run *c) {
  char *buf = malloc(1 << 20);
  if (!buf)
    return -ENOMEM;
  uint64_t off = 0;
  for (;;) {
    ssize_t n = pread(x->dst.fd, buf, 1 << 20, (off_t)off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      free(buf);
      if (n < 0)
        return -errno;
      break;
    }
    mh_digest_run_update(c, buf, (size_t)n);
    off += (uint64_t)n;
  }
  return 0;
}

/* The output file, read back, against the digest the origin named for the object (the split
 * hashes an ordered destination itself): 0 it matches, 1 it does not, -errno unreadable. */
int mh__x_file_check(struct mhttp_xfer *x, const struct mh_digest *want) {
  struct mh_digest_run c;
  mh_digest_run_init(&c, want->alg);
  int rc = x->dst.fd < 0 ? -EBADF : mh__file_digest(x, &c);
  return rc < 0 ? rc : mh_digest_run_check(&c, want) == 0 ? 0 : 1;
}

/* Records what mh__x_file_check found wrong. */
void mh__x_digest_fail(struct mhttp_xfer *x, int rc) {
  if (rc < 0)
    mh__x_fail(x, MHTTP_E_WRITE, "%s: cannot read back for the %s: %s", x->o.output, x->chk.odigest_field,
               strerror(-rc));
  else
    mh__x_fail(x, MHTTP_E_CHECKSUM, "the object does not match the origin's %s (%s)", x->chk.odigest_field,
               mh_digest_alg_name(x->chk.odigest.alg));
}

mhttp_code mh__x_verify(struct mhttp_xfer *x) {
  int rc = x->chk.refetched ? mh__x_file_check(x, &x->chk.odigest) : 0;
  if (rc) { /* the refetch on one path does not match either: the origin's own bytes differ */
    mh__x_digest_fail(x, rc);
    return rc < 0 ? MHTTP_E_WRITE : MHTTP_E_CHECKSUM;
  }
  if (!x->o.has_checksum)
    return MHTTP_OK;
  uint8_t got[32];
  if (x->dst.kind == MH__DEST_FILE) {
    struct mh_digest_run c;
    mh_digest_run_init(&c, MH_DIGEST_SHA256);
    int rc = x->dst.fd < 0 ? -EBADF : 0;
    if (rc == 0 && (rc = mh__file_digest(x, &c)) == 0) {
      mh_sha256_final(&c.u.s256, got);
      goto compare;
    }
    mh__x_fail(x, MHTTP_E_WRITE, "%s: cannot read back for the checksum: %s", x->o.output, strerror(-rc));
    return MHTTP_E_WRITE;
  }
  mh_sha256_final(&x->dst.sha, got);
compare:
  if (!memcmp(got, x->o.checksum, 32))
    return MHTTP_OK;
  char g[65], w[65];
  mh_sha256_hex(got, g);
  mh_sha256_hex(x->o.checksum, w);
  mh__x_fail(x, MHTTP_E_CHECKSUM, "sha-256 %s, expected %s", g, w);
  return MHTTP_E_CHECKSUM;
}
