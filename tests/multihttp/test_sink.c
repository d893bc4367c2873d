/* The sink contract (mh_sink.h): the program's socket in order under backpressure, a file at every byte's offset as ranges come, a sink's head (with its status and length), data and end(result) once each, errors ending a sink once. */
#include <criterion/criterion.h>
#include <pthread.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mh_config.h"
#include "mh_engine.h"
#include "mh_engine_int.h"
#include "mh_log.h"
#include "mh_reasm.h"
#include "mh_sink.h"
#include "mh_split.h"
#include "mh_upstream.h"
#include "handoff.h"
#include "sockio.h"

#define TOTAL 300000
#define BIG (24u << 20)

static char *body; /* BIG bytes; objects are its first `total` bytes */
static struct mh_config cfg;
static struct mh_engine_hooks hooks;
static const char *REQ = "GET /f HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n";
static const char *HEAD = "HTTP/1.1 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: 300000\r\n"
                          "X-Order: kept\r\n\r\n";

/* Splitting on a loopback origin (its one path: split_one_path), default configuration. */
static void setup_cfg(void) {
  if (!body) {
    body = malloc(BIG);
    for (size_t i = 0; i < BIG; i++)
      body[i] = (char)('a' + (i * 7 + i / 251) % 26);
  }
  mh_config_defaults(&cfg);
  hooks.cfg = &cfg;
  hooks.split_one_path = 1;
  if (getenv("MH_TEST_LOG")) /* MH_TEST_LOG=1: the engine's debug log on stderr */
    mh_log_setup(MH_LOG_DEBUG, 2, write);
}

static void setup(void) {
  setup_cfg();
  test_engine_with(&hooks);
}

/* The engine reads its window when it is made: a test of the window sets it first. */
static void setup_small_window(void) {
  setup_cfg();
  cfg.window = 1u << 20;
  test_engine_with(&hooks);
}

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- a canned origin on its own thread (no Criterion asserts there: it records) ---------- */

struct origin {
  int fd;
  size_t total;
  int probe_status;   /* 206, or 200: the whole object to the probe */
  int chunked_first;  /* the first answer is chunked */
  int file_fd;        /* >= 0: after the object's end went out, wait for it there */
  int end_early;      /* the file had the end before any middle byte was served */
  atomic_size_t sent; /* body bytes sent so far */
  atomic_int heads;   /* requests read so far */
  atomic_int gate;    /* 1: the next answer waits until the test sets 0 (5 s at most) */
  char err[256];
  pthread_t th;
};

/* One request head; 0, or -1 at EOF, error or timeout. */
static int origin_head(int fd, char *buf, size_t cap) {
  size_t n = 0;
  while (n + 1 < cap) {
    if (recv(fd, buf + n, 1, 0) != 1)
      return -1;
    if (++n >= 4 && !memcmp(buf + n - 4, "\r\n\r\n", 4))
      break;
  }
  buf[n] = 0;
  return 0;
}

static int origin_send(struct origin *o, const char *p, size_t n, int count) {
  while (n) {
    ssize_t w = send(o->fd, p, n > 65536 ? 65536 : n, MSG_NOSIGNAL);
    if (w <= 0)
      return -1;
    p += w;
    n -= (size_t)w;
    if (count)
      atomic_fetch_add(&o->sent, (size_t)w);
  }
  return 0;
}

/* 1 when the file holds body[first..last] at its offset; waits up to 0.8 s for it (under the
 * engine's stall limit: an origin that waits longer is a broken path to it). */
static int file_has(int fd, size_t first, size_t last) {
  static char got[TOTAL];
  size_t n = last - first + 1;
  for (uint64_t t0 = now_ms(); now_ms() - t0 < 800; usleep(2000))
    if (pread(fd, got, n, (off_t)first) == (ssize_t)n && !memcmp(got, body + first, n))
      return 1;
  return 0;
}

/* Answers every request in order: the probe with probe_status, ranges with 206s, until the
 * engine closes the connection. */
