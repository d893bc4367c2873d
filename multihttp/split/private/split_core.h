/* The split's object module: its state and outcome (core), statistics, planning (the policy's view, the plan, each interface's counts), the servers besides the program's (replicas, the owner's mirrors and pins, the paths reported), a resumed object's runs, the probe's state. */
#ifndef MH_SPLIT_CORE_H
#define MH_SPLIT_CORE_H
#include "mh_split_int.h"

/* mh_split_core.c */
void mh__set_state(struct mh_split *sp, enum mh__sp_state st);
/* The object's key (mh_taint_key of its Host and request target). */
uint64_t mh__object_key(const struct mh_split *sp);
/* Remembers that the object's range answers disagreed with a whole answer (why: for the log):
 * its next download asks it whole (mh_trust_ranges_note). */
void mh__ranges_bad(struct mh_split *sp, const char *why);
void mh__restart(struct mh_split *sp, const char *note, int fresh);
void mh__finish(struct mh_split *sp, enum mh_split_end end);
void mh__verified(struct mh_split *sp);

/* mh_split_stats.c */
void mh__note(struct mh_split *sp, const char *what);
/* A leg was taken from the engine's pool (the line's "pooled"). */
void mh__note_pooled(struct mh_split *sp);
void mh__stats(struct mh_split *sp, enum mh_split_end end);

/* mh_split_plan.c (sp->pl, its own) */
/* Its state made, each interface's metrics-store index taken (0 or -ENOMEM), and freed (NULL or
 * freed twice: nothing). */
int mh__planning_new(struct mh_split *sp);
void mh__planning_free(struct mh_split *sp);
/* Interface i is new (mh_split_net.c): its metrics-store index. */
void mh__iface_added(struct mh_split *sp, int i);
/* The metrics store's snapshot of interface i (mh_metrics_snapshot: 0, or -EINVAL with its
 * metric fields zeroed when the store has none). */
int mh__iface_metrics(const struct mh_split *sp, int i, struct pol_path *m);
/* Interface i counted as carrying this transfer in the metrics store (once, at its first
 * request); mh__transfer_uncount: every one counted uncounted (the object's end). */
void mh__transfer_count(struct mh_split *sp, int i);
void mh__transfer_uncount(struct mh_split *sp);
/* What interface i did for the object: n bytes of it asked (the probe excepted; negative: given
 * back), n body bytes used, one answer (chunk) whole. */
void mh__path_asked(struct mh_split *sp, int i, int64_t n);
void mh__path_body(struct mh_split *sp, int i, uint64_t n);
void mh__path_chunk(struct mh_split *sp, int i);
/* The view of the object's paths (mh_policy_view), rebuilt by mh__build_view with what it found:
 * each interface's metrics (m), usable and reusable (bit i), and the idle time and window of its
 * most recently used idle connection. mh__view_path: path i, NULL outside the view. */
void mh__view_set(struct mh_split *sp, const struct pol_path *m, uint32_t usable, uint32_t reusable,
                  const uint64_t *idle_us, const uint64_t *window);
const struct pol_view *mh__view(const struct mh_split *sp);
const struct pol_path *mh__view_path(const struct mh_split *sp, int i);
/* The admission snapshot's planning part (pol_admit_obj: view, plan, plan_at_us, counted,
 * asked). */
void mh__plan_admit(const struct mh_split *sp, struct pol_admit_obj *o);
/* The plan made on the view for the remaining bytes (mh_policy_plan; its result), with path
 * busy_i (-1: none), if reusable, busy for busy bytes first. mh__planned: 1 once it was made;
 * mh__plan_of: the plan, NULL when none was made or the metrics could not tell; mh__plan_on: 1
 * when path i is in it, or there is none. */
int mh__plan_make(struct mh_split *sp, uint64_t remaining, int busy_i, uint64_t busy);
int mh__planned(const struct mh_split *sp);
const struct pol_plan *mh__plan_of(const struct mh_split *sp);
int mh__plan_on(const struct mh_split *sp, int i);
/* The stats line's and the logs' parts: the decision as JSON members appended at len
 * (mh_policy_json on the view the plan was made on; len when none was made), and each
 * interface's {"iface","bytes","chunks"} appended at n while n < cap - 200. Return the new
 * length. */
