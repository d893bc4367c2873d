/* pol_trickle_judge: a connection far below its share is told from one in slow start, behind a slow link, or silent. */
#include <criterion/criterion.h>

#include "policy/trickle.h"

struct row {
  const char *what;
  struct pol_trickle_in in; /* elapsed, bytes, quiet, rtt, share, slots, low_before */
  enum pol_trickle want;
};

/* Rates: a 20 Mbit/s path is 2 500 000 B/s; one segment per 10 ms round trip is 144 800 B/s.
 * Slots are 50 ms; a paced window lasts 1.5 s. */
/* clang-format off */
static const struct row rows[] = {
    /* 100 B/s in 10-byte steps every 100 ms on a 10 ms, 20 Mbit/s path, one connection: its
     * fourth read (300 ms) is spread over four slots */
    {"trickle at 100 B/s", {300000, 40, 0, 10000, 2500000, 4, 0}, POL_TRICKLE_SLOW},
    {"its third read", {200000, 30, 0, 10000, 2500000, 3, 0}, POL_TRICKLE_WAIT},
    {"too soon for a round trip", {39999, 40, 0, 10000, 2500000, 4, 0}, POL_TRICKLE_WAIT},
    /* 50 ms round trips: 4 of them (200 ms) before a verdict */
    {"long round trips wait longer", {199999, 20, 0, 50000, 2500000, 4, 0}, POL_TRICKLE_WAIT},
    {"then it trickles", {200000, 20, 0, 50000, 2500000, 4, 0}, POL_TRICKLE_SLOW},
    /* slow start from a 14 600 B initial window over 4 round trips of 10 ms: far above both
     * limits (5 792 B, one segment per round trip, and 12 500 B, 1/8 of the share) */
    {"slow start is not a trickle", {40000, 14600 * 3, 0, 10000, 2500000, 1, 0}, POL_TRICKLE_FINE},
    {"one initial window", {40000, 14600, 0, 10000, 2500000, 1, 0}, POL_TRICKLE_FINE},
    /* a few KiB, then a retransmission timeout's silence: not a trickle (4 paced windows) */
    {"a burst then silence", {6000000, 5000, 5000000, 10000, 2500000, 1, 0}, POL_TRICKLE_FINE},
    {"a burst then silence so far", {5999999, 5000, 5000000, 10000, 2500000, 1, 0}, POL_TRICKLE_WAIT},
    /* 10 B every 100 ms seen by a 100 ms tick: the opening read alone, then the next one */
    {"the opening read alone", {78000, 10, 78000, 10000, 2500000, 1, 0}, POL_TRICKLE_WAIT},
    /* nginx's limit_rate 1m between two releases (CI at ccc05f4, lte0): 1 672 B in 483 ms
     * in two clumps crawls, but a pacer's dribble is not spread: wait for the release */
    {"a paced server's dribble", {483000, 1672, 0, 51444, 7039962, 2, 0}, POL_TRICKLE_WAIT},
    {"then its release", {1300000, 1048576 + 1672, 0, 51444, 7039962, 3, 0}, POL_TRICKLE_FINE},
    {"a dribble, no release in 1.5 s", {1500000, 1672, 0, 51444, 7039962, 2, 0}, POL_TRICKLE_SLOW},
    /* a trickle in one read per second: not spread, judged over a paced window */
    {"a read per second", {1000000, 200, 0, 10000, 2500000, 2, 0}, POL_TRICKLE_WAIT},
    {"a read per second, 1.5 s", {1500000, 200, 0, 10000, 2500000, 2, 0}, POL_TRICKLE_SLOW},
    /* 5 000 B in 200 ms: low, but not a crawl (724 B): a second paced window condemns it */
    {"low, not a crawl, waits", {200000, 5000, 100000, 10000, 2500000, 4, 0}, POL_TRICKLE_WAIT},
    {"low once", {1500000, 100000, 700000, 10000, 2500000, 30, 0}, POL_TRICKLE_LOW},
    {"low twice", {1500000, 100000, 700000, 10000, 2500000, 30, 1}, POL_TRICKLE_SLOW},
    {"low, then recovered", {1500000, 900000, 0, 10000, 2500000, 30, 1}, POL_TRICKLE_FINE},
    /* a 56 kbit/s link (7 000 B/s measured), 100 ms: 2 800 B in 400 ms is its whole share */
    {"behind a slow link", {400000, 2800, 0, 100000, 7000, 8, 0}, POL_TRICKLE_FINE},
    {"a slow link's rate, share unknown", {400000, 2800, 0, 100000, 0, 8, 0}, POL_TRICKLE_FINE},
    /* below one eighth of a 2 500 000 B/s share (62 500 B in 200 ms) but above one segment
     * per round trip (28 960 B): the path may just be busier than it was measured */
    {"busier than measured", {200000, 40000, 0, 10000, 2500000, 4, 0}, POL_TRICKLE_FINE},
    /* share unknown: one segment per round trip over eight is the yardstick (3 620 B) */
    {"share unknown, trickling", {200000, 3000, 0, 10000, 0, 4, 0}, POL_TRICKLE_SLOW},
    {"share unknown, one segment per round trip", {200000, 28960, 0, 10000, 0, 4, 0}, POL_TRICKLE_FINE},
    /* sixteen connections share the path: 156 250 B/s each, 3 906 B per 200 ms is the bar */
    {"a crowded path's share", {200000, 5000, 0, 10000, 2500000.0 / 16, 4, 0}, POL_TRICKLE_FINE},
    {"below a crowded path's share", {200000, 3000, 0, 10000, 2500000.0 / 16, 4, 0}, POL_TRICKLE_SLOW},
    /* a loopback round trip counts as 10 ms: a fast local server is never a trickle */
    {"sub-millisecond round trip", {40000, 1000000, 0, 50, 1e9, 1, 0}, POL_TRICKLE_FINE},
    {"sub-millisecond round trip waits 40 ms", {39999, 10, 0, 50, 1e9, 1, 0}, POL_TRICKLE_WAIT},
    {"silence is the stall rule's", {5000000, 0, 5000000, 10000, 2500000, 0, 0}, POL_TRICKLE_FINE},
    {"no round trip known", {200000, 10, 0, 0, 0, 4, 0}, POL_TRICKLE_SLOW},
};
/* clang-format on */