static void *origin_main(void *arg) {
  struct origin *o = arg;
  char req[4096], h[512];
  int probe = 1;
  while (origin_head(o->fd, req, sizeof req) == 0) {
    atomic_fetch_add(&o->heads, 1);
    for (int i = 0; i < 500 && atomic_load(&o->gate); i++)
      usleep(10000);
    const char *r = strstr(req, "Range: bytes=");
    char *e = NULL;
    size_t first = 0, last = o->total - 1;
    if (r) {
      first = strtoull(r + 13, &e, 10);
      if (e[1] != '\r' && strtoull(e + 1, NULL, 10) < last)
        last = strtoull(e + 1, NULL, 10);
    }
    if (!r || (probe && o->probe_status == 200)) {
      /* the whole object, in the form the engine's rewritten head takes */
      snprintf(h, sizeof h,
               "HTTP/1.1 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: %zu\r\n"
               "X-Order: kept\r\n\r\n",
               o->total);
      first = 0, last = o->total - 1;
    } else {
      snprintf(h, sizeof h,
               "HTTP/1.1 206 Partial Content\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Range: bytes %zu-%zu/%zu\r\n"
               "Content-Length: %zu\r\nX-Order: kept\r\n\r\n",
               first, last, o->total, last - first + 1);
    }
    if (probe && o->chunked_first) {
      /* one chunk, framed by the session (no splice), in one send so that one read of the
       * session's takes the whole answer in */
      static char a[40000];
      int hl = snprintf(a, sizeof a, "HTTP/1.1 206 Partial Content\r\nTransfer-Encoding: chunked\r\n\r\n%zx\r\n",
                        last - first + 1);
      size_t n = (size_t)hl + last - first + 1;
      if (n + 7 > sizeof a)
        break;
      memcpy(a + hl, body + first, last - first + 1);
      memcpy(a + n, "\r\n0\r\n\r\n", 7);
      if (origin_send(o, a, n + 7, 1) < 0)
        break;
      probe = 0;
      continue;
    }
    if (origin_send(o, h, strlen(h), 0) < 0 || origin_send(o, body + first, last - first + 1, 1) < 0)
      break;
    if (o->file_fd >= 0 && !probe && last == o->total - 1 && first > 32768)
      o->end_early = file_has(o->file_fd, first, last);
    probe = 0;
  }
  return NULL;
}

static void origin_start(struct origin *o, int fd, size_t total) {
  o->fd = fd;
  o->total = total;
  if (!o->probe_status)
    o->probe_status = 206;
  timeouts(fd);
  cr_assert_eq(pthread_create(&o->th, NULL, origin_main, o), 0);
}

static void origin_join(struct origin *o) {
  pthread_join(o->th, NULL);
  cr_assert_eq(o->err[0], 0, "origin: %s", o->err);
  close(o->fd);
}

/* ---- a split run on the test's own loop, its owner the test ---------------------------- */

struct run {
  uv_loop_t loop;
  struct mh_upstream *up;
  struct mh_split *sp;
  int pump_err;
};

/* The owner's side (mh_split_owner.kick): pump, remember the sink's failure. */
static void kick(void *arg) {
  struct run *r = arg;
  if (r->sp && !r->pump_err)
    r->pump_err = mh_split_pump(r->sp);
}

/* The owner keeps its upstream's callbacks and forwards their events to the split. */
static void up_event(struct mh_upstream *up, int status, int events) {
  struct run *r = up->owner;
  if (r->sp)
    mh_split_up_event(r->sp, status, events);
}

/* Starts a split of REQ on the program's connection up_fd into k (on r->loop, initialised by
 * the caller) and runs it until it ends, the sink fails, or 20 s passed. Returns how it ended
 * (*end: where k's end() records it; MH_SPLIT_RUNNING: it did not). */
static enum mh_split_end run_split(struct run *r, int up_fd, struct mh_sink *k, const int *end) {
  r->up = mh_upstream_tcp_adopt(&r->loop, mh_engine_upstream_env(test_engine), up_fd, NULL, up_event, r);
  cr_assert_not_null(r->up);
  struct mh_split_owner own = {.env = mh_engine_split_env(test_engine), .kick = kick, .arg = r};
  cr_assert_eq(mh_split_start(&own, &r->loop, r->up, REQ, strlen(REQ), k, &r->sp), 0);
  kick(r);
  uint64_t t0 = now_ms();
  while (!k->ended && !r->pump_err && now_ms() - t0 < 20000)
    uv_run(&r->loop, UV_RUN_ONCE); /* the split's tick wakes it at least every 100 ms */
  return k->ended ? (enum mh_split_end) * end : MH_SPLIT_RUNNING;
}

