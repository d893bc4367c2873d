/* Unit tests of the per-interface resolvers: fake DNS servers on loopback, a real libuv loop, bounded waits. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "fakedns.h"
#include "helpers.h"
#include "multidns/mdns.h"

#define SEC 1000000ull
#define T0 (5000 * SEC)

/* ---- fixture: one loop, a fake clock, counters for every hook ---------------------------- */

static uv_loop_t loop;
static struct mdns *m;
static uint64_t fake_now = T0;
static bool closed;
static bool finished; /* finish() ran: the test checked its own clean-up */

static struct {
  int learned[4]; /* on_learned calls per interface */
  char learned_host[128];
  int warn_not_answering, info_answering_again, info_bindtodev, errors;
  int sockets, closes, binds_to_loopback, bindtodevice, sends, sends_nosignal;
  char last_log[512];
} ev;

static uint64_t clock_cb(void *ud) {
  (void)ud;
  return fake_now;
}

static void log_cb(int level, const char *msg, void *ud) {
  (void)ud;
  snprintf(ev.last_log, sizeof ev.last_log, "%s", msg);
  if (level == MDNS_LOG_WARN && strstr(msg, "not answering"))
    ev.warn_not_answering++;
  if (level == MDNS_LOG_INFO && strstr(msg, "answering again"))
    ev.info_answering_again++;
  if (level == MDNS_LOG_INFO && strstr(msg, "SO_BINDTODEVICE"))
    ev.info_bindtodev++;
  if (level == MDNS_LOG_ERROR)
    ev.errors++;
}

static void learned_cb(struct mdns *mm, int iface, const char *host, void *ud) {
  (void)mm, (void)ud;
  cr_assert(iface >= 0 && iface < 4);
  ev.learned[iface]++;
  snprintf(ev.learned_host, sizeof ev.learned_host, "%s", host);
}

/* The socket table the shim would fill with real symbols: counting wrappers around libc. */
static int t_socket(int d, int t, int p) {
  int fd = socket(d, t, p);
  if (fd >= 0)
    ev.sockets++;
  return fd;
}
static int t_close(int fd) {
  ev.closes++;
  return close(fd);
}
static int t_bind(int fd, const struct sockaddr *sa, socklen_t l) {
  if (sa->sa_family == AF_INET && ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_LOOPBACK))
    ev.binds_to_loopback++;
  return bind(fd, sa, l);
}
static int t_setsockopt(int fd, int lv, int nm, const void *v, socklen_t l) {
  if (lv == SOL_SOCKET && nm == SO_BINDTODEVICE)
    ev.bindtodevice++;
  return setsockopt(fd, lv, nm, v, l);
}
static ssize_t t_sendmsg(int fd, const struct msghdr *mh, int flags) {
  ev.sends++;
  if (flags & MSG_NOSIGNAL)
    ev.sends_nosignal++;
  return sendmsg(fd, mh, flags);
}
static const struct mdns_sockfns sockfns = {t_socket, t_close, NULL, t_bind, t_setsockopt, NULL, t_sendmsg};

static void setup(void) {
  memset(&ev, 0, sizeof ev);
  fake_now = T0;
  closed = false;
  finished = false;
  m = NULL;
  cr_assert_eq(uv_loop_init(&loop), 0);
}

static void closed_cb(void *ud) { *(bool *)ud = true; }

static bool is_closed(void) { return closed; }

static void tick_cb(uv_timer_t *t) { (void)t; }

/* Runs the loop until pred() holds or `ms` of real time pass; returns pred(). A ticking timer
 * guarantees uv_run wakes up to check the deadline even when nothing else happens. */