Test(trickle, table) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    cr_expect_eq(pol_trickle_judge(&rows[i].in), rows[i].want, "%s", rows[i].what);
}

Test(trickle, window) {
  cr_assert_eq(pol_trickle_window_us(0), 40000);
  cr_assert_eq(pol_trickle_window_us(10000), 40000);
  cr_assert_eq(pol_trickle_window_us(50000), 200000);
}

/* pol_trickle_crawling: what another path's trickle verdict lets the engine condemn at once */
struct crawl_row {
  const char *what;
  struct pol_trickle_in in;
  int want;
};
/* clang-format off */
static const struct crawl_row crawl_rows[] = {
    /* 100 B/s from the 255th ms of a window that opened 177 ms before: 20 B over two slots */
    {"a young trickle", {177000, 20, 30000, 10000, 347520, 2, 0}, 1},
    {"one round trip's window is too short", {39999, 20, 0, 10000, 347520, 1, 0}, 0},
    {"nothing yet", {177000, 0, 177000, 10000, 347520, 0, 0}, 0},
    {"a burst, then quiet", {177000, 20, 100000, 10000, 347520, 1, 0}, 0},
    /* slow start over four round trips of 10 ms: far above a crawl */
    {"slow start", {40000, 14600, 0, 10000, 2500000, 1, 0}, 0},
    /* 1 672 B in 483 ms at 51 ms round trips is below 1/8 of a segment per round trip: a
     * pacer's dribble crawls too; only another path's own spread verdict makes it count */
    {"a paced server's dribble", {483000, 1672, 0, 51444, 7039962, 2, 0}, 1},
    {"low but not a crawl", {200000, 5000, 0, 10000, 2500000, 4, 0}, 0},
    {"behind a slow link", {400000, 2800, 0, 100000, 7000, 8, 0}, 0},
};
/* clang-format on */

