/* The TLS transport without a network: libcurl's option strings, the pool's keying by transport, the made-up readable event's rule, and a refused or cut loopback connect reported as curl reports it. */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mh_config.h"
#include "mh_path.h"
#include "mh_upstream.h"
#include "mh_upstream_tls.h"

static struct sockaddr_in v4(const char *a, unsigned port) {
  struct sockaddr_in s = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, a, &s.sin_addr);
  return s;
}

Test(tls, connect_to_pins_the_url_host_to_the_chosen_address) {
  struct mh_tls t;
  mh_tls_init(&t, "a.test", 443, NULL, 0);
  struct sockaddr_in d = v4("10.210.2.10", 443);
  char buf[128];
  cr_assert_eq(mh_tls_connect_to(buf, sizeof buf, &t, (struct sockaddr *)&d), 0);
  cr_assert_str_eq(buf, "a.test:443:10.210.2.10:443");
  struct sockaddr_in6 d6 = {.sin6_family = AF_INET6, .sin6_port = htons(8443)};
  inet_pton(AF_INET6, "fd6d:7462:0:202::10", &d6.sin6_addr);
  cr_assert_eq(mh_tls_connect_to(buf, sizeof buf, &t, (struct sockaddr *)&d6), 0);
  cr_assert_str_eq(buf, "a.test:443:[fd6d:7462:0:202::10]:8443", "an IPv6 address is bracketed");
  cr_assert_eq(mh_tls_connect_to(buf, 10, &t, (struct sockaddr *)&d), -ENAMETOOLONG);
}

Test(tls, interface_binds_the_path_source_address) {
  char buf[64];
  struct sockaddr_in s = v4("10.201.1.2", 0);
  cr_assert_eq(mh_tls_interface(buf, sizeof buf, (struct sockaddr *)&s), 0);
  cr_assert_str_eq(buf, "host!10.201.1.2");
  struct sockaddr_in6 s6 = {.sin6_family = AF_INET6};
  inet_pton(AF_INET6, "fd6d:7462:0:1::2", &s6.sin6_addr);
  cr_assert_eq(mh_tls_interface(buf, sizeof buf, (struct sockaddr *)&s6), 0);
  cr_assert_str_eq(buf, "host!fd6d:7462:0:1::2");
  cr_assert_eq(mh_tls_interface(buf, sizeof buf, NULL), 0);
  cr_assert_str_eq(buf, "", "no source: libcurl's choice");
  cr_assert_eq(mh_tls_interface(buf, 8, (struct sockaddr *)&s), -ENAMETOOLONG);
}

