/* Unit tests of the pure harvest cache: TTLs, per-interface separation, reverse map, merge order, bounds. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include "multidns/cache.h"
#include "helpers.h"

#define SEC 1000000ull
#define T0 (1000 * SEC) /* an arbitrary start: nothing may assume the clock starts at 0 */

static struct mdns_cache *c;

static void setup(void) { cr_assert_eq(mdns_cache_new(64, &c), 0); }
static void teardown(void) { mdns_cache_free(c); }

TestSuite(cache, .init = setup, .fini = teardown);

static size_t get(int iface, const char *host, uint64_t now, struct sockaddr_storage *out) {
  return mdns_cache_get(c, iface, host, now, out, 3 * MDNS_ADDRS_MAX);
}

Test(cache, ttl_expires_exactly_at_learned_plus_ttl) {
  struct mdns_rr rr = t_rr("192.0.2.1", 5);
  cr_assert_eq(mdns_cache_put(c, 0, "a.test", MDNS_SRC_HARVEST, AF_INET, &rr, 1, 30, T0), 1);
  struct sockaddr_storage out[48];
  cr_assert_eq(get(0, "a.test", T0, out), 1);
  cr_assert_eq(get(0, "a.test", T0 + 5 * SEC - 1, out), 1, "still valid one microsecond before");
  cr_assert_str_eq(t_str(&out[0]), "192.0.2.1");
  cr_assert_eq(get(0, "a.test", T0 + 5 * SEC, out), 0, "expired at exactly learned + TTL");
}

Test(cache, ttl_zero_is_never_returned) {
  struct mdns_rr rr = t_rr("192.0.2.1", 0);
  cr_assert_eq(mdns_cache_put(c, 0, "a.test", MDNS_SRC_HARVEST, AF_INET, &rr, 1, 30, T0), 0,
               "a TTL-0 address is not reported as learned");
  struct sockaddr_storage out[48];
  cr_assert_eq(get(0, "a.test", T0, out), 0);
}

Test(cache, each_address_keeps_its_own_ttl) {
  struct mdns_rr rrs[2] = {t_rr("192.0.2.1", 10), t_rr("192.0.2.2", 3)};
  mdns_cache_put(c, 0, "a.test", MDNS_SRC_HARVEST, AF_INET, rrs, 2, 30, T0);
  struct sockaddr_storage out[48];
  cr_assert_eq(get(0, "a.test", T0 + 3 * SEC, out), 1);
  cr_assert_str_eq(t_str(&out[0]), "192.0.2.1");
}

Test(cache, address_learned_on_iface1_is_never_returned_for_iface0) {
  struct mdns_rr on1 = t_rr("198.51.100.7", 300);
  struct mdns_rr on0 = t_rr("192.0.2.7", 300);
  mdns_cache_put(c, 1, "cdn.test", MDNS_SRC_HARVEST, AF_INET, &on1, 1, 30, T0);
  struct sockaddr_storage out[48];
  cr_assert_eq(get(0, "cdn.test", T0, out), 0, "iface 0 learned nothing for this host");
  mdns_cache_put(c, 0, "cdn.test", MDNS_SRC_HARVEST, AF_INET, &on0, 1, 30, T0);
  cr_assert_eq(get(0, "cdn.test", T0, out), 1);
  cr_assert_str_eq(t_str(&out[0]), "192.0.2.7");
  cr_assert_eq(get(1, "cdn.test", T0, out), 1);
  cr_assert_str_eq(t_str(&out[0]), "198.51.100.7");
  cr_assert_eq(mdns_cache_fresh(c, 2, "cdn.test", AF_INET, T0), 0, "nor does iface 2 look fresh");
}

Test(cache, merge_order_program_first_then_ipv6_then_ipv4_deduplicated) {
  struct mdns_rr prog[2] = {t_rr("192.0.2.2", 60), t_rr("2001:db8::1", 60)};
  struct mdns_rr v4[3] = {t_rr("192.0.2.1", 60), t_rr("192.0.2.2", 60), t_rr("192.0.2.3", 60)};
  struct mdns_rr v6[2] = {t_rr("2001:db8::2", 60), t_rr("2001:db8::1", 60)};
  /* arrival order deliberately different from merge order */
  mdns_cache_put(c, 0, "m.test", MDNS_SRC_HARVEST, AF_INET, v4, 3, 30, T0);
  mdns_cache_put(c, 0, "m.test", MDNS_SRC_PROGRAM, AF_UNSPEC, prog, 2, 0, T0);
  mdns_cache_put(c, 0, "m.test", MDNS_SRC_HARVEST, AF_INET6, v6, 2, 30, T0);
  struct sockaddr_storage out[48];
  const char *want[] = {"192.0.2.2", "2001:db8::1", "2001:db8::2", "192.0.2.1", "192.0.2.3"};
  size_t n = get(0, "m.test", T0, out);
  cr_assert_eq(n, 5);
  for (size_t i = 0; i < n; i++)
    cr_assert_str_eq(t_str(&out[i]), want[i], "position %zu", i);
  cr_assert_eq(mdns_cache_get(c, 0, "m.test", T0, out, 2), 2, "max is honoured");
  cr_assert_str_eq(t_str(&out[1]), "2001:db8::1");
}

