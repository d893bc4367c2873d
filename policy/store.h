/* Host-wide metrics records: per path, the best values of the last 5 minutes in 30 s slots, merged into a policy's view and encoded as a fixed-size checked file image. Pure. */
#ifndef MHTTP_POLICY_STORE_H
#define MHTTP_POLICY_STORE_H

/*
 * Why: a process starts with an empty pol_metrics; a second program on the same host would
 * decide blind although the first one measured the same paths seconds ago. The metrics
 * paper (§3) keeps measurements 5 minutes in a host daemon; here every process using
 * libmhttp reads and writes one file holding this image (multihttp/paths/mh_mstore.c does the
 * file, lock and namespace work; everything here is pure: time is an argument, any
 * monotonic µs clock shared by the processes, CLOCK_MONOTONIC in practice).
 *
 * A path is (network namespace cookie, interface name + ifindex, local address): the
 * testbeds re-create namespaces with the same names and addresses but other link shaping,
 * so the cookie (unique per boot) keeps an old namespace's record from being applied. A
 * record keeps POL_STORE_SLOTS slots of POL_STORE_SLOT_US: per slot the lowest SRTT, the
 * highest download rate and the latest median SRTT observed in it, each with its time. A
 * value counts while now - its time < POL_METRICS_EXPIRY_US (5 minutes): then it is gone.
 * Active transfers and connections are per-process state and are not stored. A record also
 * keeps the path's trust per destination (policy/trust.h): a disagreement one process saw
 * keeps the next one from binding a program's connection to that path.
 */

#include <stddef.h>
#include <stdint.h>

#include "policy/metrics.h"
#include "policy/policy.h"
#include "policy/trust.h"

#define POL_STORE_SLOTS 10u
#define POL_STORE_SLOT_US 30000000ULL /* 10 × 30 s = the paper's 5 minutes */
#define POL_STORE_RECORDS 32u         /* paths the host remembers (least recent evicted) */
#define POL_STORE_MAGIC 0x4d485453u   /* "MHTS" */
#define POL_STORE_VERSION 2u          /* 2: the path's trust per destination */
#define POL_STORE_HDR_SIZE 24u
#define POL_STORE_TRUST_OFF (56u + POL_STORE_SLOTS * 48u)
#define POL_STORE_REC_SIZE (POL_STORE_TRUST_OFF + POL_TRUST_DESTS * 24u + 8u)
#define POL_STORE_FILE_SIZE (POL_STORE_HDR_SIZE + POL_STORE_RECORDS * POL_STORE_REC_SIZE)

/* A record that names no path (':' is in no interface name): its trust entries are objects
 * (mh_taint_key of their Host and target, in the destination's place) whose range answers
 * disagreed with a whole answer, the origin's ranges trickling on every path or the probe's
 * answer reset or cut. POL_TRUST_DISAGREED for as long as a disagreement counts: the next
 * download of the object, in any process, asks it whole instead of paying to learn it again. */
#define POL_STORE_RANGES_IFNAME "ranges:"

/* Which path a record describes. netns 0 means "namespace unknown": never stored. */
struct pol_store_key {
  uint64_t netns; /* SO_NETNS_COOKIE */
  uint32_t ifindex;
  char ifname[POL_IFNAME_MAX]; /* NUL-terminated */
  uint8_t family;              /* AF_INET or AF_INET6 (the number, not interpreted) */
  uint8_t addr[16];            /* local address: 4 bytes for IPv4, the rest zero */
};

/* Observations, or (from pol_store_get) the best still valid; 0 = none. */
struct pol_store_obs {
  uint64_t srtt_min_us, srtt_min_at;
  uint64_t srtt_med_us, srtt_med_at;
  double max_rate; /* bytes per second */
  uint64_t max_rate_at;
};

struct pol_store_rec {
  struct pol_store_key key;
  uint64_t updated_us; /* 0: the record is free */
  struct pol_store_obs slot[POL_STORE_SLOTS];
  struct pol_trust trust;
};

/* A decoded image (~17 KiB): plain memory, owned by the caller, no allocation. */
struct pol_store {
  struct pol_store_rec rec[POL_STORE_RECORDS];
};

/* Empties the store. */
void pol_store_init(struct pol_store *s);

/* Records observations of path k at now_us into the slot of now (a slot last used more than
 * one round ago is cleared first): the slot keeps the lower SRTT min, the higher rate, the
 * later median; zero fields are no observation. A new path takes a free record, else one
 * with nothing valid left, else the least recently updated. Returns 0, or -EINVAL (netns 0,
 * unterminated name, or nothing observed). */
int pol_store_put(struct pol_store *s, const struct pol_store_key *k, const struct pol_store_obs *o, uint64_t now_us);

/* The best values of path k still valid at now_us: lowest SRTT min, highest rate, latest
 * median, with their times. Returns 0 (*out filled, some field set) or -ENOENT (nothing
 * valid: *out zeroed). */
int pol_store_get(const struct pol_store *s, const struct pol_store_key *k, uint64_t now_us, struct pol_store_obs *out);

/* Notes path k's trust for dest at now_us (pol_trust_note) in its record, taking one as
 * pol_store_put does when the path has none. Returns pol_trust_note's answer (1: changed), or
 * -EINVAL (netns 0, unterminated name, dest 0 or an unknown state). */
int pol_store_trust_put(struct pol_store *s, const struct pol_store_key *k, uint64_t dest, enum pol_trust_state st,
                        uint64_t now_us);

/* Path k's trust entries (zeroed when it has no record). */
void pol_store_trust_get(const struct pol_store *s, const struct pol_store_key *k, struct pol_trust *out);

/* Merges host-wide values into a policy's path (metric fields only): the lower non-zero
 * SRTT min, the higher max rate; the local median when the process has one, else the host's.
 * cur_rate, transfers and conns stay local. */
void pol_store_merge(struct pol_path *p, const struct pol_store_obs *host);

/* Writes the POL_STORE_FILE_SIZE-byte image of s into buf (little-endian, each record with
 * a checksum), stamped with `boot` (a hash of the kernel's boot id: CLOCK_MONOTONIC and
 * namespace cookies start over at each boot, and /tmp may survive one). Returns
 * POL_STORE_FILE_SIZE, or -ENOSPC when cap is smaller. */
int pol_store_encode(const struct pol_store *s, uint64_t boot, uint8_t *buf, size_t cap);

/* Decodes an image read from a file that anyone may have damaged. A wrong length, magic,
 * version, geometry or boot gives an empty store and -EINVAL; otherwise each record whose checksum,
 * name, or values fail (a time after now_us, a median below the min, a rate that is not a
 * finite positive number) is dropped and the count of records kept is returned. Never reads
 * past len. */
int pol_store_decode(struct pol_store *s, const uint8_t *buf, size_t len, uint64_t boot, uint64_t now_us);

#endif
