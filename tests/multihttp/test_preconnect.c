/* Pre-connect decisions (which interfaces get one), the pool's matching rule (pre-connects, Hosts sharing an address) and which entry it hands out: pure logic, exact answers. */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <string.h>

#include "mh_path.h"

static struct sockaddr_storage v4(const char *a, int port) {
  struct sockaddr_storage s;
  memset(&s, 0, sizeof s);
  struct sockaddr_in *in = (struct sockaddr_in *)&s;
  in->sin_family = AF_INET;
  in->sin_port = htons((uint16_t)port);
  inet_pton(AF_INET, a, &in->sin_addr);
  return s;
}

static int ifaces(struct mh_iface *v, int n) {
  static const char *names[] = {"wifi0", "lte0", "eth1"};
  static const char *addrs[] = {"10.201.1.2", "10.202.1.2", "10.203.1.2"};
  memset(v, 0, sizeof *v * (size_t)n);
  for (int i = 0; i < n; i++) {
    strcpy(v[i].name, names[i]);
    v[i].addr = v4(addrs[i], 0);
  }
  return n;
}

#define SA(x) ((const struct sockaddr *)&(x))

Test(preconnect, every_other_interface_than_the_programs) {
  struct mh_iface v[3];
  int out[3];
  ifaces(v, 3);
  struct sockaddr_storage local = v4("10.202.1.2", 43210), dst = v4("10.210.1.10", 80);
  cr_assert_eq(mh_preconnect_plan(v, 3, SA(local), SA(dst), 8, out), 2);
  cr_assert_eq(out[0], 0);
  cr_assert_eq(out[1], 2);
}

Test(preconnect, bounded_by_max_conns) {
  struct mh_iface v[3];
  int out[3];
  ifaces(v, 3);
  struct sockaddr_storage local = v4("10.201.1.2", 1), dst = v4("10.210.1.10", 80);
  cr_assert_eq(mh_preconnect_plan(v, 3, SA(local), SA(dst), 2, out), 1);
  cr_assert_eq(out[0], 1);
  cr_assert_eq(mh_preconnect_plan(v, 3, SA(local), SA(dst), 1, out), 0);
}

Test(preconnect, none_with_one_interface_loopback_or_unknown_source) {
  struct mh_iface v[3];
  int out[3];
  ifaces(v, 3);
  struct sockaddr_storage local = v4("10.201.1.2", 1), dst = v4("10.210.1.10", 80);
  cr_assert_eq(mh_preconnect_plan(v, 1, SA(local), SA(dst), 8, out), 0);
  struct sockaddr_storage lo = v4("127.0.0.1", 80);
  cr_assert_eq(mh_preconnect_plan(v, 3, SA(local), SA(lo), 8, out), 0);
  struct sockaddr_storage ll = v4("169.254.3.4", 80);
  cr_assert_eq(mh_preconnect_plan(v, 3, SA(local), SA(ll), 8, out), 0);
  struct sockaddr_storage other = v4("192.168.9.9", 1); /* on no configured interface */
  cr_assert_eq(mh_preconnect_plan(v, 3, SA(other), SA(dst), 8, out), 0);
}

Test(preconnect, fresh_entry_serves_any_host_but_counts_reusable_once_connected) {
  cr_assert_eq(mh_pool_entry_matches("", 1, "a.test", 0), MH_POOL_SAME_HOST); /* take: adopt it while connecting */
  cr_assert_eq(mh_pool_entry_matches("", 1, "a.test", 1), 0);                 /* has: not reusable yet */
  cr_assert_eq(mh_pool_entry_matches("", 0, "b.test", 1), MH_POOL_SAME_HOST);
  cr_assert_eq(mh_pool_entry_matches("A.test", 0, "a.TEST", 1), MH_POOL_SAME_HOST);
}

Test(pool, used_entry_serves_another_host_on_its_address_ranked_below_its_own) {
  /* the caller filtered by (interface, address, port): only the Host decides the rank */
  cr_assert_eq(mh_pool_entry_matches("a.test", 0, "b.test", 0), MH_POOL_OTHER_HOST);
  cr_assert_eq(mh_pool_entry_matches("a.test", 0, "b.test", 1), MH_POOL_OTHER_HOST);
  cr_assert_eq(mh_pool_entry_matches("a.test:8080", 0, "a.test", 1), MH_POOL_OTHER_HOST);
  cr_assert_gt(MH_POOL_SAME_HOST, MH_POOL_OTHER_HOST);
}

Test(pool, pick_prefers_connected_then_same_host_then_warmest) {
  const struct mh_pool_cand c[] = {
      {"www.test", 0, 1000}, /* 0: same Host, idle longest */
      {"a.test", 0, 5000},   /* 1: another Host, warmest */
      {"b.test", 0, 3000},   /* 2: another Host */
      {"", 0, 0},            /* 3: pre-connected, never used */
      {"", 1, 0},            /* 4: pre-connect still connecting */
  };
  cr_assert_eq(mh_pool_pick(c, 5, "www.test", 0), 0); /* its own Host, though colder */
  cr_assert_eq(mh_pool_pick(c, 5, "WWW.test", 1), 0);
  cr_assert_eq(mh_pool_pick(c, 5, "static.test", 0), 1); /* no own entry: the warmest */
  cr_assert_eq(mh_pool_pick(c, 5, "b.test", 0), 2);
  cr_assert_eq(mh_pool_pick(c + 2, 3, "a.test", 0), 0);  /* b.test's (used) before a pre-connect */
  cr_assert_eq(mh_pool_pick(c + 3, 2, "a.test", 0), 0);  /* connected before connecting */
  cr_assert_eq(mh_pool_pick(c + 4, 1, "a.test", 0), 0);  /* take adopts a handshake in flight */
  cr_assert_eq(mh_pool_pick(c + 4, 1, "a.test", 1), -1); /* has: nothing reusable yet */
  cr_assert_eq(mh_pool_pick(c, 0, "a.test", 0), -1);
  const struct mh_pool_cand d[] = {{"", 1, 0}, {"x.test", 0, 10}};
  cr_assert_eq(mh_pool_pick(d, 2, "a.test", 0), 1); /* a connected later one beats an earlier connecting one */
}