static bool run_until(bool (*pred)(void), unsigned ms) {
  uint64_t end = uv_hrtime() + (uint64_t)ms * 1000000u;
  uv_timer_t tick;
  uv_timer_init(&loop, &tick);
  uv_timer_start(&tick, tick_cb, 5, 5);
  while (!pred() && uv_hrtime() < end)
    uv_run(&loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&tick, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
  return pred();
}

static void close_mdns(void) {
  if (!m)
    return;
  mdns_close(m, closed_cb, &closed);
  cr_assert(run_until(is_closed, 2000), "mdns_close completes");
  m = NULL;
}

/* Ends every test, inside the test body: Criterion ignores assertions that fail in .fini, so
 * the "nothing left behind" checks must run here to be able to fail. */
static void finish(void) {
  close_mdns();
  cr_assert_eq(uv_loop_close(&loop), 0, "no handle left on the loop");
  finished = true;
#if defined(__SANITIZE_ADDRESS__)
  /* Criterion's workers end without LeakSanitizer's exit check: ask explicitly, so a query,
   * poll or channel not freed on close fails the test. */
  cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "memory leaked (report above)");
#endif
}

/* Only for a test that failed half-way: release what it left. */
static void teardown(void) {
  if (finished)
    return;
  close_mdns();
  uv_loop_close(&loop);
}

TestSuite(resolver, .init = setup, .fini = teardown, .timeout = 30);

static struct mdns_server_list servers_of(struct fakedns *s) {
  struct mdns_server_list l;
  char csv[64];
  snprintf(csv, sizeof csv, "127.0.0.1:%u", fakedns_port(s));
  cr_assert_eq(mdns_servers_parse(csv, &l), 1);
  return l;
}

static struct mdns_iface_config lo_iface(const char *name, const struct mdns_server_list *l) {
  struct mdns_iface_config ic;
  memset(&ic, 0, sizeof ic);
  ic.name = name;
  ic.servers = l;
  ic.src4.sin_family = AF_INET;
  ic.src4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ic.src6.sin6_family = AF_INET6;
  ic.src6.sin6_addr = in6addr_loopback;
  return ic;
}

static struct mdns_config base_cfg(const struct mdns_iface_config *ifs, size_t n) {
  struct mdns_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.ifaces = ifs;
  cfg.n_ifaces = n;
  cfg.primary = 0;
  cfg.timeout_ms = 300;
  cfg.tries = 1;
  cfg.sock = &sockfns;
  cfg.log = log_cb;
  cfg.on_learned = learned_cb;
  cfg.clock = clock_cb;
  return cfg;
}

static bool none_pending(void) { return mdns_pending(m, -1) == 0; }
static bool iface1_learned(void) { return ev.learned[1] > 0; }
static bool iface0_failing(void) { return mdns_failing(m, 0); }

/* ---- tests ------------------------------------------------------------------------------- */

/* clang-format off */
static const struct fakedns_rec net0[] = {
    {"cdn.test", FAKEDNS_A, "192.0.2.10", 300},
    {"cdn.test", FAKEDNS_A, "192.0.2.11", 300},
    {"cdn.test", FAKEDNS_AAAA, "2001:db8::10", 120},
};
/* clang-format on */
/* clang-format off */
static const struct fakedns_rec net1[] = {
    {"cdn.test", FAKEDNS_A, "198.51.100.20", 60},
    {"a.test", FAKEDNS_A, "198.51.100.1", 60},
    {"b.test", FAKEDNS_A, "198.51.100.2", 60},
    {"c.test", FAKEDNS_A, "198.51.100.3", 60},
};
/* clang-format on */

