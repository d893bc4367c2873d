/* Gathers `mhttp ifaces`: the configuration as the engine reads it, its interfaces, each one's DNS servers (multidns discovery) and the host-wide metrics store's values. */
#include "ifaces.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mh_config.h"
#include "mh_mstore.h"
#include "mh_path.h"
#include "multidns/servers.h"

/* The configuration the engine would run with (mh_config_load, as the shim loads it). */
static int cli__config(struct mh_config *cfg) {
  char err[MH_CONFIG_ERR_MAX] = "";
  if (mh_config_load(cfg, NULL, err, sizeof err) == 0)
    return 0;
  fprintf(stderr, "mhttp: ifaces: %s\n", err);
  return -1;
}

/* Adds the interfaces of one family to rows (by name, in the engine's order). */
static unsigned cli__collect(const struct mh_config *cfg, int family, struct mh_iface *src, struct cli_iface_row *rows,
                             unsigned n) {
  struct mh_iface v[MH_MAX_IFACES];
  int k = mh_path_ifaces(cfg, family, v, MH_MAX_IFACES);
  for (int i = 0; i < k; i++) {
    unsigned r = 0;
    while (r < n && strcmp(rows[r].name, v[i].name))
      r++;
    if (r == n) {
      if (n == MH_MAX_IFACES)
        continue;
      memset(&rows[n], 0, sizeof rows[n]);
      _Static_assert(sizeof rows[n].name == sizeof v[i].name, "both IFNAMSIZ");
      memcpy(rows[n].name, v[i].name, sizeof rows[n].name);
      rows[n].name[sizeof rows[n].name - 1] = 0;
      n++;
    }
    if (rows[r].naddr < 2) {
      src[r * 2 + rows[r].naddr] = v[i];
      mh_path_ntop((const struct sockaddr *)&v[i].addr, rows[r].addr[rows[r].naddr].addr, sizeof rows[r].addr[0].addr);
      rows[r].naddr++;
    }
  }
  return n;
}

static void cli__dns(const struct mh_config *cfg, struct cli_iface_row *r) {
  struct mdns_server_list l;
  enum mdns_server_src src = MDNS_SERVERS_NONE;
  int k = mdns_servers_discover(r->name, if_nametoindex(r->name), mh_config_dns(cfg, r->name), NULL, &l, &src);
  if (k > 0)
    mdns_servers_format(&l, r->dns, sizeof r->dns);
  else if (k < 0)
    snprintf(r->dns, sizeof r->dns, "malformed setting");
  r->dns_src = mdns_servers_src_name(src);
}

/* The host-wide store's values for every address, keyed as the engine keys them. */
static void cli__metrics(const struct mh_config *cfg, const struct mh_iface *src, struct cli_iface_row *rows,
                         unsigned n) {
  struct mh_mstore *ms = NULL;
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  uint64_t netns = s >= 0 ? mh_mstore_netns(s) : 0;
  if (s >= 0)
    close(s);
  if (!netns || mh_mstore_new(&ms) < 0)
    return;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t now_us = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
  for (unsigned r = 0; r < n; r++)
    for (unsigned a = 0; a < rows[r].naddr; a++) {
      struct pol_store_key k;
      struct pol_store_obs o;
      mh_mstore_key(&k, netns, rows[r].name, if_nametoindex(rows[r].name), &src[r * 2 + a].addr);
      if (mh_mstore_lookup(ms, cfg, &k, 1, now_us, &o) <= 0)
        continue;
      struct cli_iface_addr *out = &rows[r].addr[a];
      out->has_metrics = 1;
      out->srtt_min_us = o.srtt_min_us;
      out->srtt_med_us = o.srtt_med_us;
      out->max_rate = o.max_rate;
    }
  mh_mstore_free(ms);
}

int cli_ifaces(void) {
  static struct mh_config cfg;
  if (cli__config(&cfg) < 0)
    return 2;
  struct cli_iface_row rows[MH_MAX_IFACES];
  struct mh_iface src[MH_MAX_IFACES * 2];
  unsigned n = cli__collect(&cfg, AF_INET, src, rows, 0);
  n = cli__collect(&cfg, AF_INET6, src, rows, n);
  char store[256];
  if (mh_mstore_path(&cfg, store, sizeof store) < 0)
    snprintf(store, sizeof store, "off");
  printf("metrics store: %s\n", store);
  if (!n)
    printf("no interface with a global address%s\n", cfg.ifaces[0] ? " among MHTTP_IFACES" : "");
  for (unsigned r = 0; r < n; r++)
    cli__dns(&cfg, &rows[r]);
  cli__metrics(&cfg, src, rows, n);
  for (unsigned r = 0; r < n; r++) {
    char block[1024];
    cli_ifaces_format(&rows[r], block, sizeof block);
    fputs(block, stdout);
  }
  return 0;
}