Test(cache, duplicates_within_one_answer_are_dropped_and_ports_zeroed) {
  struct mdns_rr rrs[3] = {t_rr("192.0.2.1", 60), t_rr("192.0.2.1", 60), t_rr("192.0.2.9", 60)};
  ((struct sockaddr_in *)&rrs[1].addr)->sin_port = htons(80);
  cr_assert_eq(mdns_cache_put(c, 0, "d.test", MDNS_SRC_HARVEST, AF_INET, rrs, 3, 30, T0), 2);
  struct sockaddr_storage out[48];
  cr_assert_eq(get(0, "d.test", T0, out), 2);
  cr_assert_eq(((struct sockaddr_in *)&out[0])->sin_port, 0);
}

Test(cache, an_answer_replaces_its_family_rrset_only) {
  struct mdns_rr a1 = t_rr("192.0.2.1", 60), a2 = t_rr("192.0.2.2", 60), aaaa = t_rr("2001:db8::1", 60);
  mdns_cache_put(c, 0, "r.test", MDNS_SRC_HARVEST, AF_INET, &a1, 1, 30, T0);
  mdns_cache_put(c, 0, "r.test", MDNS_SRC_HARVEST, AF_INET6, &aaaa, 1, 30, T0);
  cr_assert_eq(mdns_cache_put(c, 0, "r.test", MDNS_SRC_HARVEST, AF_INET, &a2, 1, 30, T0 + SEC), 1);
  struct sockaddr_storage out[48];
  cr_assert_eq(get(0, "r.test", T0 + SEC, out), 2);
  cr_assert_str_eq(t_str(&out[0]), "2001:db8::1");
  cr_assert_str_eq(t_str(&out[1]), "192.0.2.2", "the old A record is gone");
  cr_assert_eq(mdns_cache_put(c, 0, "r.test", MDNS_SRC_HARVEST, AF_INET, &a2, 1, 30, T0 + 2 * SEC), 0,
               "the same answer again is not news");
}

Test(cache, wrong_family_records_are_ignored) {
  struct mdns_rr rr = t_rr("2001:db8::1", 60);
  cr_assert_eq(mdns_cache_put(c, 0, "f.test", MDNS_SRC_HARVEST, AF_INET, &rr, 1, 30, T0), 0);
  cr_assert_eq(mdns_cache_put(c, 0, "f.test", MDNS_SRC_HARVEST, AF_UNSPEC, &rr, 1, 30, T0), -EINVAL);
  cr_assert_eq(mdns_cache_put(c, 0, "f.test", MDNS_SRC_PROGRAM, AF_INET, &rr, 1, 30, T0), -EINVAL);
  cr_assert_eq(mdns_cache_put(c, MDNS_IFACES_MAX, "f.test", MDNS_SRC_PROGRAM, AF_UNSPEC, &rr, 1, 0, T0), -EINVAL);
}

Test(cache, freshness_positive_min_ttl_negative_neg_ttl_per_family) {
  struct mdns_rr rrs[2] = {t_rr("192.0.2.1", 100), t_rr("192.0.2.2", 20)};
  mdns_cache_put(c, 0, "n.test", MDNS_SRC_HARVEST, AF_INET, rrs, 2, 30, T0);
  mdns_cache_put(c, 0, "n.test", MDNS_SRC_HARVEST, AF_INET6, NULL, 0, 30, T0); /* NODATA */
  cr_assert(mdns_cache_fresh(c, 0, "n.test", AF_INET, T0 + 20 * SEC - 1));
  cr_assert_not(mdns_cache_fresh(c, 0, "n.test", AF_INET, T0 + 20 * SEC), "re-ask at the smallest TTL");
  cr_assert(mdns_cache_fresh(c, 0, "n.test", AF_INET6, T0 + 30 * SEC - 1), "NODATA remembered");
  cr_assert_not(mdns_cache_fresh(c, 0, "n.test", AF_INET6, T0 + 30 * SEC));
  cr_assert_not(mdns_cache_fresh(c, 1, "n.test", AF_INET, T0), "other interface not fresh");
  struct mdns_rr p = t_rr("192.0.2.5", 60);
  mdns_cache_put(c, 2, "p.test", MDNS_SRC_PROGRAM, AF_UNSPEC, &p, 1, 0, T0);
  cr_assert_not(mdns_cache_fresh(c, 2, "p.test", AF_INET, T0),
                "the program's answer does not stand in for the interface's own resolver");
}