/* Each row of a table through one of the window's yes/no rules. */
static void expect_rows(const struct crawl_row *rows, size_t n, int (*rule)(const struct pol_trickle_in *)) {
  for (size_t i = 0; i < n; i++)
    cr_expect_eq(rule(&rows[i].in), rows[i].want, "%s", rows[i].what);
}

Test(trickle, crawling) { expect_rows(crawl_rows, sizeof crawl_rows / sizeof crawl_rows[0], pol_trickle_crawling); }

/* pol_trickle_quiet: a window that says nothing of the connection's present rate */
/* clang-format off */
static const struct crawl_row quiet_rows[] = {
    /* lr-trickle after 64 KiB (CI's faults_slow, a rescue's new connection): 65 546 B in its
     * first 31 ms, then nothing for 47 ms */
    {"a range's burst, then quiet", {77846, 65546, 46557, 10159, 809243, 2, 0}, 1},
    {"the burst just ended", {38474, 65546, 7185, 10159, 809243, 1, 0}, 0},
    {"too short for a round trip's window", {39999, 65546, 39000, 10000, 2500000, 1, 0}, 0},
    {"bytes still coming", {100000, 250000, 0, 10000, 2500000, 2, 0}, 0},
    {"quiet for half of it exactly", {100000, 65536, 50000, 10000, 2500000, 1, 0}, 0},
    {"nothing at all (the stall rule's)", {100000, 0, 100000, 10000, 2500000, 0, 0}, 0},
    /* a crawl's second read just came: it crawls, it is not quiet */
    {"a crawl", {100054, 20, 54, 10158, 2500000, 3, 0}, 0},
};
/* clang-format on */

Test(trickle, quiet) { expect_rows(quiet_rows, sizeof quiet_rows / sizeof quiet_rows[0], pol_trickle_quiet); }

struct reopen_row {
  const char *what;
  uint64_t window_bytes, gap_us, read_len, rtt_us;
  int want;
};

/* lr-trickle after 64 KiB: a range's first 64 KiB at 2.5 MB/s, then 10 B every 100 ms */
/* clang-format off */
static const struct reopen_row reopen_rows[] = {
    {"a crawl's first read after a burst", 65536, 100000, 10, 10000, 1},
    {"gap shorter than the window (4 round trips of 10 ms)", 65536, 39999, 10, 10000, 0},
    {"gap of the window", 65536, 40000, 10, 10000, 1},
    {"long round trips: 4 x 50 ms", 65536, 199999, 10, 50000, 0},
    {"unknown round trip: 4 x 10 ms", 65536, 40000, 10, 0, 1},
    /* slow start's next flight after a quiet round trip is a burst, not a crawl */
    {"the next flight", 14480, 100000, 14480, 10000, 0},
    {"a segment is not a crawl's read", 65536, 100000, 1448, 10000, 0},
    {"a crawl's window stays one window", 40, 100000, 10, 10000, 0},
    {"just under a segment before", 1447, 100000, 10, 10000, 0},
};
/* clang-format on */

Test(trickle, reopens) {
  for (size_t i = 0; i < sizeof reopen_rows / sizeof reopen_rows[0]; i++) {
    const struct reopen_row *r = &reopen_rows[i];
    cr_expect_eq(pol_trickle_reopens(r->window_bytes, r->gap_us, r->read_len, r->rtt_us), r->want, "%s", r->what);
  }
}

