/* The sink: where a managed transfer hands its response (the program's socket, a file, a caller's functions), so the transfer code never knows which. */
#ifndef MH_SINK_H
#define MH_SINK_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mh_sink;
struct mh_split_result; /* how the transfer ended (mh_split.h) */

/* The response head the transfer offers: its bytes as the program reads them, and what they
 * say, so that no sink parses them again. */
struct mh_sink_head {
  int status;        /* 200, or 206 for the program's own Range */
  uint64_t length;   /* its Content-Length: the body bytes data() will offer */
  const char *bytes; /* "HTTP/1.1 200 OK\r\n...\r\n\r\n" */
  size_t len;
};

/* What a sink does with a response. Every call runs on the engine loop thread, from inside the
 * transfer (mh_split): a sink must not free the transfer from a callback. A sink that takes
 * fewer bytes than offered is full; the transfer keeps the rest (under the reassembly window,
 * and stops reading its connections when that is full: nothing is buffered without bound) and
 * offers it again when the sink calls mh_sink_writable(). */
struct mh_sink_ops {
  const char *name;
  /* 1: data() is only ever offered the next byte not yet taken (a stream: the program's socket
   * must read the body in order, so the transfer holds what comes past a gap until it fills);
   * 0: any offset in any order (a file written with pwrite): the transfer hands bytes on as they
   * arrive, and holds nothing for a gap. Either way each byte is offered until taken, and taken
   * once. */
  int ordered;
  /* Optional (NULL: the sink does not want them, they are dropped). 1xx interim answers that
   * came on the program's own connection before the final head, offered as they come: a
   * program that waits for 100 Continue, or reads an interim answer as if it were final, must
   * see it when it would have without the engine. Returns like head. */
  ssize_t (*interim)(struct mh_sink *k, const char *p, size_t len);
  /* The response head, rewritten for the whole object ("200 OK", Content-Length: total, no
   * Content-Range; for a program's own Range its span's 206), offered from its byte `from`
   * (the first not taken yet) until all of it was taken, before any data. Returns the bytes
   * taken of h->bytes + from (0..h->len - from; fewer: full, call mh_sink_writable later), or
   * -errno when the sink failed for good (the transfer then ends; end() is still called). */
  ssize_t (*head)(struct mh_sink *k, const struct mh_sink_head *h, size_t from);
  /* Body bytes [off, off+len) of the object. Returns like head; the bytes taken are the first
   * ones offered. */
  ssize_t (*data)(struct mh_sink *k, uint64_t off, const char *p, size_t len);
  /* The transfer ended, exactly once, with its result: r->err is 0 when every byte of the body
   * was taken, else -errno (mh_split_result says which); the rest of r tells the owner what its
   * connection needs next. Runs inside the transfer: the sink records r (its pointers stay
   * valid until the transfer is freed) and its owner acts after the pump returns. */
  void (*end)(struct mh_sink *k, const struct mh_split_result *r);
};

/* Writable callback: installed by the transfer that delivers into the sink. */
typedef void (*mh_sink_writable_cb)(struct mh_sink *k, void *arg);

/* A sink is embedded in whatever implements it (container_of). */
struct mh_sink {
  const struct mh_sink_ops *ops;
  mh_sink_writable_cb on_writable; /* set by the transfer (mh_sink_attach); NULL: none */
  void *writable_arg;
  int ended; /* end() was called (mh_sink_end calls it once) */
};

/* The transfer takes the sink: cb runs when the sink can take more. Loop thread. */
static inline void mh_sink_attach(struct mh_sink *k, mh_sink_writable_cb cb, void *arg) {
  k->on_writable = cb;
  k->writable_arg = arg;
  k->ended = 0;
}

/* The sink's side: it can take more after taking fewer bytes than offered. Loop thread. */
static inline void mh_sink_writable(struct mh_sink *k) {
  if (k->on_writable && !k->ended)
    k->on_writable(k, k->writable_arg);
}

/* The transfer's side: ends the sink once (later calls do nothing). */
static inline void mh_sink_end(struct mh_sink *k, const struct mh_split_result *r) {
  if (k->ended)
    return;
  k->ended = 1;
  k->ops->end(k, r);
}

/* A file sink: body bytes go to fd with pwrite at base + their offset, in any order (ordered =
 * 0: no reassembly window is spent on gaps); the head is not written. fd stays the caller's.
 * end() records the outcome in err and end. */
struct mh_sink_file {
  struct mh_sink sink;
  int fd;
  uint64_t base;
  uint64_t bytes; /* body bytes written */
  int err;        /* end()'s r->err; 1 until the transfer ended */
  int end;        /* end()'s r->end (enum mh_split_end) */
  int werr;       /* -errno of a failed pwrite (the transfer ends with it) */
};
void mh_sink_file_init(struct mh_sink_file *f, int fd, uint64_t base);

#endif
