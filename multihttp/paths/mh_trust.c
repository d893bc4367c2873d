/* Trust glue: destination keys, store keys of the engine's interfaces, and notes and look-ups, through the engine's store copy, of a path's trust and of objects whose range answers disagreed. */
#include "mh_trust.h"
#include "mh_clock.h"
#include "mh_config.h"
#include "mh_paths.h"
#include "mh_log.h"
#include "mh_metrics.h"
#include "mh_mstore.h"
#include "mh_path.h"

#include <net/if.h>
#include <netinet/in.h>
#include <string.h>

uint64_t mh_trust_dest(const struct sockaddr *sa) {
  if (sa->sa_family == AF_INET)
    return pol_trust_dest(AF_INET, (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr, 4);
  if (sa->sa_family == AF_INET6)
    return pol_trust_dest(AF_INET6, (const uint8_t *)&((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
  return 0;
}

void mh_trust_key(uint64_t netns, const struct mh_iface *ifc, struct pol_store_key *k) {
  unsigned ifindex = if_nametoindex(ifc->name);
  mh_mstore_key(k, ifindex ? netns : 0, ifc->name, ifindex, &ifc->addr);
}

static const char *const mh__trust_names[] = {"unknown", "agreed", "disagreed"};

void mh_trust_note(struct mh_paths *e, const struct mh_iface *ifc, const struct sockaddr *dst, enum pol_trust_state st,
                   const char *why) {
  uint64_t dest = mh_trust_dest(dst);
  if (!dest)
    return;
  struct pol_store_key k;
  mh_trust_key(mh_metrics_netns(e->metrics), ifc, &k);
  int rc = mh_mstore_trust_note(e->mstore, e->cfg, &k, dest, st, mh_now_us());
  char buf[64];
  if (rc == 1 || (rc < 0 && rc != -1))
    mh_log(st == POL_TRUST_DISAGREED ? MH_LOG_INFO : MH_LOG_DEBUG, "trust: %s %s about %s (%s)%s", ifc->name,
           mh__trust_names[st], mh_path_ntop(dst, buf, sizeof buf), why, rc < 0 ? "; store not written" : "");
}

enum pol_trust_state mh_trust_of(struct mh_paths *e, const struct mh_iface *ifc, const struct sockaddr *dst) {
  uint64_t dest = mh_trust_dest(dst);
  if (!dest)
    return POL_TRUST_UNKNOWN;
  struct pol_store_key k;
  enum pol_trust_state st;
  mh_trust_key(mh_metrics_netns(e->metrics), ifc, &k);
  mh_mstore_trust(e->mstore, e->cfg, &k, 1, dest, mh_now_us(), &st);
  return st;
}

/* The store key of the record of objects' range answers (no path: ifindex 0, no address). */
static void mh__ranges_key(struct mh_paths *e, struct pol_store_key *k) {
  struct sockaddr_storage none = {.ss_family = AF_UNSPEC};
  mh_mstore_key(k, mh_metrics_netns(e->metrics), POL_STORE_RANGES_IFNAME, 0, &none);
}

void mh_trust_ranges_note(struct mh_paths *e, uint64_t obj, const char *why) {
  struct pol_store_key k;
  mh__ranges_key(e, &k);
  int rc = mh_mstore_trust_note(e->mstore, e->cfg, &k, obj, POL_TRUST_DISAGREED, mh_now_us());
  if (rc == 1 || (rc < 0 && rc != -1))
    mh_info("trust: that object's range answers %s: it is asked whole for %llu min%s", why,
            (unsigned long long)(POL_TRUST_DISAGREED_US / 60000000), rc < 0 ? " (this process only)" : "");
}

int mh_trust_ranges_bad(struct mh_paths *e, uint64_t obj) {
  struct pol_store_key k;
  enum pol_trust_state st;
  mh__ranges_key(e, &k);
  mh_mstore_trust(e->mstore, e->cfg, &k, 1, obj, mh_now_us(), &st);
  return st == POL_TRUST_DISAGREED;
}

int mh_trust_exempt(const struct mh_config *cfg) { return cfg->pol.kind == POL_SINGLE; }
