/* mhttp-simulate: prints modelled vs ideal completion for link pairs and sizes, with and without pipelining, and the chunk sequences. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linkmodel.h"

struct pair {
  const char *name;
  const char *where;
  struct lm_link link[2];
};

/* The two pairs the scheduler is specified against, and the papers' asymmetric settings. */
static const struct pair pairs[] = {
    {"A", "10 ms/20 Mbit/s + 50 ms/50 Mbit/s", {{.mbps = 20, .rtt_us = 10000}, {.mbps = 50, .rtt_us = 50000}}},
    {"B", "20 ms/10 Mbit/s + 20 ms/10 Mbit/s", {{.mbps = 10, .rtt_us = 20000}, {.mbps = 10, .rtt_us = 20000}}},
    {"C",
     "10 ms/15 Mbit/s + 30 ms/10 Mbit/s (mHTTP §7.3 Ethernet+WiFi; RTTs assumed)",
     {{.mbps = 15, .rtt_us = 10000}, {.mbps = 10, .rtt_us = 30000}}},
    {"D",
     "10 ms/2 Mbit/s + 100 ms/20 Mbit/s (IANS asymmetric scenario)",
     {{.mbps = 2, .rtt_us = 10000}, {.mbps = 20, .rtt_us = 100000}}},
};

static const uint64_t sizes[] = {1ull << 20, 4ull << 20, 32ull << 20, 128ull << 20, 1ull << 30};

static const char *size_name(uint64_t n, char *buf, size_t cap) {
  if (n >= 1ull << 30)
    snprintf(buf, cap, "%llu GiB", (unsigned long long)(n >> 30));
  else
    snprintf(buf, cap, "%llu MiB", (unsigned long long)(n >> 20));
  return buf;
}

/* One link's chunk sizes in KiB, abbreviated to the first 4 and the last 3. */
static void print_chunks(const struct lm_result *r, int link) {
  size_t n = 0;
  for (size_t i = 0; i < r->nchunks; i++)
    n += r->chunks[i].link == link;
  printf("link %d:", link);
  size_t k = 0;
  for (size_t i = 0; i < r->nchunks; i++) {
    if (r->chunks[i].link != link)
      continue;
    if (k < 4 || k + 3 >= n)
      printf(" %.0f%s", r->chunks[i].len / 1024.0, r->chunks[i].kase == SCHED_CASE_RESPLIT ? "r" : "");
    else if (k == 4)
      printf(" …");
    k++;
  }
  printf(" (%zu)", n);
}

/* Plain HTTP on the better single link: handshake + request round trip + size/rate. */
static double best_single_us(const struct pair *p, uint64_t size) {
  double best = 0;
  for (int l = 0; l < 2; l++) {
    double t = size * 8.0 / (p->link[l].mbps * 1e6) * 1e6 + 2.0 * p->link[l].rtt_us;
    if (l == 0 || t < best)
      best = t;
  }
  return best;
}

/* -e: the engine's scheduler settings (multihttp/split/mh_split.c); -s: TCP slow start; -P: piece size of tail re-splits; -T: T_max in RTTs */
static bool opt_engine, opt_slow;
static double opt_piece, opt_tmax;

static int run(const struct pair *p, uint64_t size, bool pipeline, struct lm_result *res) {
  struct lm_config cfg;
  lm_config_default(&cfg);
  if (opt_engine) {
    cfg.sched.sample_min_us = 5000;
    cfg.sched.hm_window = 16;
    cfg.sched.pipeline_rtts = 4;
  }
  cfg.slow_start = opt_slow;
  cfg.sched.resplit_piece_rtts = opt_piece;
  if (opt_tmax > 0)
    cfg.sched.tmax_rtts = opt_tmax;
  cfg.size = size;
  cfg.nlinks = 2;
  cfg.link[0] = p->link[0];
  cfg.link[1] = p->link[1];
  cfg.sched.pipeline = pipeline;
  int rc = lm_run(&cfg, res);
  if (rc || res->duplicate || res->missing) {
    fprintf(stderr, "mhttp-simulate: pair %s, %llu B: model failed (%s, %llu duplicate, %llu missing bytes)\n", p->name,
            (unsigned long long)size, rc ? strerror(-rc) : "ok", (unsigned long long)res->duplicate,
            (unsigned long long)res->missing);
    return 1;
  }
  return 0;
}

