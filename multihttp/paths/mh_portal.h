/* The engine's own captive-portal check (MHTTP_PORTAL_CHECK=URL|off): one plain-HTTP GET of the user's URL per interface, from that interface, whose expected answer is a 204 or an empty 200; any other answer marks the interface a portal (mh_netstate.h). */
#ifndef MH_PORTAL_H
#define MH_PORTAL_H
#include "mh_url.h"
#include <stddef.h>
#include <stdint.h>

#include "policy/trust.h"

struct mh_paths;
struct mh_iface;

/*
 * Off by default: the engine then never sends a byte the program did not ask for. When the
 * user names a URL (their own server, or a well-known generate_204 endpoint), each interface a
 * split may use is checked at most every MH_PORTAL_PERIOD_US, on the engine's loop, with a
 * connection of its own bound to that interface, bounded by MH_PORTAL_TIMEOUT_US (no answer:
 * nothing changes). A name is resolved by that interface's own resolver (multiDNS): a portal's
 * resolver answering for it is part of what is checked.
 */
#define MH_PORTAL_PERIOD_US 60000000ULL
#define MH_PORTAL_TIMEOUT_US 3000000ULL

/* Pure: what an answer's first bytes (len of them) say: POL_LINK_FULL for a 204, or a 200 with
 * Content-Length: 0; POL_LINK_PORTAL for any other complete head; POL_LINK_UNKNOWN while the
 * head is incomplete (or not HTTP). */
enum pol_link mh_portal_verdict(const char *buf, size_t len);

/* Starts the checks that are due for the n interfaces of e (loop thread; no-op when the check
 * is off). Results land in e's netstate (mh_netstate_set_check). */
void mh_portal_check(struct mh_paths *e, const struct mh_iface *ifs, int n);

#endif
