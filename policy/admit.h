/* Admission of an object's connections: which leg may take a range now, and how much, over a snapshot the engine fills. */
#ifndef MHTTP_POLICY_ADMIT_H
#define MHTTP_POLICY_ADMIT_H

/*
 * Pure: no clock, no I/O, no engine types. The engine (multihttp/split/mh_split.c) copies what the
 * rules read into a struct pol_admit_obj before each decision; the rules never keep it.
 * Units as in policy.h: µs, bytes.
 *
 * A "leg" is one connection of the object (the program's own, an extra path's, a replica's);
 * a "path" is an interface (index into the view). The rules, each explained at its function:
 *
 *   pol_admit_policy         the policy's word on one path (plan, floor, exploring)
 *   pol_admit_leg_allowed    that, plus the plan's primary first, explorers first, the floor
 *   pol_admit_yields         a leg lets a planned path that has not joined go first
 *   pol_admit_over_share     a leg has been asked its share while another planned path has not
 *   pol_admit_share_left     the most a leg may ask now (a small object's plan)
 *   pol_admit_worth_using    the drive's question: may this leg take a range now?
 *   pol_admit_early_finish   when the plan's predicted finish bounds a new leg's queue depth
 *   pol_admit_early_budget   how much a new leg asks before its first rate sample
 */

#include <stdbool.h>
#include <stdint.h>

#include "policy/policy.h"

/* Remaining bytes from which a path nothing has measured yet may join an object (below
 * the floor, if that is higher): exploration. Only traffic through the engine measures a
 * path, so on a page of small objects the floor alone kept such a path unmeasured, and so
 * unused, for the whole process. Why 64 KiB: the extra leg's handshake started with the
 * probe, and its first chunk is the probe size (at most init_chunk = 32 KiB, the scheduler's
 * first-chunk rule); with at least twice that missing, the path already carrying the object
 * keeps at least as many bytes as the explorer takes, so the explorer ends the object later
 * only when it delivers its chunk slower than the current path delivers the same amount
 * again, and the tail re-split takes a straggler's bytes back. A 100 KiB object after a
 * 4-32 KiB probe explores; a 16 KiB one never pays. */
#define POL_ADMIT_EXPLORE_MIN (64 * 1024)

/* A leg's state as the rules see it (the engine's leg states, plus an empty slot). */
enum pol_admit_state {
  POL_ADMIT_NONE = 0,   /* no leg in this slot */
  POL_ADMIT_CONNECTING, /* its handshake is in flight */
  POL_ADMIT_READY,      /* connected: can send requests */
  POL_ADMIT_DEAD,       /* failed or closed */
};

/* One leg of the object. */
struct pol_admit_leg {
  enum pol_admit_state state;
  int path;        /* index into the view; -1: on no configured interface */
  bool primary;    /* the program's own connection */
  bool probe_leg;  /* the connection the probe went out on */
  bool no_more;    /* takes no more requests (its server said close, or it trickled) */
  bool scheduled;  /* registered with the object's scheduler (can be given ranges) */
  bool queue_full; /* its request queue is full */
  unsigned queued; /* requests outstanding */
  bool joined;     /* a range of the object (not the probe) is in flight on it */
  bool measured;   /* its throughput has been sampled (the scheduler's rate): its window is open */
  uint64_t age_us; /* CONNECTING: since its connect began (0: unknown); READY: since its first
                      request of the object (0: none yet) */
};

/* The object and its legs at the moment of a decision. Pointers are borrowed. */
struct pol_admit_obj {
  const struct pol *pol;
  const struct pol_view *view;     /* one path per interface */
  const struct pol_plan *plan;     /* NULL: no plan (size unknown, no configured interface for
                                      the program's connection, or metrics could not tell) */
  uint64_t plan_at_us;             /* when the plan was made: its predicted_us counts from then */
  uint64_t rest;                   /* bytes of the object after the probe */
  uint64_t floor;                  /* min_split_size: no measured extra path joins below it */
  uint64_t missing;                /* bytes of the object nobody has asked for */
  uint64_t unreceived;             /* bytes of the object that have not arrived (asked or not) */
  uint32_t counted;                /* paths that carried a request of this object (bit i) */
  const uint64_t *asked;           /* per path: bytes asked, the probe excepted; POL_MAX_IFACES */
  const struct pol_admit_leg *leg; /* nleg legs, in the engine's drive order */
  unsigned nleg;
};