size_t mh__plan_json(const struct mh_split *sp, char *buf, size_t cap, size_t len);
int mh__path_stats_json(const struct mh_split *sp, char *buf, size_t cap, int n);

/* mh_split_servers.c (sp->sv, its own) */
/* Its state made, with each server's pool key and the owner's pins and mirrors copied (0,
 * -ENOMEM, or -ENOTSUP: the program's transport has no pool key), and freed (NULL or freed
 * twice: nothing). */
int mh__servers_new(struct mh_split *sp, const struct mh_split_owner *own);
void mh__servers_free(struct mh_split *sp);
/* The pool key a leg of mirror k (0: the program's server) is pooled under. */
const char *mh__xport_of(const struct mh_split *sp, int mirror);
/* 1 while mirror k (from 1) is in the object: taken from the owner, never answered otherwise. */
int mh__mirror_in(const struct mh_split *sp, int mirror);
void mh__mirror_drop(struct mh_split *sp, int mirror, const char *why);
/* 1 when the owner gave mirrors or pins: servers besides the program's on any interface. */
int mh__owner_servers(const struct mh_split *sp);
/* Pinned replicas serving on interface i (ports zero, as a resolver's answer): up to max. */
int mh__pins_on(const struct mh_split *sp, int i, struct sockaddr_storage *out, int max);
/* Replicas and mirrors may join from now (the probe's validator is strong); each interface's
 * legs to the program's server wait for its own resolver at most MH__DNS_HOLD_US from now. */
void mh__replicas_allow(struct mh_split *sp);
int mh__replicas_allowed(const struct mh_split *sp);
/* A replica interface i's resolver named answered a range as the probe did (noted; asked). */
void mh__replica_agreed(struct mh_split *sp, int i);
int mh__replica_ok(const struct mh_split *sp, int i);
/* 1 while the legs to the program's server may still wait for a named replica's first answer
 * (MH__REPLICA_WAIT_US past the resolvers' hold). */
int mh__replica_wait_due(const struct mh_split *sp, uint64_t now);
/* 1 while interface i's resolver is still to answer within the hold. */
int mh__dns_hold_due(const struct mh_split *sp, int i, uint64_t now);
/* Interface i's legs held for its resolver (hold), or not, for good (released); 1 when that
 * changed whether they are held. */
int mh__dns_hold(struct mh_split *sp, int i, int hold);
int mh__dns_released(const struct mh_split *sp, int i);
/* The (interface, mirror, address) triples given a leg, each once: 1 when *a is added now, 0
 * when it had one, -ENOSPC when the table is full; mh__tried_new: 1 when it would be added. */
int mh__tried_add(struct mh_split *sp, int i, int mirror, const struct sockaddr_storage *a);
int mh__tried_new(const struct mh_split *sp, int i, int mirror, const struct sockaddr_storage *a);
/* The (interface, server) paths reported (mh_split_paths): the index of (iface, mirror, addr),
 * added when new (-1: none); n body bytes of g's used by the object; g's server leaving it. */
int mh__srv_of(struct mh_split *sp, int iface, int mirror, const struct sockaddr *addr);
void mh__srv_count_bytes(struct mh_split *sp, const struct mh__leg *g, uint64_t n);
void mh__srv_drop(struct mh_split *sp, const struct mh__leg *g, int err, const char *why);

/* mh_split_resume.c */
int mh__have_copy(struct mh_split *sp, const struct mh_split_have *h);
void mh__have_apply(struct mh_split *sp);
void mh__have_free(struct mh_split *sp);

/* mh_split_probe_state.c: the probe's state (struct mh__probe, sp->pr), made at the start and
 * freed at the end (NULL or freed twice: nothing); mh_split_probe.c sends, moves and judges the
 * probe through these. */
