/* The two sinks that are not the program's socket: a file written at each byte's offset, and a caller's functions. */
#include "mh_sink.h"

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

#define MH__FILE_OF(k) ((struct mh_sink_file *)((char *)(k)-offsetof(struct mh_sink_file, sink)))
#define MH__CB_OF(k) ((struct mh_sink_cb *)((char *)(k)-offsetof(struct mh_sink_cb, sink)))

/* The file gets the body only: a download manager writes the object, not its HTTP head. */
static ssize_t mh__file_head(struct mh_sink *k, const char *p, size_t len) {
  (void)k;
  (void)p;
  return (ssize_t)len;
}

/* A regular file never pushes back (pwrite blocks instead), so every byte is taken or the sink
 * fails: a short write is written on from where it stopped, an error ends the transfer. */
static ssize_t mh__file_data(struct mh_sink *k, uint64_t off, const char *p, size_t len) {
  struct mh_sink_file *f = MH__FILE_OF(k);
  size_t done = 0;
  while (done < len) {
    ssize_t n = pwrite(f->fd, p + done, len - done, (off_t)(f->base + off + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      f->werr = n < 0 ? -errno : -EIO;
      return f->werr;
    }
    done += (size_t)n;
  }
  f->bytes += len;
  return (ssize_t)len;
}

static void mh__file_end(struct mh_sink *k, int err) { MH__FILE_OF(k)->err = err; }

static const struct mh_sink_ops mh__file_ops = {
    .name = "file",
    .ordered = 0,
    .head = mh__file_head,
    .data = mh__file_data,
    .end = mh__file_end,
};

void mh_sink_file_init(struct mh_sink_file *f, int fd, uint64_t base) {
  *f = (struct mh_sink_file){.sink = {.ops = &mh__file_ops}, .fd = fd, .base = base, .err = 1};
}

static ssize_t mh__cb_head(struct mh_sink *k, const char *p, size_t len) {
  struct mh_sink_cb *c = MH__CB_OF(k);
  return c->fns.head ? c->fns.head(c->arg, p, len) : (ssize_t)len;
}

static ssize_t mh__cb_data(struct mh_sink *k, uint64_t off, const char *p, size_t len) {
  struct mh_sink_cb *c = MH__CB_OF(k);
  return c->fns.data(c->arg, off, p, len);
}

static void mh__cb_end(struct mh_sink *k, int err) {
  struct mh_sink_cb *c = MH__CB_OF(k);
  if (c->fns.end)
    c->fns.end(c->arg, err);
}

void mh_sink_cb_init(struct mh_sink_cb *c, const struct mh_sink_cb_fns *fns, void *arg) {
  *c = (struct mh_sink_cb){.fns = *fns, .arg = arg};
  c->ops = (struct mh_sink_ops){
      .name = "callback", .ordered = fns->ordered, .head = mh__cb_head, .data = mh__cb_data, .end = mh__cb_end};
  c->sink.ops = &c->ops;
}
