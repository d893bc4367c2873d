/* The sink: where a managed transfer hands its response (the program's socket, a file, a caller's functions), so the transfer code never knows which. */
#ifndef MH_SINK_H
#define MH_SINK_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mh_sink;

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
   * Content-Range; for a program's own Range its span's 206), offered from its first unsent
   * byte until all of it was taken, before any data. Returns the bytes taken (0..len; fewer
   * than len: full, call mh_sink_writable later), or -errno when the sink failed for good (the
   * transfer then ends; end() is still called). */
  ssize_t (*head)(struct mh_sink *k, const char *p, size_t len);
  /* Body bytes [off, off+len) of the object. Returns like head; the bytes taken are the first
   * ones offered. */
  ssize_t (*data)(struct mh_sink *k, uint64_t off, const char *p, size_t len);
  /* The transfer ended, exactly once: 0 when every byte of the body was taken, else -errno:
   * -ECONNRESET no path could serve the rest (the program's socket sees a reset),
   * -ECONNABORTED the origin closed before the rest (the program sees a truncated body),
   * -ENOTSUP nothing was managed (no head was offered: the owner serves the request another
   *  way, mh_split_result says how), -ECANCELED the owner freed the transfer first, or the
   *  error head/data returned. */
  void (*end)(struct mh_sink *k, int err);
};

/* Writable callback: installed by the transfer that delivers into the sink. */
typedef void (*mh_sink_writable_cb)(struct mh_sink *k, void *arg);

/* A sink is embedded in whatever implements it (container_of, or arg for the callback sink). */
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
static inline void mh_sink_end(struct mh_sink *k, int err) {
  if (k->ended)
    return;
  k->ended = 1;
  k->ops->end(k, err);
}

/* A file sink: body bytes go to fd with pwrite at base + their offset, in any order (ordered =
 * 0: no reassembly window is spent on gaps); the head is not written (*head_out keeps a copy
 * when not NULL). fd stays the caller's. end() records the outcome in err. */
struct mh_sink_file {
  struct mh_sink sink;
  int fd;
  uint64_t base;
  uint64_t bytes; /* body bytes written */
  int err;        /* end()'s argument; 1 until the transfer ended */
  int werr;       /* -errno of a failed pwrite (the transfer ends with it) */
};
void mh_sink_file_init(struct mh_sink_file *f, int fd, uint64_t base);

/* A callback sink: the caller's functions. head and data return like the ops (a caller may
 * push back); NULL head drops the head; ordered chooses the delivery order the caller wants. */
struct mh_sink_cb_fns {
  int ordered;
  ssize_t (*head)(void *arg, const char *p, size_t len);
  ssize_t (*data)(void *arg, uint64_t off, const char *p, size_t len);
  void (*end)(void *arg, int err);
};
struct mh_sink_cb {
  struct mh_sink sink;
  struct mh_sink_ops ops; /* ordered differs per caller, so each has its own table */
  struct mh_sink_cb_fns fns;
  void *arg;
};
void mh_sink_cb_init(struct mh_sink_cb *c, const struct mh_sink_cb_fns *fns, void *arg);

#endif
