/* The upstream interface (mh_upstream.h): TCP's answers to query and control, and the engine's fallbacks for a transport that answers -ENOTSUP to everything. */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mh_config.h"
#include "mh_engine.h"
#include "mh_metrics.h"
#include "mh_mstore.h"
#include "mh_path.h"
#include "mh_split.h"
#include "mh_upstream.h"

/* A second kind of upstream, as a libcurl-driven one would be: no socket of its own to offer.
 * It knows nothing (every query and control is -ENOTSUP); the "bare" variant has neither
 * method at all. */
struct fake {
  struct mh_upstream base;
  int watching, closes;
};

static int fake_watch(struct mh_upstream *up, int events) {
  ((struct fake *)up)->watching = events;
  return 0;
}
static ssize_t fake_recv(struct mh_upstream *up, void *buf, size_t len) {
  (void)up, (void)buf, (void)len;
  return -EAGAIN;
}
static ssize_t fake_send(struct mh_upstream *up, const void *buf, size_t len) {
  (void)up, (void)buf;
  return (ssize_t)len;
}
static int fake_shutdown(struct mh_upstream *up) {
  (void)up;
  return 0;
}
static void fake_close(struct mh_upstream *up, int abort, mh_upstream_closed_cb cb) {
  (void)abort;
  ((struct fake *)up)->closes++;
  if (cb)
    cb(up);
}
static int fake_query(struct mh_upstream *up, int what, int *ival, void *pval) {
  (void)up, (void)what, (void)ival, (void)pval;
  return -ENOTSUP;
}
static int fake_control(struct mh_upstream *up, int what, const void *arg) {
  (void)up, (void)what, (void)arg;
  return -ENOTSUP;
}

static const struct mh_upstream_ops fake_ops = {.name = "fake",
                                                .watch = fake_watch,
                                                .recv = fake_recv,
                                                .send = fake_send,
                                                .shutdown_wr = fake_shutdown,
                                                .close = fake_close,
                                                .query = fake_query,
                                                .control = fake_control};
static const struct mh_upstream_ops bare_ops = {.name = "bare",
                                                .watch = fake_watch,
                                                .recv = fake_recv,
                                                .send = fake_send,
                                                .shutdown_wr = fake_shutdown,
                                                .close = fake_close};

/* The engine's readers of an upstream fall back: no error known, window unknown (0: the policy
 * counts it open), no RTT sample; controls refused. */
Test(upstream, unknown_answers_have_fallbacks) {
  const struct mh_upstream_ops *ops[] = {&fake_ops, &bare_ops};
  for (int i = 0; i < 2; i++) {
    struct fake f = {.base = {.ops = ops[i]}};
    int v = 7, w = 65536;
    struct sockaddr_storage a;
    cr_assert_eq(mh_upstream_query(&f.base, MH_UPQ_PEER, &v, &a), -ENOTSUP);
    cr_assert_eq(mh_upstream_query(&f.base, MH_UPQ_FD, &v, NULL), -ENOTSUP);
    cr_assert_eq(v, 7, "a refused query leaves its answer alone");
    cr_assert_eq(mh_upstream_error(&f.base), 0);
    cr_assert_eq(mh_upstream_window(&f.base), 0);
    cr_assert_eq(mh_upstream_srtt_us(&f.base), 0);
    cr_assert_eq(mh_upstream_control(&f.base, MH_UPC_WINDOW_CLAMP, &w), -ENOTSUP);
  }
}

/* A split is not started on it: the request is relayed as written (the split needs the
 * program's connection's addresses to choose paths). */
Test(upstream, split_relays_an_upstream_that_cannot_tell_its_addresses) {
  static struct mh_config cfg;
  static struct mh_engine_hooks hooks;
  mh_config_defaults(&cfg);
  hooks.cfg = &cfg;
  hooks.split_one_path = 1;
  struct mh_engine *eng;
  cr_assert_eq(mh_engine_new(&hooks, &eng), 0);
  struct fake f = {.base = {.ops = &fake_ops}};
  static const char req[] = "GET /big HTTP/1.1\r\nHost: a.test\r\n\r\n";
  struct mh_split *sp = NULL;
  uv_loop_t loop;
  uv_loop_init(&loop);
  struct mh_split_owner own = {.env = mh_engine_split_env(eng)};
  cr_assert_eq(mh_split_start(&own, &loop, &f.base, req, sizeof req - 1, NULL, &sp), -ENOTSUP);
  cr_assert_null(sp);
  cr_assert_eq(f.closes, 0, "the session keeps its upstream");
  uv_loop_close(&loop);
  mh_engine_free(eng);
}

static void close_handle(uv_handle_t *h, void *arg) {
  (void)arg;
  if (!uv_is_closing(h))
    uv_close(h, NULL);
}

/* The metrics collectors do not count a connection whose local address is unknown, and never
 * ask it for TCP_INFO. */