static void usage(void) {
  fprintf(stderr, "usage: mhttp-simulate [-q] [-e] [-s] [-P RTTS] [-T RTTS]\n"
                  "  -q  leave out the chunk sizes\n"
                  "  -e  the engine's scheduler settings (5 ms samples, 16-sample mean, pipelining at 4 R.rtl)\n"
                  "  -s  TCP slow start on every connection\n"
                  "  -P  tail re-splits move at most RTTS round trips of bytes at a time (0: all at once)\n"
                  "  -T  T_max, the longest chunk, in round trips of its connection (default 20)\n");
}

int main(int argc, char **argv) {
  bool chunks = true;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-q")) {
      chunks = false;
    } else if (!strcmp(argv[i], "-e")) {
      opt_engine = true;
    } else if (!strcmp(argv[i], "-s")) {
      opt_slow = true;
    } else if (!strcmp(argv[i], "-P") && i + 1 < argc) {
      opt_piece = atof(argv[++i]);
    } else if (!strcmp(argv[i], "-T") && i + 1 < argc) {
      opt_tmax = atof(argv[++i]);
    } else {
      usage();
      return 2;
    }
  }
  printf("libmhttp chunk scheduler, simulated: one object over two links, one HTTP/1.1 connection\n"
         "per link (discrete-event model: TCP-like timing, no loss, no slow start). Link 0 sends\n"
         "the 32 KiB probe while link 1 does its handshake; chunk sizes follow mHTTP Algorithm 1.\n\n"
         "  ideal       size / (sum of both link rates) + one setup (a handshake and one request\n"
         "              round trip on the slower-RTT link). Not a hard floor: with unequal RTTs the\n"
         "              faster-starting link can beat it slightly (ratio < 1).\n"
         "  pipelined   libmhttp: the next request leaves before the current chunk has arrived\n"
         "  one-by-one  the mHTTP paper: the next request leaves after it (one idle RTT per chunk)\n"
         "  x           modelled / ideal; the goal for large objects is <= 1.05\n"
         "  1 link      plain HTTP on the better link alone\n"
         "  spread      how far apart the two links delivered their last byte (pipelined)\n"
         "  chunks      pipelined chunk sizes in KiB per link, in order (r = tail taken over from\n"
         "              the other link; count in brackets)\n\n");
  int bad = 0;
  for (size_t p = 0; p < sizeof(pairs) / sizeof(pairs[0]); p++) {
    printf("%s  %s\n", pairs[p].name, pairs[p].where);
    printf("   %-7s %9s  %9s %6s  %10s %6s  %9s %7s\n", "size", "ideal", "pipelined", "x", "one-by-one", "x", "1 link",
           "spread");
    for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
      struct lm_result a, b;
      char sb[32];
      if (run(&pairs[p], sizes[z], true, &a) | run(&pairs[p], sizes[z], false, &b)) {
        bad = 1;
        lm_result_free(&a);
        lm_result_free(&b);
        continue;
      }
      double spread = a.link[0].finish_us - a.link[1].finish_us;
      if (spread < 0)
        spread = -spread;
      printf("   %-7s %7.2f s  %7.2f s %5.3f  %8.2f s %5.3f  %7.2f s %4.0f ms\n", size_name(sizes[z], sb, sizeof(sb)),
             a.ideal_us / 1e6, a.completion_us / 1e6, a.completion_us / a.ideal_us, b.completion_us / 1e6,
             b.completion_us / b.ideal_us, best_single_us(&pairs[p], sizes[z]) / 1e6, spread / 1e3);
      if (chunks) {
        printf("           chunks ");
        print_chunks(&a, 0);
        printf("  ");
        print_chunks(&a, 1);
        printf("\n");
      }
      lm_result_free(&a);
      lm_result_free(&b);
    }
    printf("\n");
  }
  return bad;
}
