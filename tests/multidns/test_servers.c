/* Unit tests of DNS-server discovery: parsing, default-route detection, and the discovery order, on fixture files. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "multidns/servers.h"

static char dir[64];
static char p_resolv[128], p_netif[128], p_route[128], p_route6[128];
static const char *env_name, *env_value; /* the fake environment: one variable */

static const char *fake_getenv(const char *name) { return env_name && strcmp(name, env_name) == 0 ? env_value : NULL; }

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

static const char ROUTE_HDR[] = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n";

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/mdns-servers-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  snprintf(p_resolv, sizeof p_resolv, "%s/resolv.conf", dir);
  snprintf(p_netif, sizeof p_netif, "%s/netif", dir);
  snprintf(p_route, sizeof p_route, "%s/route", dir);
  snprintf(p_route6, sizeof p_route6, "%s/ipv6_route", dir);
  cr_assert_eq(mkdir(p_netif, 0700), 0);
  env_name = env_value = NULL;
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(servers, .init = setup, .fini = teardown);

static struct mdns_discovery disc(void) {
  struct mdns_discovery d = {p_resolv, p_netif, p_route, p_route6, fake_getenv};
  return d;
}

static const char *fmt(const struct mdns_server_list *l) {
  static char buf[512];
  mdns_servers_format(l, buf, sizeof buf);
  return buf;
}

Test(servers, parse_accepts_the_documented_forms) {
  struct mdns_server_list l;
  cr_assert_eq(mdns_servers_parse("1.2.3.4,5.6.7.8", &l), 2);
  cr_assert_str_eq(fmt(&l), "1.2.3.4, 5.6.7.8");
  cr_assert_eq(mdns_servers_parse(" 127.0.0.1:5353 , [2001:db8::1]:5300 2001:db8::2", &l), 3);
  cr_assert_str_eq(fmt(&l), "127.0.0.1:5353, [2001:db8::1]:5300, 2001:db8::2");
  cr_assert_eq(l.s[0].port, 5353);
  cr_assert_eq(l.s[2].port, 53);
  /* systemd-resolved's forms: "#name" (DoT server name) and "%ifindex" */
  cr_assert_eq(mdns_servers_parse("9.9.9.9#dns.quad9.net 2001:db8::3%2 [2001:db8::4]:53%3#x", &l), 3);
  cr_assert_str_eq(fmt(&l), "9.9.9.9, 2001:db8::3, 2001:db8::4");
  cr_assert_eq(mdns_servers_parse("", &l), 0);
  cr_assert_eq(mdns_servers_parse("1.2.3.4,1.2.3.4,1.2.3.4:53", &l), 1, "duplicates dropped");
}

Test(servers, parse_rejects_typos_and_skips_link_local) {
  struct mdns_server_list l;
  const char *bad[] = {"1.2.3",        "1.2.3.4:0",      "1.2.3.4:70000", "1.2.3.4:x",
                       "[2001:db8::1", "[2001:db8::1]x", "dns.example",   "1.2.3.4,,oops"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cr_assert_eq(mdns_servers_parse(bad[i], &l), -EINVAL, "%s", bad[i]);
    cr_assert_eq(l.n, 0, "no partial list for %s", bad[i]);
  }
  cr_assert_eq(mdns_servers_parse("fe80::1%2,1.1.1.1", &l), 1);
  cr_assert_str_eq(fmt(&l), "1.1.1.1");
}

Test(servers, parse_keeps_at_most_servers_max) {
  struct mdns_server_list l;
  cr_assert_eq(mdns_servers_parse("10.0.0.1 10.0.0.2 10.0.0.3 10.0.0.4 10.0.0.5 10.0.0.6 10.0.0.7 "
                                  "10.0.0.8 10.0.0.9 10.0.0.10",
                                  &l),
               MDNS_SERVERS_MAX);
}

Test(servers, env_name_maps_unsafe_characters) {
  char n[64];
  cr_assert_eq(mdns_servers_env_name("eth0.100", n, sizeof n), 0);
  cr_assert_str_eq(n, "MHTTP_DNS_eth0_100");
  cr_assert_eq(mdns_servers_env_name("wlan-0", n, sizeof n), 0);
  cr_assert_str_eq(n, "MHTTP_DNS_wlan_0");
  cr_assert_eq(mdns_servers_env_name("wlan0", n, 12), -ENOSPC);
}

Test(servers, default_iface_is_lowest_metric_ipv4_default) {
  char route[1024];
  snprintf(route, sizeof route,
           "%s"
           "wlan0\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0\n"
           "eth1\t0000A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
           "eth0\t00000000\t010200C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
           "eth2\t00000000\t010200C0\t0002\t0\t0\t1\t00000000\t0\t0\t0\n", /* not RTF_UP */
           ROUTE_HDR);
  write_file(p_route, route);
  struct mdns_discovery d = disc();
  char ifn[32];
  cr_assert_eq(mdns_servers_default_iface(&d, ifn, sizeof ifn), 0);
  cr_assert_str_eq(ifn, "eth0");
}

