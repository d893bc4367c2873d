/* Trust glue: a path's agreement or disagreement with another about a destination, and objects whose range answers disagreed with a whole answer, noted in the engine's store copy (this process and the host-wide file) and read back for the split's probe placement and start. */
#ifndef MH_TRUST_H
#define MH_TRUST_H
#include <stdint.h>
#include <sys/socket.h>

#include "policy/store.h"
#include "policy/trust.h"

struct mh_config;
struct mh_paths;
struct mh_iface;

/* The destination key of a server address (pol_trust_dest of its family and address; the
 * port is not part of it). 0 for another family. */
uint64_t mh_trust_dest(const struct sockaddr *sa);

/* The store key of interface ifc in namespace netns (0: not shared host-wide). */
void mh_trust_key(uint64_t netns, const struct mh_iface *ifc, struct pol_store_key *k);

/* Notes on the loop of paths e that ifc's answer about dst agreed or disagreed with another
 * path's (why: for the log). */
void mh_trust_note(struct mh_paths *e, const struct mh_iface *ifc, const struct sockaddr *dst, enum pol_trust_state st,
                   const char *why);

/* What paths e know of ifc for dst (this process's notes and the host-wide store's). Loop
 * thread. */
enum pol_trust_state mh_trust_of(struct mh_paths *e, const struct mh_iface *ifc, const struct sockaddr *dst);

/* Notes on the loop of paths e that object obj's range answers disagreed with a whole answer
 * (policy/store.h's POL_STORE_RANGES_IFNAME; obj: mh_taint_key; why: for the log). */
void mh_trust_ranges_note(struct mh_paths *e, uint64_t obj, const char *why);

/* 1 when obj's range answers disagreed here or in another process within
 * POL_TRUST_DISAGREED_US: its request goes out whole, not split. Loop thread. */
int mh_trust_ranges_bad(struct mh_paths *e, uint64_t obj);

/* 1 when the configuration names the path itself (single:IF): the user's choice is not second-
 * guessed by trust. */
int mh_trust_exempt(const struct mh_config *cfg);

#endif