Test(cache, host_names_are_case_and_trailing_dot_insensitive) {
  struct mdns_rr rr = t_rr("192.0.2.1", 60);
  mdns_cache_put(c, 0, "WWW.Example.COM.", MDNS_SRC_HARVEST, AF_INET, &rr, 1, 30, T0);
  struct sockaddr_storage out[48];
  cr_assert_eq(get(0, "www.example.com", T0, out), 1);
  char key[MDNS_HOST_MAX];
  cr_assert_eq(mdns_cache_host_key("", key), -EINVAL);
  cr_assert_eq(mdns_cache_host_key(".", key), -EINVAL);
  char longname[300];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  cr_assert_eq(mdns_cache_host_key(longname, key), -EINVAL);
  cr_assert_eq(mdns_cache_put(c, 0, longname, MDNS_SRC_HARVEST, AF_INET, &rr, 1, 30, T0), -EINVAL);
}

Test(cache, reverse_map_finds_host_and_interface) {
  struct mdns_rr a = t_rr("198.51.100.1", 60), b = t_rr("2001:db8::7", 60);
  mdns_cache_put(c, 1, "one.test", MDNS_SRC_HARVEST, AF_INET, &a, 1, 30, T0);
  mdns_cache_put(c, 0, "two.test", MDNS_SRC_PROGRAM, AF_UNSPEC, &b, 1, 0, T0);
  char host[MDNS_HOST_MAX];
  int iface = -1;
  struct sockaddr_storage q = t_addr("198.51.100.1");
  ((struct sockaddr_in *)&q)->sin_port = htons(8080); /* ports do not matter */
  cr_assert_eq(mdns_cache_host_of(c, (struct sockaddr *)&q, T0, host, sizeof host, &iface), 0);
  cr_assert_str_eq(host, "one.test");
  cr_assert_eq(iface, 1);
  q = t_addr("2001:db8::7");
  cr_assert_eq(mdns_cache_host_of(c, (struct sockaddr *)&q, T0, host, sizeof host, &iface), 0);
  cr_assert_str_eq(host, "two.test");
  cr_assert_eq(iface, 0);
  q = t_addr("203.0.113.1");
  cr_assert_eq(mdns_cache_host_of(c, (struct sockaddr *)&q, T0, host, sizeof host, NULL), -ENOENT);
  q = t_addr("198.51.100.1");
  cr_assert_eq(mdns_cache_host_of(c, (struct sockaddr *)&q, T0, host, 8, NULL), -ENOSPC, "\"one.test\" needs 9 bytes");
}

Test(cache, reverse_map_prefers_live_then_most_recent) {
  struct mdns_rr shortlived = t_rr("192.0.2.80", 5), longlived = t_rr("192.0.2.80", 600);
  mdns_cache_put(c, 0, "old.test", MDNS_SRC_HARVEST, AF_INET, &longlived, 1, 30, T0);
  mdns_cache_put(c, 0, "new.test", MDNS_SRC_HARVEST, AF_INET, &shortlived, 1, 30, T0 + SEC);
  char host[MDNS_HOST_MAX];
  struct sockaddr_storage q = t_addr("192.0.2.80");
  cr_assert_eq(mdns_cache_host_of(c, (struct sockaddr *)&q, T0 + 2 * SEC, host, sizeof host, NULL), 0);
  cr_assert_str_eq(host, "new.test", "both live: the most recent lookup wins (virtual hosting)");
  cr_assert_eq(mdns_cache_host_of(c, (struct sockaddr *)&q, T0 + 10 * SEC, host, sizeof host, NULL), 0);
  cr_assert_str_eq(host, "old.test", "a live mapping beats an expired one");
  mdns_cache_free(c);
  cr_assert_eq(mdns_cache_new(4, &c), 0);
  mdns_cache_put(c, 0, "gone.test", MDNS_SRC_HARVEST, AF_INET, &shortlived, 1, 30, T0);
  cr_assert_eq(mdns_cache_host_of(c, (struct sockaddr *)&q, T0 + 100 * SEC, host, sizeof host, NULL), 0);
  cr_assert_str_eq(host, "gone.test", "expired addresses still map back until evicted");
}