/* Frees the split as its owner would, closes the program's connection, drains the loop. */
static void run_free(struct run *r, int abort) {
  mh_split_free(r->sp, abort);
  r->up->ops->close(r->up, abort, NULL);
  uv_run(&r->loop, UV_RUN_DEFAULT);
  cr_assert_eq(uv_loop_close(&r->loop), 0);
}

/* ---- the file sink --------------------------------------------------------------------- */

/* Ranges answered out of order (the object's end right after the probe, then the middle):
 * the end is in the file before the middle is served, and the file is the object exactly. */
Test(sink, file_gets_every_byte_at_its_offset_as_ranges_come, .init = setup) {
  char path[] = "/tmp/mh_sink_XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  unlink(path);
  struct mh_sink_file f;
  mh_sink_file_init(&f, fd, 0);
  int srv, ls;
  int up = loopback_connect(&srv, &ls);
  close(ls);
  struct origin o = {.file_fd = fd};
  origin_start(&o, srv, TOTAL);
  struct run r = {0};
  cr_assert_eq(uv_loop_init(&r.loop), 0);
  r.loop.data = test_engine; /* as the engine's own loop (mh_engine_of) */
  cr_assert_eq(run_split(&r, up, &f.sink, &f.end), MH_SPLIT_END_DONE);
  run_free(&r, 0);
  origin_join(&o);
  cr_assert(o.end_early, "the object's end waited for the bytes before it (an ordered delivery)");
  cr_assert_eq(f.err, 0);
  cr_assert_eq(f.bytes, TOTAL, "each byte written once");
  static char got[TOTAL + 1];
  cr_assert_eq(pread(fd, got, sizeof got, 0), TOTAL, "nothing past the object");
  cr_assert(!memcmp(got, body, TOTAL));
  close(fd);
}

/* ---- the callback sink ----------------------------------------------------------------- */

/* A sink of the test's own: it records what the split offers and when. */
struct seen {
  struct mh_sink sink; /* first: the ops find the record at the sink's address */
  struct mh_sink_ops ops;
  unsigned heads, ends, datas;
  int end_err, end_how, data_before_head, bad_bytes, out_of_order;
  int head_status;
  uint64_t head_length;
  uint64_t next;              /* ordered: the next offset expected */
  unsigned char count[TOTAL]; /* how often each byte was given */
  char head[512];
  int push_back; /* take at most 4000 bytes, and every third call none */
  int fail_with; /* data fails with this -errno */
  uv_timer_t later;
};

static ssize_t cb_head(struct mh_sink *k, const struct mh_sink_head *h, size_t from) {
  struct seen *s = (struct seen *)k;
  s->heads++;
  s->head_status = h->status;
  s->head_length = h->length;
  if (!from && h->len < sizeof s->head)
    memcpy(s->head, h->bytes, h->len);
  return (ssize_t)(h->len - from);
}

static void cb_writable(uv_timer_t *t) {
  struct seen *s = t->data;
  mh_sink_writable(&s->sink);
}

static ssize_t cb_data(struct mh_sink *k, uint64_t off, const char *p, size_t len) {
  struct seen *s = (struct seen *)k;
  s->datas++;
  if (s->fail_with)
    return s->fail_with;
  if (!s->heads)
    s->data_before_head = 1;
  if (s->push_back && s->datas % 3 == 0) {
    uv_timer_start(&s->later, cb_writable, 1, 0); /* full now: says so later */
    return 0;
  }
  if (s->push_back && len > 4000)
    len = 4000;
  if (s->ops.ordered && off != s->next)
    s->out_of_order = 1;
  s->next = off + len;
  if (off + len > TOTAL || memcmp(p, body + off, len))
    s->bad_bytes = 1;
  for (size_t i = 0; i < len && off + i < TOTAL; i++)
    s->count[off + i]++;
  return (ssize_t)len;
}

static void cb_end(struct mh_sink *k, const struct mh_split_result *r) {
  struct seen *s = (struct seen *)k;
  s->ends++;
  s->end_err = r->err;
  s->end_how = (int)r->end;
}

/* Runs a callback sink (ordered or not) over an object of TOTAL bytes answered by the origin o
 * as it is set up. */