int mh__probe_new(struct mh_split *sp);
void mh__probe_free(struct mh_split *sp);
/* The probe goes out on g (moved: not the program's connection, mh__probe_move), which the
 * stats line names. */
void mh__probe_on(struct mh_split *sp, struct mh__leg *g, int moved);
/* Its leg, no longer the probe's (mh__probe_fallback drops it); its interface stays named. */
struct mh__leg *mh__probe_leg_release(struct mh_split *sp);
/* Its leg (NULL: released) and that leg's interface. */
struct mh__leg *mh__probe_leg(const struct mh_split *sp);
int mh__probe_iface(const struct mh_split *sp);
/* 1 when it is not on the program's connection: that connection's state is then never its answer. */
int mh__probe_moved(const struct mh_split *sp);
/* 1 when g is its leg and its answer is still due there (the head of g's queue). */
int mh__probe_due(const struct mh_split *sp, const struct mh__leg *g);
/* The bytes it asked for (the stats line). */
void mh__probe_asked(struct mh_split *sp, uint64_t len);
/* Its answer on the program's connection as read, kept (at most MH__RAW_CAP) for a relay: the
 * room left, n more bytes kept, and a 1xx answer that ended `after` bytes before their end. */
size_t mh__probe_raw_room(const struct mh_split *sp);
void mh__probe_raw_keep(struct mh_split *sp, const char *buf, size_t n);
void mh__probe_interim_ends(struct mh_split *sp, size_t after);
/* The 1xx answers kept and not passed on yet (into *p, when any and p is given): their length;
 * n of them passed on (or dropped). */
size_t mh__probe_interim(const struct mh_split *sp, const char **p);
void mh__probe_interim_sent(struct mh_split *sp, size_t n);
/* What a relay gives the program (into *p, when any): the bytes kept past the 1xx answers it
 * has; their length. */
size_t mh__probe_relay(const struct mh_split *sp, const char **p);
/* Its answer's head becomes the object's: buf (its names and values) and h (n lines viewing
 * buf), both owned from now on, and info, their verdict (its views into buf). */
void mh__probe_take_head(struct mh_split *sp, char *buf, struct mh_hdr *h, size_t n, const struct mh_probe_info *info);
/* Its verdict: the bytes it answered, the object's total, its validators. */
const struct mh_probe_info *mh__probe_info(const struct mh_split *sp);
/* Its head's lines (*h, the count returned): what the program's head is rewritten from. */
size_t mh__probe_hdrs(const struct mh_split *sp, const struct mh_hdr **h);
/* The end of the probe's bytes in the split's offsets (mh__span): how much of sp->total it brought. */
uint64_t mh__probe_end(const struct mh_split *sp);
/* The strong validator every later range carries in If-Range (NULL: none; *len its length). */
const char *mh__probe_if_range(const struct mh_split *sp, size_t *len);
/* That validator copied NUL-terminated and kept for the owner (mh_split_validator), returned;
 * NULL: none (or no memory). */
const char *mh__probe_validator_keep(struct mh_split *sp);
/* Its usable answer is taken now (the stats line's probe_ms). */
void mh__probe_timed(struct mh_split *sp);
/* SP_VERIFY began now; 1 once it has lasted past MH__PROBE_STALL_US (mh__verify_plain). */
void mh__probe_verify_begins(struct mh_split *sp);
int mh__probe_verify_overdue(const struct mh_split *sp);
/* The answer for the object's last bytes agreed with the probe (mh__verified ends SP_VERIFY on it). */
void mh__probe_agree_end(struct mh_split *sp);
int mh__probe_end_agreed(const struct mh_split *sp);
/* 1 the first time interface iface is noted as agreeing with the probe's path about the
 * server (mh_trust.h: once per object and interface). */
int mh__probe_trust_once(struct mh_split *sp, int iface);
/* Its members of the MHTTP_STATS line into out (cap bytes): snprintf's result. */
int mh__probe_stats(const struct mh_split *sp, char *out, size_t cap);

#endif
