/* The engine's multiDNS glue, pure parts: the bounded lookup queue, the resolvers' interface list, per-interface address selection. */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mh_config.h"
#include "mh_dns.h"

static struct sockaddr_storage v4(const char *a, uint16_t port) {
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  struct sockaddr_in *s = (struct sockaddr_in *)&ss;
  s->sin_family = AF_INET;
  s->sin_port = htons(port);
  cr_assert_eq(inet_pton(AF_INET, a, &s->sin_addr), 1);
  return ss;
}

static struct sockaddr_storage v6(const char *a, uint16_t port) {
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
  s->sin6_family = AF_INET6;
  s->sin6_port = htons(port);
  cr_assert_eq(inet_pton(AF_INET6, a, &s->sin6_addr), 1);
  return ss;
}

static const char *ntop(const struct sockaddr_storage *ss, char *buf) {
  const void *a = ss->ss_family == AF_INET ? (const void *)&((const struct sockaddr_in *)ss)->sin_addr
                                           : (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr;
  return inet_ntop(ss->ss_family, a, buf, 64);
}

static uint16_t port_of(const struct sockaddr_storage *ss) {
  return ntohs(ss->ss_family == AF_INET ? ((const struct sockaddr_in *)ss)->sin_port
                                        : ((const struct sockaddr_in6 *)ss)->sin6_port);
}

/* ---- ring --------------------------------------------------------------------------------- */

Test(dns_ring, fifo_order_and_contents) {
  struct mh_dns_ring *r = calloc(1, sizeof *r);
  struct sockaddr_storage a[2] = {v4("10.0.0.1", 0), v6("fd00::1", 0)};
  cr_assert_eq(mh_dns_ring_push(r, "a.test", a, 2, 100), 0);
  cr_assert_eq(mh_dns_ring_push(r, "b.test", a, 1, 200), 0);
  struct mh_dns_note n;
  char buf[64];
  cr_assert_eq(mh_dns_ring_pop(r, &n), 1);
  cr_assert_str_eq(n.host, "a.test");
  cr_assert_eq(n.t_us, 100);
  cr_assert_eq(n.n, 2);
  cr_assert_str_eq(ntop(&n.addr[1], buf), "fd00::1");
  cr_assert_eq(mh_dns_ring_pop(r, &n), 1);
  cr_assert_str_eq(n.host, "b.test");
  cr_assert_eq(n.n, 1);
  cr_assert_eq(mh_dns_ring_pop(r, &n), 0);
  free(r);
}

Test(dns_ring, full_drops_the_oldest_never_grows) {
  struct mh_dns_ring *r = calloc(1, sizeof *r);
  struct sockaddr_storage a = v4("10.0.0.1", 0);
  char host[32];
  for (int i = 0; i < MH_DNS_QUEUE; i++) {
    snprintf(host, sizeof host, "h%d.test", i);
    cr_assert_eq(mh_dns_ring_push(r, host, &a, 1, (uint64_t)i), 0);
  }
  cr_assert_eq(r->len, MH_DNS_QUEUE);
  /* two more: h0 and h1 go, the newest stay */
  cr_assert_eq(mh_dns_ring_push(r, "new1.test", &a, 1, 1000), 1);
  cr_assert_eq(mh_dns_ring_push(r, "new2.test", &a, 1, 1001), 1);
  cr_assert_eq(r->len, MH_DNS_QUEUE);
  cr_assert_eq(r->dropped, 2);
  struct mh_dns_note n;
  cr_assert_eq(mh_dns_ring_pop(r, &n), 1);
  cr_assert_str_eq(n.host, "h2.test");
  int count = 1;
  const char *last = NULL;
  static struct mh_dns_note keep;
  while (mh_dns_ring_pop(r, &keep) == 1) {
    count++;
    last = keep.host;
  }
  cr_assert_eq(count, MH_DNS_QUEUE);
  cr_assert_str_eq(last, "new2.test");
  free(r);
}

Test(dns_ring, refuses_what_teaches_nothing) {
  struct mh_dns_ring *r = calloc(1, sizeof *r);
  struct sockaddr_storage a = v4("10.0.0.1", 0), un;
  memset(&un, 0, sizeof un);
  un.ss_family = AF_UNIX;
  char longhost[MH_DNS_HOST_MAX + 1];
  memset(longhost, 'x', sizeof longhost - 1);
  longhost[sizeof longhost - 1] = 0;
  cr_assert_eq(mh_dns_ring_push(r, NULL, &a, 1, 0), -EINVAL);
  cr_assert_eq(mh_dns_ring_push(r, "", &a, 1, 0), -EINVAL);
  cr_assert_eq(mh_dns_ring_push(r, longhost, &a, 1, 0), -EINVAL);
  cr_assert_eq(mh_dns_ring_push(r, "a.test", &a, 0, 0), -EINVAL);
  cr_assert_eq(mh_dns_ring_push(r, "a.test", &un, 1, 0), -EINVAL); /* no inet address */
  cr_assert_eq(r->len, 0);
  /* more addresses than a note holds: the first MH_DNS_NOTE_ADDRS inet ones, in order */
  struct sockaddr_storage many[12];
  char s[32];
  for (int i = 0; i < 12; i++) {
    snprintf(s, sizeof s, "10.0.0.%d", i + 1);
    many[i] = i == 0 ? un : v4(s, 0);
  }
  cr_assert_eq(mh_dns_ring_push(r, "a.test", many, 12, 0), 0);
  struct mh_dns_note n;
  char buf[64];
  cr_assert_eq(mh_dns_ring_pop(r, &n), 1);
  cr_assert_eq(n.n, MH_DNS_NOTE_ADDRS);
  cr_assert_str_eq(ntop(&n.addr[0], buf), "10.0.0.2");
  cr_assert_str_eq(ntop(&n.addr[MH_DNS_NOTE_ADDRS - 1], buf), "10.0.0.9");
  free(r);
}

/* ---- interface list ----------------------------------------------------------------------- */

static struct mh_iface iface(const char *name, struct sockaddr_storage a) {
  struct mh_iface f;
  memset(&f, 0, sizeof f);
  snprintf(f.name, sizeof f.name, "%s", name);
  f.addr = a;
  return f;
}

Test(dns_ifaces, union_by_name_in_split_order_with_its_sources) {
  struct mh_iface f4[2] = {iface("wifi0", v4("10.201.1.2", 0)), iface("lte0", v4("10.202.1.2", 0))};
  struct mh_iface f6[2] = {iface("lte0", v6("fd00:2::2", 0)), iface("v6only", v6("fd00:9::2", 0))};
  struct mdns_iface_config out[8];
  char buf[64];
  int n = mh_dns_iface_list(f4, 2, f6, 2, out, 8);
  cr_assert_eq(n, 3);
  cr_assert_str_eq(out[0].name, "wifi0");
  cr_assert_eq(out[0].src4.sin_family, AF_INET);
  cr_assert_eq(out[0].src6.sin6_family, 0); /* none: multiDNS finds no IPv6 source either */
  cr_assert_str_eq(out[1].name, "lte0");
  cr_assert_str_eq(inet_ntop(AF_INET, &out[1].src4.sin_addr, buf, sizeof buf), "10.202.1.2");
  cr_assert_str_eq(inet_ntop(AF_INET6, &out[1].src6.sin6_addr, buf, sizeof buf), "fd00:2::2");
  cr_assert_str_eq(out[2].name, "v6only");
  cr_assert_eq(out[2].src4.sin_family, 0);
  cr_assert_eq(out[2].src6.sin6_family, AF_INET6);
  /* bounded: a full list still takes the IPv6 address of a name already in it */
  n = mh_dns_iface_list(f4, 2, f6, 2, out, 2);
  cr_assert_eq(n, 2);
  cr_assert_eq(out[1].src6.sin6_family, AF_INET6);
}

/* ---- per-interface selection ------------------------------------------------------------- */

Test(dns_select, family_port_dst_and_repeats) {
  struct sockaddr_storage dst = v4("10.210.1.10", 8080);
  struct sockaddr_storage in[6] = {
      v4("10.210.1.10", 0),                        /* the program's server: it has its leg already */
      v6("fd00::10", 0),                           /* another family than the program's connection */
      v4("10.210.2.10", 0), v4("10.210.2.10", 53), /* same address, another port: a repeat */
      v4("10.210.3.10", 0), v4("10.210.4.10", 0),
  };
  struct sockaddr_storage out[8];
  char buf[64];
  int k = mh_dns_select(in, 6, (struct sockaddr *)&dst, out, 8);
  cr_assert_eq(k, 3);
  cr_assert_str_eq(ntop(&out[0], buf), "10.210.2.10");
  cr_assert_str_eq(ntop(&out[1], buf), "10.210.3.10");
  cr_assert_str_eq(ntop(&out[2], buf), "10.210.4.10");
  for (int i = 0; i < k; i++)
    cr_assert_eq(port_of(&out[i]), 8080);
  cr_assert_eq(mh_dns_select(in, 6, (struct sockaddr *)&dst, out, 2), 2); /* bounded */
  struct sockaddr_storage d6 = v6("fd00::1", 80);
  k = mh_dns_select(in, 6, (struct sockaddr *)&d6, out, 8);
  cr_assert_eq(k, 1);
  cr_assert_str_eq(ntop(&out[0], buf), "fd00::10");
  cr_assert_eq(port_of(&out[0]), 80);
}

/* ---- engine entry points without resolvers ----------------------------------------------- */

Test(dns_engine, nothing_known_before_the_loop_creates_resolvers) {
  struct sockaddr_storage out[4], a = v4("10.0.0.1", 0);
  struct mh_config cfg;
  mh_config_defaults(&cfg);
  struct mh_dns *d;
  cr_assert_eq(mh_dns_new(NULL, &cfg, NULL, NULL, NULL, &d), 0);
  errno = 1234;
  mh_dns_note(d, "a.test", &a, 1); /* nobody to wake: queued only */
  cr_assert_eq(errno, 1234);
  cr_assert_eq(mh_dns_addrs(d, "a.test", "wifi0", out, 4), 0);
  cr_assert_eq(mh_dns_waiting(d, "wifi0"), 0);
  mh_dns_run(d); /* drains the queue even when no resolver can be made (no loop) */
  cr_assert_eq(mh_dns_addrs(d, "a.test", "wifi0", out, 4), 0);
  mh_dns_close(d);
  mh_dns_free(d);
}

/* The program's own answers are the one store the split asks for its interface's replicas:
 * kept per host without any resolver (no loop here, as with one interface), case-insensitive,
 * the newest answer of a host replacing its older one, the oldest host going when 64 are kept. */
Test(dns_engine, the_programs_answers_kept_per_host_without_resolvers) {
  struct sockaddr_storage out[8], a[2] = {v4("10.0.0.1", 0), v4("10.0.0.2", 0)}, b = v4("10.0.0.9", 0);
  char buf[64], host[32];
  struct mh_config cfg;
  mh_config_defaults(&cfg);
  struct mh_dns *d;
  cr_assert_eq(mh_dns_new(NULL, &cfg, NULL, NULL, NULL, &d), 0);
  cr_assert_eq(mh_dns_program_addrs(d, "a.test", out, 8), 0);
  mh_dns_note(d, "a.test", a, 2);
  cr_assert_eq(mh_dns_program_addrs(d, "A.Test", out, 8), 2, "a note the loop has not taken yet is found");
  cr_assert_str_eq(ntop(&out[1], buf), "10.0.0.2");
  cr_assert_eq(mh_dns_program_addrs(d, "a.test", out, 1), 1, "at most max");
  mh_dns_note(d, "a.test", &b, 1);
  cr_assert_eq(mh_dns_program_addrs(d, "a.test", out, 8), 1, "the newest answer of a host wins");
  cr_assert_str_eq(ntop(&out[0], buf), "10.0.0.9");
  for (int i = 0; i < MH_DNS_PROGRAM_HOSTS; i++) {
    snprintf(host, sizeof host, "h%d.test", i);
    mh_dns_note(d, host, a, 1);
    mh_dns_run(d); /* one note at a time: the ring holds 64 */
  }
  cr_assert_eq(mh_dns_program_addrs(d, "a.test", out, 8), 0, "the oldest host went");
  cr_assert_eq(mh_dns_program_addrs(d, "h0.test", out, 8), 1);
  cr_assert_eq(mh_dns_program_addrs(d, "h63.test", out, 8), 1);
  cr_assert_eq(mh_dns_program_addrs(d, "b.test", out, 8), 0);
  mh_dns_close(d);
  mh_dns_free(d);
}