/* The policy's word on a connection on path i (pure): primary = the program's own connection;
 * on = paths whose connections carry ranges now (bit i); missing = bytes nobody asked for yet;
 * floor = min_split_size. Without a plan: the program's connection always, others from the
 * floor on. With one: the plan's primary always, the program's connection only when in the
 * plan; extra paths only for policies that split: those in the plan from the floor on, and
 * below it when pol_worth_adding accepts them against `on` for the missing bytes; other
 * measured ones that pol_worth_adding accepts, from the floor on. With or without a plan, an
 * unmeasured (no rate), unmetered, usable path joins from min(floor, POL_ADMIT_EXPLORE_MIN)
 * on, for policies that split or without a plan: passive metrics need traffic to exist. */
bool pol_admit_policy(const struct pol *p, const struct pol_view *v, const struct pol_plan *plan, unsigned i,
                      bool primary, uint32_t on, uint64_t missing, uint64_t floor);

/* Path i has no rate yet, costs nothing, and may carry traffic: a candidate to explore. */
bool pol_admit_explorable(const struct pol_view *v, unsigned i);

/* True when the object follows a plan and what the probe left is below the floor: the extra
 * paths joined on the plan's word alone and the scheduler has no time to balance them, so
 * the share rules (pol_admit_yields, pol_admit_over_share, pol_admit_share_left) apply. */
bool pol_admit_small(const struct pol_admit_obj *o);
/* Paths whose legs carry requests now, plus the plan's primary (bit i). */
uint32_t pol_admit_on_mask(const struct pol_admit_obj *o);
/* How many legs on path i can still carry requests. */
unsigned pol_admit_alive_count(const struct pol_admit_obj *o, int i);
/* True when a connected leg on an unmeasured path, with no range yet, would be let in to
 * explore (pol_admit_policy). */
bool pol_admit_explorer_waiting(const struct pol_admit_obj *o);

/* The rules for leg k (an index into o->leg). */
bool pol_admit_leg_allowed(const struct pol_admit_obj *o, unsigned k);
bool pol_admit_yields(const struct pol_admit_obj *o, unsigned k);
bool pol_admit_over_share(const struct pol_admit_obj *o, unsigned k);
/* The most leg k may ask for now; 0 = no limit. */
uint64_t pol_admit_share_left(const struct pol_admit_obj *o, unsigned k);
bool pol_admit_worth_using(const struct pol_admit_obj *o, unsigned k);
/* True, with *finish_us the plan's predicted finish, when that bounds how many requests a leg
 * without a rate sample keeps queued (sched_early_depth); false: the engine's fixed depth. */
bool pol_admit_early_finish(const struct pol_admit_obj *o, uint64_t *finish_us);

/* Round trips of a leg's path within which its slow start decides what it carries: past them
 * its rate has settled (scheduler/sched.c's SCHED__SETTLE_RTTS) and sizes its requests. */
#define POL_ADMIT_SETTLE_RTTS 8

/* How many bytes ready leg k asks in its first requests (queued at once, before any rate sample
 * can size them), decided before its first request (never for the probe's leg); 0 when the
 * model does not apply: no large plan, a leg on a path without an RTT or a trusted rate, an
 * object that outlasts POL_ADMIT_SETTLE_RTTS of k's round trips, or one that ends after k's slow
 * start would have reached its share of the path (the engine's fixed early depth then). Every
 * alive leg is a delivery curve with its path's rate share split over the path's alive legs: a
 * measured one streams (from now with requests out, else after a round trip), a new one sends
 * slow-start rounds from the initial window one round trip after its first request (a
 * connecting one after its handshake too). The budget is what k's curve delivers by the time
 * all of them together have brought the bytes that have not arrived. So the legs of a path
 * opened together split its rounds instead of each asking the whole path's, and a path whose
 * slow start would still climb at the object's end asks what it delivers by then, no more: the
 * other paths, whose rates are measured, size the rest by Algorithm 1. */
uint64_t pol_admit_early_budget(const struct pol_admit_obj *o, unsigned k);

#endif