static enum mh_split_end run_cb(struct seen *s, struct origin *o, int ordered, struct run *r) {
  s->ops = (struct mh_sink_ops){.name = "test", .ordered = ordered, .head = cb_head, .data = cb_data, .end = cb_end};
  s->sink.ops = &s->ops;
  int srv, ls;
  int up = loopback_connect(&srv, &ls);
  close(ls);
  origin_start(o, srv, TOTAL);
  cr_assert_eq(uv_loop_init(&r->loop), 0);
  r->loop.data = test_engine;         /* as the engine's own loop (mh_engine_of) */
  uv_timer_init(&r->loop, &s->later); /* push_back's refusals are answered from it */
  s->later.data = s;
  return run_split(r, up, &s->sink, &s->end_how);
}

/* The callback test's end: its timer closed with the loop. */
static void cb_free(struct seen *s, struct run *r, int abort) {
  uv_close((uv_handle_t *)&s->later, NULL);
  run_free(r, abort);
}

static void cb_check_once(const struct seen *s) {
  cr_assert_eq(s->heads, 1, "head once");
  cr_assert_str_eq(s->head, HEAD);
  cr_assert_eq(s->head_status, 200, "what the head says, given with it");
  cr_assert_eq(s->head_length, TOTAL);
  cr_assert_not(s->data_before_head);
  cr_assert_not(s->bad_bytes, "every byte given is the object's at its offset");
  for (size_t i = 0; i < TOTAL; i++)
    cr_assert_eq(s->count[i], 1, "byte %zu given %u times", i, s->count[i]);
  cr_assert_eq(s->ends, 1, "end once");
  cr_assert_eq(s->end_err, 0);
}

/* Any order: head once, every byte of the body exactly once, end once with success. */
Test(sink, callback_sees_head_data_and_end_once, .init = setup) {
  static struct seen s;
  memset(&s, 0, sizeof s);
  struct origin o = {.file_fd = -1};
  struct run r = {0};
  cr_assert_eq(run_cb(&s, &o, 0, &r), MH_SPLIT_END_DONE);
  cb_free(&s, &r, 0);
  origin_join(&o);
  cb_check_once(&s);
}

/* In order, pushing back (partial takes, refusals answered later by mh_sink_writable): the
 * offsets follow each other and still cover the body once. */
Test(sink, ordered_callback_with_push_back_gets_the_body_once_in_order, .init = setup) {
  static struct seen s;
  memset(&s, 0, sizeof s);
  s.push_back = 1;
  struct origin o = {.file_fd = -1};
  struct run r = {0};
  cr_assert_eq(run_cb(&s, &o, 1, &r), MH_SPLIT_END_DONE);
  cb_free(&s, &r, 0);
  origin_join(&o);
  cr_assert_not(s.out_of_order);
  cr_assert_gt(s.datas, TOTAL / 4000, "it pushed back");
  cb_check_once(&s);
}

/* A sink that fails ends the transfer: the owner's pump sees the error, and the sink's end
 * comes once, with that error, when the owner frees the split. */
Test(sink, a_failing_sink_is_ended_once_with_its_error, .init = setup) {
  static struct seen s;
  memset(&s, 0, sizeof s);
  s.fail_with = -EIO;
  struct origin o = {.file_fd = -1};
  struct run r = {0};
  cr_assert_eq(run_cb(&s, &o, 0, &r), MH_SPLIT_RUNNING);
  cr_assert_eq(r.pump_err, -EIO);
  cr_assert_eq(s.ends, 0, "not before the owner lets go");
  cb_free(&s, &r, 1);
  origin_join(&o);
  cr_assert_eq(s.datas, 1, "no byte offered after the failure");
  cr_assert_eq(s.ends, 1);
  cr_assert_eq(s.end_err, -EIO);
}

/* A probe answered with the whole object (200) is not managed: no head or byte reaches the
 * sink, which is ended once with -ENOTSUP (the owner relays). */
Test(sink, an_unmanaged_answer_ends_the_sink_once_without_a_head, .init = setup) {
  static struct seen s;
  memset(&s, 0, sizeof s);
  struct origin o = {.file_fd = -1, .probe_status = 200};
  struct run r = {0};
  cr_assert_eq(run_cb(&s, &o, 1, &r), MH_SPLIT_END_RELAY);
  cb_free(&s, &r, 0);
  origin_join(&o);
  cr_assert_eq(s.heads + s.datas, 0);
  cr_assert_eq(s.ends, 1);
  cr_assert_eq(s.end_err, -ENOTSUP);
}

/* ---- the program's socket (the session's sink) ----------------------------------------- */

/* The program reads nothing for a while: the session's socket sink pushes back, the split stops
 * reading, and the origin is held back (the engine holds at most its window, not the object).
 * Then the program reads exactly the rewritten head and the body in order. */