Test(resolver, answers_land_in_their_own_interface_with_their_ttl) {
  struct fakedns *s0, *s1;
  cr_assert_eq(fakedns_start(net0, 3, 0, &s0), 0);
  cr_assert_eq(fakedns_start(net1, 4, 0, &s1), 0);
  struct mdns_server_list l0 = servers_of(s0), l1 = servers_of(s1);
  struct mdns_iface_config ifs[2] = {lo_iface("lo", &l0), lo_iface("lo", &l1)};
  struct mdns_config cfg = base_cfg(ifs, 2);
  cfg.neg_ttl_s = 600; /* iface 1's AAAA NODATA outlives every instant looked at below */
  cr_assert_eq(mdns_new(&loop, &cfg, &m), 0);
  cr_assert_eq(mdns_channels(m), 2);

  cr_assert_eq(mdns_harvest(m, "CDN.test.", -1, fake_now), 4, "A and AAAA on both interfaces");
  cr_assert_eq(mdns_harvest(m, "cdn.test", -1, fake_now), 0, "already in flight: not asked twice");
  cr_assert(run_until(none_pending, 3000), "all four answers arrive");

  struct sockaddr_storage out[16];
  cr_assert_eq(mdns_addrs(m, 0, "cdn.test", fake_now, out, 16), 3);
  cr_assert_str_eq(t_str(&out[0]), "2001:db8::10");
  cr_assert_str_eq(t_str(&out[1]), "192.0.2.10");
  cr_assert_str_eq(t_str(&out[2]), "192.0.2.11");
  cr_assert_eq(mdns_addrs(m, 1, "cdn.test", fake_now, out, 16), 1, "iface 1: its own answer only");
  cr_assert_str_eq(t_str(&out[0]), "198.51.100.20");
  cr_assert_eq(ev.learned[0], 2, "A then AAAA each brought news on iface 0");
  cr_assert_eq(ev.learned[1], 1, "AAAA was NODATA on iface 1");
  cr_assert_str_eq(ev.learned_host, "cdn.test");

  /* the TTLs from the wire, counted from the (fake) time the answers arrived */
  cr_assert_eq(mdns_addrs(m, 0, "cdn.test", T0 + 120 * SEC - 1, out, 16), 3);
  cr_assert_eq(mdns_addrs(m, 0, "cdn.test", T0 + 120 * SEC, out, 16), 2, "AAAA TTL 120 s");
  cr_assert_eq(mdns_addrs(m, 0, "cdn.test", T0 + 300 * SEC, out, 16), 0, "A TTL 300 s");
  cr_assert_eq(mdns_addrs(m, 1, "cdn.test", T0 + 60 * SEC - 1, out, 16), 1);
  cr_assert_eq(mdns_addrs(m, 1, "cdn.test", T0 + 60 * SEC, out, 16), 0, "A TTL 60 s");

  char host[MDNS_HOST_MAX];
  struct sockaddr_storage a = t_addr("198.51.100.20");
  cr_assert_eq(mdns_host_of(m, (struct sockaddr *)&a, host, sizeof host), 0);
  cr_assert_str_eq(host, "cdn.test");

  /* fresh answers (including iface 1's NODATA for AAAA) stop re-asking until the TTL ends */
  fake_now = T0 + 59 * SEC;
  cr_assert_eq(mdns_harvest(m, "cdn.test", -1, fake_now), 0);
  fake_now = T0 + 60 * SEC;
  cr_assert_eq(mdns_harvest(m, "cdn.test", -1, fake_now), 1, "iface 1's A expired: asked again");
  cr_assert(run_until(none_pending, 3000));
  cr_assert_eq(fakedns_queries(s0, "cdn.test", FAKEDNS_A), 1);
  cr_assert_eq(fakedns_queries(s1, "cdn.test", FAKEDNS_A), 2);
  cr_assert_eq(fakedns_queries(s1, "cdn.test", FAKEDNS_AAAA), 1);

  /* every socket went through the embedding code's table, bound to the interface */
  cr_assert_gt(ev.sockets, 0);
  cr_assert_eq(ev.binds_to_loopback, ev.sockets, "each socket bound to the interface's source address");
  cr_assert_eq(ev.bindtodevice, ev.sockets, "and to the device");
  cr_assert_eq(ev.sends, 5, "one packet per query, each through the table");
  cr_assert_eq(ev.sends_nosignal, ev.sends, "never SIGPIPE the program");
  close_mdns();
  cr_assert_eq(ev.closes, ev.sockets, "and closed through it");
  cr_assert_eq(ev.errors, 0, "%s", ev.last_log);
  fakedns_stop(s0);
  fakedns_stop(s1);
  finish();
}