Test(upstream, metrics_skip_an_upstream_without_answers) {
  static struct mh_config cfg;
  mh_config_defaults(&cfg);
  uv_loop_t loop = {.data = NULL};
  uv_loop_init(&loop);
  struct mh_mstore *ms;
  struct mh_metrics *m;
  cr_assert_eq(mh_mstore_new(&ms), 0);
  cr_assert_eq(mh_metrics_new(ms, &m), 0);
  cr_assert_eq(mh_metrics_start(m, &loop, &cfg), 0);
  struct fake f = {.base = {.ops = &fake_ops}};
  struct mh_metrics_conn mc;
  memset(&mc, 0, sizeof mc);
  mh_metrics_conn_open(m, &mc, &f.base, 1000);
  cr_assert_eq(mc.registered, 0);
  mh_metrics_conn_readable(&mc);
  mh_metrics_conn_close(&mc);
  mh_metrics_stop(m);
  uv_walk(&loop, close_handle, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  cr_assert_eq(uv_loop_close(&loop), 0);
  mh_metrics_free(m);
  mh_mstore_free(ms);
}

/* The pool keeps it, tells an unknown window, and takes a pre-connect without an error answer
 * as established (its failure would show when used). */
Test(upstream, pool_keeps_it_with_an_unknown_window) {
  struct fake f = {.base = {.ops = &fake_ops}}, g = {.base = {.ops = &bare_ops}};
  struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(80)};
  inet_pton(AF_INET, "192.0.2.7", &dst.sin_addr);
  struct mh_pool *pool;
  cr_assert_eq(mh_pool_new(&pool), 0);
  mh_pool_put(pool, &f.base, "fake0", (struct sockaddr *)&dst, "", "a.test", 1);
  cr_assert_eq(f.watching, UV_READABLE);
  uint64_t idle = 0, window = 99;
  cr_assert(mh_pool_idle(pool, "fake0", (struct sockaddr *)&dst, "", "a.test", &idle, &window));
  cr_assert_eq(window, 0);
  dst.sin_port = htons(8080);
  mh_pool_put_connecting(pool, &g.base, "fake0", (struct sockaddr *)&dst, "", 1);
  cr_assert_eq(g.watching, UV_WRITABLE);
  g.base.on_event(&g.base, 0, UV_WRITABLE);
  cr_assert_eq(g.watching, UV_READABLE, "established, watched for the server's close");
  cr_assert_eq(g.closes, 0);
  mh_pool_free(pool);
}

/* TCP answers from its socket: addresses, error, RTT, receive space, TCP_INFO; unknown
 * queries and controls are -ENOTSUP. */
Test(upstream, tcp_answers) {
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t l = sizeof a;
  cr_assert_eq(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
  cr_assert_eq(listen(ls, 1), 0);
  cr_assert_eq(getsockname(ls, (struct sockaddr *)&a, &l), 0);
  int c = socket(AF_INET, SOCK_STREAM, 0);
  cr_assert_eq(connect(c, (struct sockaddr *)&a, sizeof a), 0);
  int s = accept(ls, NULL, NULL);
  cr_assert_geq(s, 0);
  uv_loop_t loop = {.data = NULL};
  uv_loop_init(&loop);
  struct mh_upstream *up = mh_upstream_tcp_adopt(&loop, NULL, c, NULL, NULL, NULL); /* no env: counted nowhere */
  cr_assert_not_null(up);

  struct sockaddr_storage peer, local;
  int len = 0, fd = -1;
  cr_assert_eq(mh_upstream_query(up, MH_UPQ_PEER, &len, &peer), 0);
  cr_assert_eq(len, (int)sizeof(struct sockaddr_in));
  cr_assert_eq(((struct sockaddr_in *)&peer)->sin_port, a.sin_port);
  cr_assert_eq(mh_upstream_query(up, MH_UPQ_LOCAL, NULL, &local), 0);
  cr_assert_eq(local.ss_family, AF_INET);
  cr_assert_eq(mh_upstream_query(up, MH_UPQ_FD, &fd, NULL), 0);
  cr_assert_eq(fd, c);
  cr_assert_eq(mh_upstream_error(up), 0);
  uint64_t hs = 1;
  cr_assert_eq(mh_upstream_query(up, MH_UPQ_HANDSHAKE_US, NULL, &hs), 0);
  cr_assert_eq(hs, 0, "an adopted connection's handshake was not timed here");
  cr_assert_gt(mh_upstream_window(up), 0);
  struct tcp_info ti;
  int tl = (int)sizeof ti;
  cr_assert_eq(mh_upstream_query(up, MH_UPQ_TCP_INFO, &tl, &ti), 0);
  cr_assert_gt(tl, 0);
  cr_assert_eq(mh_upstream_srtt_us(up), ti.tcpi_rtt);
  cr_assert_eq(mh_upstream_query(up, 999, &len, &peer), -ENOTSUP);

  int w = 16384, got = 0;
  socklen_t gl = sizeof got;
  cr_assert_eq(mh_upstream_control(up, MH_UPC_WINDOW_CLAMP, &w), 0);
  cr_assert_eq(getsockopt(c, IPPROTO_TCP, TCP_WINDOW_CLAMP, &got, &gl), 0);
  cr_assert_eq(got, w);
  cr_assert_eq(mh_upstream_control(up, MH_UPC_RCVBUF, &w), 0);
  cr_assert_eq(mh_upstream_control(up, 999, &w), -ENOTSUP);

  up->ops->close(up, 0, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  close(s);
  close(ls);
}
