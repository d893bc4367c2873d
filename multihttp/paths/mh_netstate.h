/* The system's connectivity per network device (NetworkManager's per-device check, read over D-Bus with sd-bus), cached per engine for the split and the connect-time choice. */
#ifndef MH_NETSTATE_H
#define MH_NETSTATE_H
#include <stdint.h>

#include "policy/trust.h"

struct mh_config;
struct mh_netstate;

/*
 * NetworkManager checks each device's connectivity itself (a captive portal, limited, none,
 * full). A device it reports as portal, limited or none is not used for splitting nor bound
 * at connect time (pol_link_bad). The cache is refreshed by mh_netstate_refresh, a short
 * blocking call (each D-Bus call at most MH_NETSTATE_CALL_US, a handful of them) made on the
 * engine's loop thread at most every MH_NETSTATE_REFRESH_US. Where there is no system bus or
 * no NetworkManager (the testbed, CI, many servers) the attempt costs one access(2) (or one
 * failed call) and is repeated only every MH_NETSTATE_ABSENT_US: every link stays unknown and
 * the answers of the paths decide alone (policy/trust.h). Configuration networkmanager=off
 * (MHTTP_NETWORKMANAGER=off) never asks.
 */
#define MH_NETSTATE_CALL_US 100000ULL
#define MH_NETSTATE_REFRESH_US 5000000ULL
#define MH_NETSTATE_ABSENT_US 30000000ULL

/* An empty cache (every link unknown). 0 or -ENOMEM. */
int mh_netstate_new(struct mh_netstate **out);
/* NULL: no-op. */
void mh_netstate_free(struct mh_netstate *ns);

/* Re-reads NetworkManager's devices when the cache is older than its refresh period (cfg's
 * networkmanager off: never). Loop thread. */
void mh_netstate_refresh(struct mh_netstate *ns, const struct mh_config *cfg, uint64_t now_us);

/* The link of each of n interface names (POL_LINK_UNKNOWN when not known, or when another
 * thread holds the cache: never waits). Any thread. */
void mh_netstate_links(struct mh_netstate *ns, const char *const *names, unsigned n, enum pol_link *out);

/* The engine's own portal check (mh_portal.h): 1 when ifname's check is due at now_us (and
 * then counts as started), 0 otherwise. Any thread. */
int mh_netstate_check_due(struct mh_netstate *ns, const char *ifname, uint64_t period_us, uint64_t now_us);
/* Its result for ifname (POL_LINK_UNKNOWN: no answer, nothing changes). Any thread. A link
 * NetworkManager reports wins over the check's. */
void mh_netstate_set_check(struct mh_netstate *ns, const char *ifname, enum pol_link link);

/* Pure: NetworkManager's NMConnectivityState as a pol_link. */
enum pol_link mh_netstate_from_nm(uint32_t nm_state);

#endif