Test(resolver, dead_server_blocks_no_one_and_is_logged_once) {
  struct fakedns *dead, *live;
  cr_assert_eq(fakedns_start(net0, 3, 1, &dead), 0);
  cr_assert_eq(fakedns_start(net1, 4, 0, &live), 0);
  struct mdns_server_list l0 = servers_of(dead), l1 = servers_of(live);
  struct mdns_iface_config ifs[2] = {lo_iface("lo", &l0), lo_iface("lo", &l1)};
  struct mdns_config cfg = base_cfg(ifs, 2);
  cfg.timeout_ms = 400;
  cr_assert_eq(mdns_new(&loop, &cfg, &m), 0);

  cr_assert_eq(mdns_harvest(m, "a.test", -1, fake_now), 4);
  cr_assert(run_until(iface1_learned, 3000), "the live interface answers");
  cr_assert_eq(mdns_pending(m, 0), 2, "while the dead one is still waiting: nobody waited for it");
  cr_assert_not(mdns_failing(m, 0));
  struct sockaddr_storage out[4];
  cr_assert_eq(mdns_addrs(m, 1, "a.test", fake_now, out, 4), 1);

  cr_assert(run_until(iface0_failing, 3000), "the dead interface times out");
  cr_assert(run_until(none_pending, 3000));
  cr_assert_eq(ev.warn_not_answering, 1, "two failed queries, one log line");
  cr_assert_eq(mdns_addrs(m, 0, "a.test", fake_now, out, 4), 0);

  /* more lookups while it is dead: still one line, and only one probe at a time goes there */
  cr_assert_eq(mdns_harvest(m, "b.test", -1, fake_now), 3, "b: A+AAAA on iface 1, one probe on iface 0");
  cr_assert_eq(mdns_harvest(m, "c.test", -1, fake_now), 2, "c: nothing more for iface 0");
  cr_assert(run_until(none_pending, 3000));
  cr_assert_eq(ev.warn_not_answering, 1);
  cr_assert_eq(fakedns_queries(dead, NULL, 0), 3, "2 for a.test + 1 probe");
  cr_assert_eq(ev.learned[1], 3, "a, b and c all learned on the live interface");

  /* it comes back: one line saying so, and answers flow again */
  fakedns_set_silent(dead, 0);
  cr_assert_eq(mdns_harvest(m, "cdn.test", 1, fake_now), 1, "one probe while still marked failing");
  cr_assert(run_until(none_pending, 3000));
  cr_assert_not(mdns_failing(m, 0));
  cr_assert_eq(ev.info_answering_again, 1);
  cr_assert_eq(mdns_harvest(m, "cdn.test", 1, fake_now), 1, "the AAAA not asked before");
  cr_assert(run_until(none_pending, 3000));
  cr_assert_eq(mdns_addrs(m, 0, "cdn.test", fake_now, out, 4), 3);
  cr_assert_eq(ev.warn_not_answering, 1);
  close_mdns();
  fakedns_stop(dead);
  fakedns_stop(live);
  finish();
}

Test(resolver, nxdomain_is_remembered_not_a_failure) {
  struct fakedns *s;
  cr_assert_eq(fakedns_start(net1, 4, 0, &s), 0);
  struct mdns_server_list l = servers_of(s);
  struct mdns_iface_config ifs[1] = {lo_iface("lo", &l)};
  struct mdns_config cfg = base_cfg(ifs, 1);
  cfg.neg_ttl_s = 10;
  cr_assert_eq(mdns_new(&loop, &cfg, &m), 0);
  cr_assert_eq(mdns_harvest(m, "nosuch.test", -1, fake_now), 2);
  cr_assert(run_until(none_pending, 3000));
  cr_assert_not(mdns_failing(m, 0));
  cr_assert_eq(ev.warn_not_answering, 0);
  cr_assert_eq(mdns_harvest(m, "nosuch.test", -1, fake_now + 10 * SEC - 1), 0, "negative answer cached");
  cr_assert_eq(mdns_harvest(m, "nosuch.test", -1, fake_now + 10 * SEC), 2, "until neg_ttl_s");
  cr_assert(run_until(none_pending, 3000));
  close_mdns();
  fakedns_stop(s);
  finish();
}

