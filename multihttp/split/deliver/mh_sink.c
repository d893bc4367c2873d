/* The file sink: each body byte written at its offset, in any order (the API's files, the tests' harnesses). */
#include "mh_sink.h"
#include "mh_split.h"

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

#define MH__FILE_OF(k) ((struct mh_sink_file *)((char *)(k)-offsetof(struct mh_sink_file, sink)))

/* The file gets the body only: a download manager writes the object, not its HTTP head. */
static ssize_t mh__file_head(struct mh_sink *k, const struct mh_sink_head *h, size_t from) {
  (void)k;
  return (ssize_t)(h->len - from);
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

static void mh__file_end(struct mh_sink *k, const struct mh_split_result *r) {
  MH__FILE_OF(k)->err = r->err;
  MH__FILE_OF(k)->end = (int)r->end;
}

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