/* pol_trickle_creeping: the crawls every path may show at once without a verdict first */
/* clang-format off */
static const struct crawl_row creep_rows[] = {
    {"100 B/s at 10 ms round trips", {100054, 20, 54, 10158, 2500000, 3, 0}, 1},
    {"100 B/s at 50 ms round trips", {400000, 40, 0, 50000, 2500000, 5, 0}, 1},
    /* nginx's limit_rate between releases crawls, but does not creep */
    {"a paced server's dribble", {483000, 1672, 0, 51444, 7039962, 2, 0}, 0},
    {"not a crawl", {200000, 5000, 0, 10000, 2500000, 4, 0}, 0},
    {"one read so far", {177000, 20, 100000, 10000, 347520, 1, 0}, 0},
};
/* clang-format on */

Test(trickle, creeping) { expect_rows(creep_rows, sizeof creep_rows / sizeof creep_rows[0], pol_trickle_creeping); }

/* pol_trickle_hedge_wait: µs until every path has been quiet for 3 of its round trips (each at
 * least 10 ms) with an answer begun; 0 now, UINT64_MAX never. */
struct hedge_row {
  const char *what;
  struct pol_hedge_path p[3]; /* begun, busy, quiet, rtt */
  unsigned n;
  uint64_t want;
};

/* clang-format off */
static const struct hedge_row hedge_rows[] = {
    /* two 10 ms paths whose range answers began, then a crawl's silence (lr-trickle: 40 ms and
     * 33 ms after their heads) */
    {"both quiet long enough", {{1, 0, 40000, 10000}, {1, 0, 33000, 10000}}, 2, 0},
    {"the later one waits", {{1, 0, 40000, 10000}, {1, 0, 12000, 10000}}, 2, 18000},
    {"exactly three round trips", {{1, 0, 30000, 10000}, {1, 0, 30000, 10000}}, 2, 0},
    /* a byte every round trip (a sending connection) is never quiet for long: wait again */
    {"a path still reading", {{1, 0, 40000, 10000}, {1, 0, 9000, 10000}}, 2, 21000},
    /* the round trip's floor: 2 ms on a LAN counts as 10 ms */
    {"short round trips count 10 ms", {{1, 0, 25000, 2000}, {1, 0, 30000, 2000}}, 2, 5000},
    {"long round trips wait longer", {{1, 0, 100000, 50000}, {1, 0, 160000, 10000}}, 2, 50000},
    {"unknown round trip: the floor", {{1, 0, 30000, 0}, {1, 0, 30000, 0}}, 2, 0},
    /* a path whose answers have not begun (a request's latency), or that waits on us (a full
     * window, the probe still out), says nothing of the origin */
    {"a path not begun", {{1, 0, 90000, 10000}, {0, 0, 90000, 10000}}, 2, UINT64_MAX},
    {"a path paused by us", {{1, 0, 90000, 10000}, {1, 1, 90000, 10000}}, 2, UINT64_MAX},
    {"one path only", {{1, 0, 90000, 10000}}, 1, UINT64_MAX},
    {"three paths, one still reading", {{1, 0, 90000, 10000}, {1, 0, 90000, 10000}, {1, 0, 0, 10000}}, 3, 30000},
    /* a path judged slow already counts as quiet for ever (the engine passes UINT64_MAX) */
    {"a path already slow", {{1, 0, UINT64_MAX, 10000}, {1, 0, 31000, 10000}}, 2, 0},
};
/* clang-format on */

Test(trickle, hedge_wait) {
  for (size_t i = 0; i < sizeof hedge_rows / sizeof hedge_rows[0]; i++) {
    const struct hedge_row *r = &hedge_rows[i];
    cr_expect_eq(pol_trickle_hedge_wait(r->p, r->n), r->want, "%s: %llu, want %llu", r->what,
                 (unsigned long long)pol_trickle_hedge_wait(r->p, r->n), (unsigned long long)r->want);
  }
}