/* CDNs that steer per query answer with TTL 0. Stored as-is such an answer is expired on
 * arrival: no on_learned, and mdns_addrs returns nothing when the split asks a moment later,
 * so that network's replica is never used. It must serve the lookup it answered, briefly. */
/* clang-format off */
static const struct fakedns_rec ttl0[] = {
    {"steer.test", FAKEDNS_A, "198.51.100.77", 0},
    {"steer.test", FAKEDNS_AAAA, "2001:db8::77", 1},
};
/* clang-format on */

Test(resolver, ttl0_answer_serves_the_lookup_it_answered_then_expires) {
  struct fakedns *s;
  cr_assert_eq(fakedns_start(ttl0, 2, 0, &s), 0);
  struct mdns_server_list l = servers_of(s);
  struct mdns_iface_config ifs[1] = {lo_iface("lo", &l)};
  struct mdns_config cfg = base_cfg(ifs, 1);
  cr_assert_eq(mdns_new(&loop, &cfg, &m), 0);
  cr_assert_eq(mdns_harvest(m, "steer.test", -1, fake_now), 2);
  cr_assert(run_until(none_pending, 3000));
  cr_assert_eq(ev.learned[0], 2, "both answers bring news (on_learned lets the split add legs)");
  struct sockaddr_storage out[16];
  /* the split asks once the probe's answer is in: some time after the DNS answer */
  cr_assert_eq(mdns_addrs(m, 0, "steer.test", fake_now + 1500000, out, 16), 2,
               "TTL 0 and TTL 1 still usable 1.5 s later (default floor 2 s)");
  cr_assert_str_eq(t_str(&out[0]), "2001:db8::77");
  cr_assert_str_eq(t_str(&out[1]), "198.51.100.77");
  cr_assert_eq(mdns_addrs(m, 0, "steer.test", fake_now + 2 * SEC, out, 16), 0, "and never served past the floor");
  cr_assert_eq(mdns_harvest(m, "steer.test", -1, fake_now + 2 * SEC - 1), 0, "no re-ask within it");
  cr_assert_eq(mdns_harvest(m, "steer.test", -1, fake_now + 2 * SEC), 2, "asked again after");
  cr_assert(run_until(none_pending, 3000));
  close_mdns();
  fakedns_stop(s);

  /* the floor is a tunable: a caller may stretch it, the wire TTL still wins above it */
  memset(&ev, 0, sizeof ev);
  cr_assert_eq(fakedns_start(ttl0, 2, 0, &s), 0);
  l = servers_of(s);
  ifs[0] = lo_iface("lo", &l);
  cfg = base_cfg(ifs, 1);
  cfg.min_ttl_s = 5;
  cr_assert_eq(mdns_new(&loop, &cfg, &m), 0);
  cr_assert_eq(mdns_harvest(m, "steer.test", -1, fake_now), 2);
  cr_assert(run_until(none_pending, 3000));
  cr_assert_eq(mdns_addrs(m, 0, "steer.test", fake_now + 5 * SEC - 1, out, 16), 2);
  cr_assert_eq(mdns_addrs(m, 0, "steer.test", fake_now + 5 * SEC, out, 16), 0);
  close_mdns();
  fakedns_stop(s);
  finish();
}

