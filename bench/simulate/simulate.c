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
    {"C", "10 ms/15 Mbit/s + 30 ms/10 Mbit/s (mHTTP §7.3 Ethernet+WiFi; RTTs assumed)",
     {{.mbps = 15, .rtt_us = 10000}, {.mbps = 10, .rtt_us = 30000}}},
    {"D", "10 ms/2 Mbit/s + 100 ms/20 Mbit/s (IANS asymmetric scenario)",
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

/* One link's chunk sizes in KiB, abbreviated to the first 6 and the last 4. */
static void print_chunks(const struct lm_result *r, int link) {
  size_t n = 0;
  for (size_t i = 0; i < r->nchunks; i++)
    n += r->chunks[i].link == link;
  printf("      link %d (%zu chunks):", link, n);
  size_t k = 0;
  for (size_t i = 0; i < r->nchunks; i++) {
    if (r->chunks[i].link != link)
      continue;
    if (k < 6 || k + 4 >= n)
      printf(" %.0f%s", r->chunks[i].len / 1024.0, r->chunks[i].kase == SCHED_CASE_RESPLIT ? "r" : "");
    else if (k == 6)
      printf(" …");
    k++;
  }
  printf("\n");
}

static int run(const struct pair *p, uint64_t size, bool pipeline, struct lm_result *res) {
  struct lm_config cfg;
  lm_config_default(&cfg);
  cfg.size = size;
  cfg.nlinks = 2;
  cfg.link[0] = p->link[0];
  cfg.link[1] = p->link[1];
  cfg.sched.pipeline = pipeline;
  int rc = lm_run(&cfg, res);
  if (rc || res->duplicate || res->missing) {
    fprintf(stderr, "mhttp-simulate: pair %s, %llu B: model failed (%s, %llu duplicate, %llu missing bytes)\n",
            p->name, (unsigned long long)size, rc ? strerror(-rc) : "ok",
            (unsigned long long)res->duplicate, (unsigned long long)res->missing);
    return 1;
  }
  return 0;
}

static void usage(void) {
  fprintf(stderr, "usage: mhttp-simulate [-c]   (-c: also print each run's chunk sizes)\n");
}

int main(int argc, char **argv) {
  bool chunks = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-c")) {
      chunks = true;
    } else {
      usage();
      return 2;
    }
  }
  printf("libmhttp scheduler, simulated (discrete-event link model; no loss, no slow start)\n\n"
         "One object split over two links, one HTTP/1.1 connection each. Link 0 sends the 32 KiB\n"
         "probe; link 1's handshake runs meanwhile. Chunk sizes follow mHTTP Algorithm 1.\n"
         "  ideal      = size / (sum of link rates) + one setup (handshake + one request\n"
         "               round trip on the slower-RTT link)\n"
         "  pipelined  = next request sent before the current chunk drains (libmhttp)\n"
         "  one-by-one = next request only after the chunk arrived (mHTTP paper): one idle\n"
         "               round trip per chunk\n"
         "  ratio      = modelled / ideal (the target for large objects is <= 1.05)\n"
         "  spread     = difference between the two links' last bytes\n\n");
  int bad = 0;
  for (size_t p = 0; p < sizeof(pairs) / sizeof(pairs[0]); p++) {
    printf("%s: %s\n", pairs[p].name, pairs[p].where);
    printf("  %-8s %10s | %10s %6s %8s %6s | %10s %6s %8s\n", "size", "ideal", "pipelined", "ratio",
           "spread", "chunks", "one-by-one", "ratio", "idle/RTT");
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
      /* Idle time between chunks, in round trips per chunk, averaged over both links. */
      double idle = 0, rtts = 0;
      for (int l = 0; l < 2; l++) {
        if (b.link[l].gaps) {
          idle += b.link[l].gap_us;
          rtts += b.link[l].gaps * (double)pairs[p].link[l].rtt_us;
        }
      }
      printf("  %-8s %8.3f s | %8.3f s %5.3fx %6.0f ms %6zu | %8.3f s %5.3fx %8.2f\n", size_name(sizes[z], sb, sizeof(sb)),
             a.ideal_us / 1e6, a.completion_us / 1e6, a.completion_us / a.ideal_us, spread / 1e3, a.nchunks,
             b.completion_us / 1e6, b.completion_us / b.ideal_us, rtts > 0 ? idle / rtts : 0.0);
      if (chunks) {
        printf("    chunk sizes in KiB, pipelined (r = tail taken over from the other link):\n");
        print_chunks(&a, 0);
        print_chunks(&a, 1);
      }
      lm_result_free(&a);
      lm_result_free(&b);
    }
    printf("\n");
  }
  return bad;
}