Test(sink, program_socket_pushes_back_and_gets_the_bytes_in_order, .init = setup_small_window, .timeout = 120) {
  int srv, ls;
  int up = loopback_connect(&srv, &ls);
  close(ls);
  /* fixed TCP buffers (no autotuning up to tcp_rmem's 32 MiB): what the kernel can hold
   * between the origin and the engine stays far below the object */
  int kb = 256 * 1024;
  setsockopt(up, SOL_SOCKET, SO_RCVBUF, &kb, sizeof kb);
  setsockopt(srv, SOL_SOCKET, SO_SNDBUF, &kb, sizeof kb);
  struct origin o = {.file_fd = -1};
  origin_start(&o, srv, BIG);
  int app = hand_to_engine(up);
  timeouts(app);
  send_str(app, REQ);
  size_t last = 0;
  int still = 0;
  for (uint64_t t0 = now_ms(); still < 10 && now_ms() - t0 < 60000; usleep(100000)) {
    size_t s = atomic_load(&o.sent);
    still = s == last ? still + 1 : 0;
    last = s;
  }
  cr_assert_lt(last, BIG / 2, "the origin sent %zu of %u bytes to a program that reads nothing", last, BIG);
  cr_assert_leq(test_engine->splits.budget.used, cfg.window + (1u << 20), "held %zu", test_engine->splits.budget.used);
  char h[128];
  snprintf(h, sizeof h, "HTTP/1.1 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: %u\r\n", BIG);
  expect_str(app, h);
  expect_str(app, "X-Order: kept\r\n\r\n");
  char *got = malloc(BIG);
  recv_exact(app, got, BIG);
  cr_assert(!memcmp(got, body, BIG), "the body, in order");
  free(got);
  close(app);
  origin_join(&o);
}

/* The session is the only writer of the program's socket: the end of an earlier response that
 * it still holds for the program (which reads nothing yet, its socket full; a chunked answer,
 * so the bytes wait in the session's buffer, not in a splice pipe) goes out before the split's
 * head. */
Test(sink, program_socket_gets_an_earlier_response_first, .init = setup, .timeout = 60) {
  int srv, ls, eng;
  int up = loopback_connect(&srv, &ls);
  close(ls);
  struct origin o = {.file_fd = -1, .gate = 1, .chunked_first = 1};
  size_t first_len = 30000, total = 2u << 20;
  origin_start(&o, srv, BIG);
  int app = hand_to_engine_at(up, &eng);
  timeouts(app);
  char req1[128];
  snprintf(req1, sizeof req1, "GET /f HTTP/1.1\r\nHost: x\r\nRange: bytes=0-%zu\r\n\r\n", first_len - 1);
  send_str(app, req1); /* the program's own Range: relayed, its 206 as the origin sent it */
  for (uint64_t t0 = now_ms(); !atomic_load(&o.heads) && now_ms() - t0 < 5000;)
    usleep(10000);
  /* the session is set up (the request went through it): a tiny socket buffer on its end makes
   * it hold most of the answer for the program */
  int sb = 4096;
  cr_assert_eq(setsockopt(eng, SOL_SOCKET, SO_SNDBUF, &sb, sizeof sb), 0);
  atomic_store(&o.gate, 0);
  for (uint64_t t0 = now_ms(); atomic_load(&o.sent) < first_len && now_ms() - t0 < 10000;)
    usleep(10000);
  usleep(200000);  /* the session takes the whole answer in, and the transfer ends */
  o.total = total; /* the second request's object (the origin reads it with the next head) */
  send_str(app, REQ);
  usleep(200000); /* the split's head is ready before the program reads */
  char h[256];
  snprintf(h, sizeof h, "HTTP/1.1 206 Partial Content\r\nTransfer-Encoding: chunked\r\n\r\n%zx\r\n", first_len);
  expect_str(app, h);
  char *got = malloc(total);
  recv_exact(app, got, first_len);
  cr_assert(!memcmp(got, body, first_len), "the first answer whole");
  expect_str(app, "\r\n0\r\n\r\n");
  snprintf(h, sizeof h,
           "HTTP/1.1 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: %zu\r\nX-Order: kept\r\n\r\n", total);
  expect_str(app, h);
  recv_exact(app, got, total);
  cr_assert(!memcmp(got, body, total), "then the second");
  free(got);
  close(app);
  origin_join(&o);
}