Test(resolver, literals_except_iface_and_host_headers) {
  struct fakedns *s;
  cr_assert_eq(fakedns_start(net1, 4, 0, &s), 0);
  struct mdns_server_list l = servers_of(s);
  struct mdns_iface_config ifs[2] = {lo_iface("lo", &l), lo_iface("lo", &l)};
  struct mdns_config cfg = base_cfg(ifs, 2);
  cr_assert_eq(mdns_new(&loop, &cfg, &m), 0);
  cr_assert_eq(mdns_harvest(m, "192.0.2.1", -1, fake_now), 0, "IPv4 literal");
  cr_assert_eq(mdns_harvest(m, "2001:db8::1", -1, fake_now), 0, "IPv6 literal");
  cr_assert_eq(mdns_harvest(m, "", -1, fake_now), -EINVAL);
  cr_assert_eq(mdns_harvest(m, "a.test", 0, fake_now), 2, "primary skipped: the program asks there");
  cr_assert_eq(mdns_pending(m, 0), 0);
  const char hdr[] = " [2001:db8::1]:8080 ";
  cr_assert_eq(mdns_harvest_host_header(m, hdr, strlen(hdr), fake_now), 0);
  cr_assert_eq(mdns_harvest_host_header(m, "192.0.2.1:80", 12, fake_now), 0);
  /* a literal-IP program: no lookup before, so every interface is asked, the primary too */
  cr_assert_eq(mdns_harvest_host_header(m, "b.test:8080\r\n", 11, fake_now), 4);
  /* the program did resolve c.test: its answer stands for the primary */
  struct sockaddr_storage prog = t_addr("203.0.113.3");
  cr_assert_eq(mdns_note_program(m, "c.test", &prog, 1, fake_now), 1);
  cr_assert_eq(ev.learned[0], 1);
  cr_assert_eq(mdns_harvest_host_header(m, "c.test", 6, fake_now), 2, "primary not asked again");
  cr_assert(run_until(none_pending, 3000));
  struct sockaddr_storage out[4];
  cr_assert_eq(mdns_addrs(m, 0, "c.test", fake_now, out, 4), 1);
  cr_assert_str_eq(t_str(&out[0]), "203.0.113.3");
  cr_assert_eq(mdns_addrs(m, 1, "c.test", fake_now, out, 4), 1);
  cr_assert_str_eq(t_str(&out[0]), "198.51.100.3", "the program's answer stays on the primary");
  cr_assert_eq(mdns_addrs(m, 0, "b.test", fake_now, out, 4), 1);
  close_mdns();
  fakedns_stop(s);
  finish();
}

Test(resolver, program_answer_first_and_unreachable_families_filtered) {
  static const struct fakedns_rec recs[] = {
      {"p.test", FAKEDNS_A, "192.0.2.1", 60},
      {"p.test", FAKEDNS_A, "192.0.2.2", 60},
      {"p.test", FAKEDNS_AAAA, "2001:db8::1", 60},
  };
  struct fakedns *s;
  cr_assert_eq(fakedns_start(recs, 3, 0, &s), 0);
  struct mdns_server_list l = servers_of(s);
  /* an interface that does not exist: SO_BINDTODEVICE fails, the IPv4 source still binds, and
   * it has no IPv6 source, so IPv6 answers are unusable there */
  struct mdns_iface_config ifs[1] = {lo_iface("mdnsnone0", &l)};
  ifs[0].src6.sin6_family = 0;
  struct mdns_config cfg = base_cfg(ifs, 1);
  cr_assert_eq(mdns_new(&loop, &cfg, &m), 0);
  struct sockaddr_storage prog[2] = {t_addr("192.0.2.2"), t_addr("192.0.2.9")};
  cr_assert_eq(mdns_note_program(m, "p.test", prog, 2, fake_now), 2);
  cr_assert_eq(mdns_harvest(m, "p.test", -1, fake_now), 2);
  cr_assert(run_until(none_pending, 3000));
  struct sockaddr_storage out[8];
  cr_assert_eq(mdns_addrs(m, 0, "p.test", fake_now, out, 8), 3);
  cr_assert_str_eq(t_str(&out[0]), "192.0.2.2");
  cr_assert_str_eq(t_str(&out[1]), "192.0.2.9");
  cr_assert_str_eq(t_str(&out[2]), "192.0.2.1", "2001:db8::1 filtered: no IPv6 source here");
  cr_assert_eq(mdns_addrs(m, 0, "p.test", fake_now + 60 * SEC, out, 8), 0, "program answer TTL 60 s");
  cr_assert_eq(ev.info_bindtodev, 1, "the device bind failure is said once");
  cr_assert_eq(ev.binds_to_loopback, ev.sockets);
  close_mdns();
  fakedns_stop(s);
  finish();
}