/* One event per read that gave data, and only to an owner watching for readable. */
Test(tls, a_readable_event_is_owed_only_after_a_read_that_gave_data) {
  static const struct {
    int watching, rx_more, owed;
  } rows[] = {
      {UV_READABLE, 1, 1}, {UV_READABLE | UV_WRITABLE, 1, 1}, {UV_READABLE, 0, 0}, {UV_WRITABLE, 1, 0}, {0, 1, 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    cr_assert_eq(mh_tls_owes_readable(rows[i].watching, rows[i].rx_more), rows[i].owed, "row %zu", i);
}

Test(tls, pool_key_is_the_transport_and_the_certificate_name) {
  char plain[MH_POOL_XPORT_MAX], a[MH_POOL_XPORT_MAX], a2[MH_POOL_XPORT_MAX], b[MH_POOL_XPORT_MAX],
      k[MH_POOL_XPORT_MAX], ca[MH_POOL_XPORT_MAX];
  struct mh_tls ta, tA, tb, tk, tca;
  mh_tls_init(&ta, "a.test", 443, NULL, 0);
  mh_tls_init(&tA, "A.Test", 443, NULL, 0);
  mh_tls_init(&tb, "b.test", 443, NULL, 0);
  mh_tls_init(&tk, "a.test", 443, NULL, 1);
  mh_tls_init(&tca, "a.test", 443, "/tmp/ca.pem", 0);
  cr_assert_eq(mh_pool_xport_key(NULL, plain, sizeof plain), 0);
  cr_assert_str_eq(plain, "", "plain TCP keys as before");
  cr_assert_eq(mh_pool_xport_key(&ta, a, sizeof a), 0);
  cr_assert_eq(mh_pool_xport_key(&tA, a2, sizeof a2), 0);
  cr_assert_eq(mh_pool_xport_key(&tb, b, sizeof b), 0);
  cr_assert_eq(mh_pool_xport_key(&tk, k, sizeof k), 0);
  cr_assert_eq(mh_pool_xport_key(&tca, ca, sizeof ca), 0);
  cr_assert(mh_pool_same_xport(a, a2), "a host name is case-insensitive");
  cr_assert_not(mh_pool_same_xport(plain, a), "a plain connection never serves TLS");
  cr_assert_not(mh_pool_same_xport(a, plain), "nor a TLS one plain HTTP");
  cr_assert_not(mh_pool_same_xport(a, b), "a certificate checked for a.test is not b.test's");
  cr_assert_not(mh_pool_same_xport(k, a), "an unchecked connection never serves a checked transfer");
  cr_assert_not(mh_pool_same_xport(ca, a), "nor one checked against another CA");
  cr_assert_eq(mh_pool_xport_key(&ta, a, 8), -ENAMETOOLONG);
}

/* A pooled upstream as the TLS transport looks to the pool: readable with nothing to read (a
 * session ticket) until told otherwise. */
struct fake {
  struct mh_upstream base;
  int watching, closes;
  ssize_t next_recv;
};
static int fake_watch(struct mh_upstream *up, int events) {
  ((struct fake *)up)->watching = events;
  return 0;
}
static ssize_t fake_recv(struct mh_upstream *up, void *buf, size_t len) {
  (void)buf, (void)len;
  return ((struct fake *)up)->next_recv;
}
static void fake_close(struct mh_upstream *up, int abort, mh_upstream_closed_cb cb) {
  (void)abort;
  ((struct fake *)up)->closes++;
  if (cb)
    cb(up);
}
static const struct mh_upstream_ops fake_ops = {
    .name = "fake", .watch = fake_watch, .recv = fake_recv, .close = fake_close};

Test(tls, pool_hands_a_connection_only_to_its_own_transport) {
  struct mh_tls ta, tb;
  mh_tls_init(&ta, "a.test", 443, NULL, 0);
  mh_tls_init(&tb, "b.test", 443, NULL, 0);
  char ka[MH_POOL_XPORT_MAX], kb[MH_POOL_XPORT_MAX];
  mh_pool_xport_key(&ta, ka, sizeof ka);
  mh_pool_xport_key(&tb, kb, sizeof kb);
  struct sockaddr_in dst = v4("192.0.2.7", 443);
  struct mh_pool *pool;
  cr_assert_eq(mh_pool_new(&pool), 0);
  struct fake p = {.base = {.ops = &fake_ops}, .next_recv = -EAGAIN}, t = p;
  mh_pool_put(pool, &p.base, "wifi0", (struct sockaddr *)&dst, "", "a.test", 1);
  mh_pool_put(pool, &t.base, "wifi0", (struct sockaddr *)&dst, ka, "a.test", 1);
  cr_assert_null(mh_pool_take(pool, "wifi0", (struct sockaddr *)&dst, kb, "a.test", NULL, NULL, NULL),
                 "b.test's TLS transfer gets neither a.test's nor a plain connection");
  cr_assert(mh_pool_has(pool, "wifi0", (struct sockaddr *)&dst, ka, "a.test"));
  /* a record without data on the idle TLS connection: it stays; data or a close ends it */
  t.base.on_event(&t.base, 0, UV_READABLE);
  cr_assert_eq(t.closes, 0, "readable with nothing to read is not a close");
  cr_assert_eq(mh_pool_take(pool, "wifi0", (struct sockaddr *)&dst, ka, "a.test", NULL, NULL, NULL), &t.base);
  cr_assert_eq(mh_pool_take(pool, "wifi0", (struct sockaddr *)&dst, "", "a.test", NULL, NULL, NULL), &p.base);
  mh_pool_put(pool, &t.base, "wifi0", (struct sockaddr *)&dst, ka, "a.test", 1);
  t.next_recv = 0;
  t.base.on_event(&t.base, 0, UV_READABLE);
  cr_assert_eq(t.closes, 1, "the server's close ends it");
  cr_assert_not(mh_pool_has(pool, "wifi0", (struct sockaddr *)&dst, ka, "a.test"));
  mh_pool_free(pool);
}

/* ---- loopback connects through libcurl -------------------------------------------------- */

struct outcome {
  int events, calls, timed_out;
};
static void give_up(uv_timer_t *t) { ((struct outcome *)t->data)->timed_out = 1; }
static void on_event(struct mh_upstream *up, int status, int events) {
  (void)status;
  struct outcome *o = up->owner;
  o->events |= events;
  o->calls++;
}

/* Connects over TLS to 127.0.0.1:port, waits for the outcome (at most 10 s), then checks it
 * failed with curl's code `code` and the engine's -errno `err`, and closes it. */
static void connect_fails(unsigned port, int code, int err) {
  uv_loop_t loop;
  cr_assert_eq(uv_loop_init(&loop), 0);
  struct mh_upstream_env env = {0}; /* the multi handle's home; nothing else lent */
  struct mh_tls tls;
  mh_tls_init(&tls, "localhost", port, NULL, 0);
  struct sockaddr_in dst = v4("127.0.0.1", port);
  struct outcome o = {0};
  int e = 0;
  struct mh_upstream *up =
      mh_upstream_tls_connect(&loop, &env, NULL, NULL, (struct sockaddr *)&dst, &tls, on_event, &o, &e);
  cr_assert_not_null(up, "%s", strerror(-e));
  up->ops->watch(up, UV_WRITABLE);
  uv_timer_t guard;
  uv_timer_init(&loop, &guard);
  guard.data = &o;
  uv_timer_start(&guard, give_up, 10000, 0);
  while (!o.calls && !o.timed_out)
    uv_run(&loop, UV_RUN_ONCE);
  cr_assert_not(o.timed_out, "an outcome within 10 s");
  cr_assert_eq(o.events, UV_WRITABLE, "the outcome comes as writable");
  int c = -1;
  const char *msg = NULL;
  cr_assert_eq(mh_upstream_query(up, MH_UPQ_CURL_CODE, &c, NULL), 0);
  cr_assert_eq(mh_upstream_query(up, MH_UPQ_ERRMSG, NULL, &msg), 0);
  cr_assert_eq(c, code, "curl code %d (%s)", c, msg);
  cr_assert(msg && msg[0], "libcurl's words for it");
  cr_assert_eq(mh_upstream_error(up), err);
  char b[8];
  cr_assert_lt(up->ops->recv(up, b, sizeof b), 0);
  cr_assert_eq(mh_upstream_query(up, MH_UPQ_PEER, NULL, &dst), -ENOTCONN);
  up->ops->close(up, 0, NULL);
  uv_close((uv_handle_t *)&guard, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  cr_assert_eq(uv_loop_close(&loop), 0, "every handle of the transport and its multi closed");
  cr_assert_null(env.tls, "the multi handle freed with its last connection");
}

Test(tls, a_refused_connect_fails_as_curl_says_7) {
  int s = socket(AF_INET, SOCK_STREAM, 0); /* a port nobody listens on: bound, not listening */
  struct sockaddr_in a = v4("127.0.0.1", 0);
  socklen_t l = sizeof a;
  cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
  cr_assert_eq(getsockname(s, (struct sockaddr *)&a, &l), 0);
  connect_fails(ntohs(a.sin_port), 7 /* CURLE_COULDNT_CONNECT */, -ECONNREFUSED);
  close(s);
}

/* The server: reads the ClientHello, closes. */
static void *hangup(void *arg) {
  int ls = *(int *)arg;
  int c = accept(ls, NULL, NULL);
  char b[512];
  if (c >= 0) {
    (void)recv(c, b, sizeof b, 0);
    close(c);
  }
  return NULL;
}

Test(tls, a_server_that_closes_in_the_handshake_fails_as_curl_says_35) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = v4("127.0.0.1", 0);
  socklen_t l = sizeof a;
  cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
  cr_assert_eq(listen(s, 1), 0);
  cr_assert_eq(getsockname(s, (struct sockaddr *)&a, &l), 0);
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, hangup, &s), 0);
  connect_fails(ntohs(a.sin_port), 35 /* CURLE_SSL_CONNECT_ERROR */, -EPROTO);
  pthread_join(th, NULL);
  close(s);
}