Test(cache, bounded_least_recently_used_entry_is_evicted) {
  mdns_cache_free(c);
  cr_assert_eq(mdns_cache_new(3, &c), 0);
  struct mdns_rr rr = t_rr("192.0.2.1", 600);
  mdns_cache_put(c, 0, "h1.test", MDNS_SRC_HARVEST, AF_INET, &rr, 1, 30, T0 + 1);
  mdns_cache_put(c, 0, "h2.test", MDNS_SRC_HARVEST, AF_INET, &rr, 1, 30, T0 + 2);
  mdns_cache_put(c, 0, "h3.test", MDNS_SRC_HARVEST, AF_INET, &rr, 1, 30, T0 + 3);
  struct sockaddr_storage out[48];
  cr_assert_eq(get(0, "h1.test", T0 + 4, out), 1); /* h1 used: h2 is now the oldest */
  mdns_cache_put(c, 0, "h4.test", MDNS_SRC_HARVEST, AF_INET, &rr, 1, 30, T0 + 5);
  cr_assert_eq(mdns_cache_size(c), 3);
  cr_assert_eq(get(0, "h1.test", T0 + 6, out), 1);
  cr_assert_eq(get(0, "h2.test", T0 + 6, out), 0, "least recently used went");
  cr_assert_eq(get(0, "h3.test", T0 + 6, out), 1);
  cr_assert_eq(get(0, "h4.test", T0 + 6, out), 1);
}

Test(cache, dead_entries_are_evicted_before_live_ones) {
  mdns_cache_free(c);
  cr_assert_eq(mdns_cache_new(2, &c), 0);
  struct mdns_rr longlived = t_rr("192.0.2.1", 600), shortlived = t_rr("192.0.2.2", 1);
  mdns_cache_put(c, 0, "live.test", MDNS_SRC_HARVEST, AF_INET, &longlived, 1, 1, T0);
  mdns_cache_put(c, 0, "dead.test", MDNS_SRC_HARVEST, AF_INET, &shortlived, 1, 1, T0 + SEC / 2);
  /* live.test is older, but dead.test has expired entirely (address and freshness) */
  mdns_cache_put(c, 0, "next.test", MDNS_SRC_HARVEST, AF_INET, &longlived, 1, 1, T0 + 2 * SEC);
  struct sockaddr_storage out[48];
  cr_assert_eq(get(0, "live.test", T0 + 2 * SEC, out), 1);
  cr_assert_eq(get(0, "next.test", T0 + 2 * SEC, out), 1);
  cr_assert_eq(mdns_cache_size(c), 2);
}

Test(cache, at_most_addrs_max_per_answer) {
  struct mdns_rr rrs[MDNS_ADDRS_MAX + 4];
  char a[32];
  for (int i = 0; i < MDNS_ADDRS_MAX + 4; i++) {
    snprintf(a, sizeof a, "192.0.2.%d", i + 1);
    rrs[i] = t_rr(a, 60);
  }
  cr_assert_eq(mdns_cache_put(c, 0, "big.test", MDNS_SRC_HARVEST, AF_INET, rrs, MDNS_ADDRS_MAX + 4, 30, T0),
               MDNS_ADDRS_MAX);
  struct sockaddr_storage out[48];
  cr_assert_eq(get(0, "big.test", T0, out), MDNS_ADDRS_MAX);
  cr_assert_str_eq(t_str(&out[0]), "192.0.2.1", "the first ones, in resolver order");
}

Test(cache, same_addr_compares_family_bytes_scope_not_port) {
  struct sockaddr_storage x = t_addr("2001:db8::1"), y = t_addr("2001:db8::1"), z = t_addr("192.0.2.1");
  ((struct sockaddr_in6 *)&y)->sin6_port = htons(53);
  cr_assert(mdns_cache_same_addr((struct sockaddr *)&x, (struct sockaddr *)&y));
  ((struct sockaddr_in6 *)&y)->sin6_scope_id = 2;
  cr_assert_not(mdns_cache_same_addr((struct sockaddr *)&x, (struct sockaddr *)&y));
  cr_assert_not(mdns_cache_same_addr((struct sockaddr *)&x, (struct sockaddr *)&z));
}

Test(cache, ipv4_mapped_addresses_are_the_ipv4_host) {
  struct mdns_rr prog = t_rr("::ffff:192.0.2.44", 60), harv = t_rr("192.0.2.44", 60);
  cr_assert_eq(mdns_cache_put(c, 0, "v4m.test", MDNS_SRC_PROGRAM, AF_UNSPEC, &prog, 1, 0, T0), 1);
  cr_assert_eq(mdns_cache_put(c, 0, "v4m.test", MDNS_SRC_HARVEST, AF_INET, &harv, 1, 30, T0), 0,
               "the harvest found the same host");
  struct sockaddr_storage out[48];
  cr_assert_eq(get(0, "v4m.test", T0, out), 1);
  cr_assert_eq(out[0].ss_family, AF_INET);
  cr_assert_str_eq(t_str(&out[0]), "192.0.2.44");
  char host[MDNS_HOST_MAX];
  struct sockaddr_storage peer = t_addr("::ffff:192.0.2.44"); /* an AF_INET6 socket's peer */
  cr_assert_eq(mdns_cache_host_of(c, (struct sockaddr *)&peer, T0, host, sizeof host, NULL), 0);
  cr_assert_str_eq(host, "v4m.test");
}