Test(resolver, close_with_queries_in_flight) {
  struct fakedns *dead;
  cr_assert_eq(fakedns_start(net0, 3, 1, &dead), 0);
  struct mdns_server_list l = servers_of(dead);
  struct mdns_iface_config ifs[1] = {lo_iface("lo", &l)};
  struct mdns_config cfg = base_cfg(ifs, 1);
  cfg.timeout_ms = 5000;
  cr_assert_eq(mdns_new(&loop, &cfg, &m), 0);
  cr_assert_eq(mdns_harvest(m, "cdn.test", -1, fake_now), 2);
  uv_run(&loop, UV_RUN_NOWAIT);
  uint64_t t = uv_hrtime();
  close_mdns();
  cr_assert_lt(uv_hrtime() - t, 2000000000ull, "close does not wait for the query timeout");
  cr_assert_eq(ev.closes, ev.sockets);
  cr_assert_eq(ev.warn_not_answering, 0, "cancelled queries are not failures");
  fakedns_stop(dead);
  finish();
}

static void close_from_learned(struct mdns *mm, int iface, const char *host, void *ud) {
  learned_cb(mm, iface, host, ud);
  mdns_close(mm, closed_cb, &closed);
}

Test(resolver, close_from_inside_on_learned) {
  struct fakedns *s;
  cr_assert_eq(fakedns_start(net0, 3, 0, &s), 0);
  struct mdns_server_list l = servers_of(s);
  struct mdns_iface_config ifs[1] = {lo_iface("lo", &l)};
  struct mdns_config cfg = base_cfg(ifs, 1);
  cfg.on_learned = close_from_learned;
  fakedns_set_batch(s, 2); /* the AAAA answer is read in the same turn, after the close */
  cr_assert_eq(mdns_new(&loop, &cfg, &m), 0);
  cr_assert_eq(mdns_harvest(m, "cdn.test", -1, fake_now), 2);
  cr_assert(run_until(is_closed, 3000));
  cr_assert_eq(ev.learned[0], 1, "nothing reported after close");
  m = NULL;
  fakedns_stop(s);
  finish();
}

Test(resolver, configuration_errors) {
  struct mdns_iface_config ifs[1];
  memset(ifs, 0, sizeof ifs);
  ifs[0].name = "lo";
  ifs[0].dns = "1.2.3.4;5.6.7.8";
  struct mdns_config cfg = base_cfg(ifs, 1);
  cr_assert_eq(mdns_new(&loop, &cfg, &m), -EINVAL, "malformed config value");
  cr_assert_eq(ev.errors, 1, "and it says why");
  cr_assert_eq(m, NULL);
  cfg.n_ifaces = 0;
  cr_assert_eq(mdns_new(&loop, &cfg, &m), -EINVAL);
  cfg.n_ifaces = 1;
  cfg.primary = 1;
  cr_assert_eq(mdns_new(&loop, &cfg, &m), -EINVAL);
  finish();
}

Test(resolver, interface_without_servers_gets_no_channel) {
  static const char *resolv = "/nonexistent/resolv.conf";
  struct mdns_discovery d = {resolv, "/nonexistent", "/nonexistent", "/nonexistent", NULL};
  struct mdns_iface_config ifs[1];
  memset(ifs, 0, sizeof ifs);
  ifs[0].name = "lo";
  struct mdns_config cfg = base_cfg(ifs, 1);
  cfg.discovery = &d;
  cr_assert_eq(mdns_new(&loop, &cfg, &m), 0);
  cr_assert_eq(mdns_channels(m), 0);
  cr_assert(strstr(ev.last_log, "no DNS servers") != NULL, "%s", ev.last_log);
  cr_assert_eq(mdns_harvest(m, "a.test", -1, fake_now), 0);
  finish();
}

static char env_val[64];
static const char *env_lo(const char *name) { return strcmp(name, "MHTTP_DNS_lo") == 0 ? env_val : NULL; }