Test(servers, default_iface_falls_back_to_ipv6_and_ignores_lo_reject) {
  write_file(p_route, ROUTE_HDR);
  write_file(p_route6, "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
                       "00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo\n"
                       "fd000000000000000000000000000000 40 00000000000000000000000000000000 00 "
                       "00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0\n"
                       "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
                       "fd000000000000000000000000000001 00000400 00000002 00000000 00000003    wwan0\n");
  struct mdns_discovery d = disc();
  char ifn[32];
  cr_assert_eq(mdns_servers_default_iface(&d, ifn, sizeof ifn), 0);
  cr_assert_str_eq(ifn, "wwan0");
  write_file(p_route6, "");
  cr_assert_eq(mdns_servers_default_iface(&d, ifn, sizeof ifn), -ENOENT);
}

/* Fixture: resolved has servers for ifindex 3 (wlan0) only; eth0 holds the default route. */
static void fixture_all(void) {
  char route[512];
  snprintf(route, sizeof route, "%seth0\t00000000\t010200C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n", ROUTE_HDR);
  write_file(p_route, route);
  write_file(p_route6, "");
  write_file(p_resolv, "# comment\nsearch example\nnameserver 192.0.2.53 # trailing\n"
                       "nameserver\t2001:db8::53\n;nameserver 203.0.113.1\nnameserver not-an-ip\n");
  char f[160];
  snprintf(f, sizeof f, "%s/3", p_netif);
  write_file(f, "# This is private data. Do not parse.\nLLMNR=yes\nSERVERS=198.51.100.53 198.51.100.54\n");
  snprintf(f, sizeof f, "%s/4", p_netif);
  write_file(f, "# no servers line: resolved knows the link but has no DNS for it\nLLMNR=no\n");
}

Test(servers, discovery_order_env_config_resolved_resolvconf) {
  fixture_all();
  struct mdns_discovery d = disc();
  struct mdns_server_list l;
  enum mdns_server_src src;

  /* resolv.conf: only for the default-route interface */
  cr_assert_eq(mdns_servers_discover("eth0", 2, NULL, &d, &l, &src), 2);
  cr_assert_eq(src, MDNS_SERVERS_RESOLV_CONF);
  cr_assert_str_eq(fmt(&l), "192.0.2.53, 2001:db8::53");
  cr_assert_eq(mdns_servers_discover("eth9", 9, NULL, &d, &l, &src), 0, "not the default route");
  cr_assert_eq(src, MDNS_SERVERS_NONE);

  /* resolved's per-link servers beat resolv.conf; a link file without SERVERS falls through */
  cr_assert_eq(mdns_servers_discover("wlan0", 3, NULL, &d, &l, &src), 2);
  cr_assert_eq(src, MDNS_SERVERS_RESOLVED);
  cr_assert_str_eq(fmt(&l), "198.51.100.53, 198.51.100.54");
  cr_assert_eq(mdns_servers_discover("wwan0", 4, NULL, &d, &l, &src), 0);

  /* the config file's value beats resolved */
  cr_assert_eq(mdns_servers_discover("wlan0", 3, "203.0.113.9", &d, &l, &src), 1);
  cr_assert_eq(src, MDNS_SERVERS_CONFIG);

  /* the environment beats everything */
  env_name = "MHTTP_DNS_wlan0";
  env_value = "127.0.0.1:5353";
  cr_assert_eq(mdns_servers_discover("wlan0", 3, "203.0.113.9", &d, &l, &src), 1);
  cr_assert_eq(src, MDNS_SERVERS_ENV);
  cr_assert_str_eq(fmt(&l), "127.0.0.1:5353");

  /* set but empty: the user turned the harvest off on this interface */
  env_value = "";
  cr_assert_eq(mdns_servers_discover("wlan0", 3, "203.0.113.9", &d, &l, &src), 0);
  cr_assert_eq(src, MDNS_SERVERS_NONE);
}

Test(servers, malformed_env_or_config_is_an_error_not_a_fallback) {
  fixture_all();
  struct mdns_discovery d = disc();
  struct mdns_server_list l;
  enum mdns_server_src src;
  env_name = "MHTTP_DNS_eth0";
  env_value = "1.2.3.4;5.6.7.8";
  cr_assert_eq(mdns_servers_discover("eth0", 2, NULL, &d, &l, &src), -EINVAL);
  env_name = NULL;
  cr_assert_eq(mdns_servers_discover("eth0", 2, "192.0.2.300", &d, &l, &src), -EINVAL);
}

Test(servers, missing_files_mean_nothing_found) {
  struct mdns_discovery d = {"/nonexistent/resolv.conf", "/nonexistent/netif", "/nonexistent/route",
                             "/nonexistent/ipv6_route", fake_getenv};
  struct mdns_server_list l;
  enum mdns_server_src src;
  cr_assert_eq(mdns_servers_discover("eth0", 2, NULL, &d, &l, &src), 0);
  cr_assert_eq(src, MDNS_SERVERS_NONE);
  char ifn[32];
  cr_assert_eq(mdns_servers_default_iface(&d, ifn, sizeof ifn), -ENOENT);
}