Test(resolver, discovery_feeds_the_channels_and_says_what_it_found) {
  struct fakedns *s;
  cr_assert_eq(fakedns_start(net1, 4, 0, &s), 0);
  snprintf(env_val, sizeof env_val, "127.0.0.1:%u", fakedns_port(s));
  char dir[] = "/tmp/mdns-resolver-XXXXXX", route[64];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(route, sizeof route, "%s/route", dir);
  FILE *f = fopen(route, "w");
  cr_assert_not_null(f);
  fputs("Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"
        "lo\t00000000\t0100007F\t0003\t0\t0\t0\t00000000\t0\t0\t0\n",
        f);
  fclose(f);
  struct mdns_discovery d = {"/nonexistent", "/nonexistent", route, "/nonexistent", env_lo};
  /* "mdnsnone0" has no servers anywhere; "lo" gets them from MHTTP_DNS_lo and holds the
   * default route, so it is the primary */
  struct mdns_iface_config ifs[2];
  memset(ifs, 0, sizeof ifs);
  ifs[0].name = "mdnsnone0";
  ifs[1].name = "lo";
  struct mdns_config cfg = base_cfg(ifs, 2);
  cfg.primary = -1;
  cfg.discovery = &d;
  cr_assert_eq(mdns_new(&loop, &cfg, &m), 0);
  unlink(route);
  rmdir(dir);
  cr_assert_eq(mdns_channels(m), 1);
  char want[128];
  snprintf(want, sizeof want, "multidns: lo: DNS servers %s (from environment), primary", env_val);
  cr_assert_str_eq(ev.last_log, want);
  struct sockaddr_storage prog = t_addr("203.0.113.7");
  cr_assert_eq(mdns_note_program(m, "a.test", &prog, 1, fake_now), 1);
  struct sockaddr_storage out[4];
  cr_assert_eq(mdns_addrs(m, 1, "a.test", fake_now, out, 4), 1, "the program's answer is on lo");
  cr_assert_eq(mdns_addrs(m, 0, "a.test", fake_now, out, 4), 0);
  cr_assert_eq(mdns_harvest(m, "a.test", -1, fake_now), 2, "only lo has a resolver");
  cr_assert(run_until(none_pending, 3000));
  cr_assert_eq(mdns_addrs(m, 1, "a.test", fake_now, out, 4), 2, "the program's answer, then lo's own");
  cr_assert_str_eq(t_str(&out[0]), "203.0.113.7");
  cr_assert_str_eq(t_str(&out[1]), "198.51.100.1");
  cr_assert_eq(ev.binds_to_loopback, ev.sockets, "lo's source address found with getifaddrs");
  close_mdns();
  fakedns_stop(s);
  finish();
}

Test(resolver, no_device_and_no_source_address_means_no_query) {
  struct fakedns *s;
  cr_assert_eq(fakedns_start(net1, 4, 0, &s), 0);
  struct mdns_server_list l = servers_of(s);
  /* an interface that does not exist and has no address: the query would have to leave
   * through some other network, so it must not leave at all */
  struct mdns_iface_config ifs[1];
  memset(ifs, 0, sizeof ifs);
  ifs[0].name = "mdnsnone0";
  ifs[0].servers = &l;
  struct mdns_config cfg = base_cfg(ifs, 1);
  cr_assert_eq(mdns_new(&loop, &cfg, &m), 0);
  mdns_harvest(m, "a.test", -1, fake_now);
  cr_assert(run_until(none_pending, 3000));
  uv_sleep(100); /* give a stray packet time to reach the server thread */
  cr_assert_eq(fakedns_queries(s, NULL, 0), 0, "nothing was sent");
  cr_assert_eq(ev.binds_to_loopback, 0);
  cr_assert(mdns_failing(m, 0));
  cr_assert_eq(ev.warn_not_answering, 1);
  close_mdns();
  cr_assert_eq(ev.closes, ev.sockets, "refused sockets are closed");
  fakedns_stop(s);
  finish();
}
