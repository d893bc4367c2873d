/* A fake DNS server for tests: a UDP socket on 127.0.0.1 served by a thread, answering A/AAAA from a table. */
#ifndef MHTTP_TESTS_MULTIDNS_FAKEDNS_H
#define MHTTP_TESTS_MULTIDNS_FAKEDNS_H

#include <stddef.h>
#include <stdint.h>

#define FAKEDNS_A 1
#define FAKEDNS_AAAA 28

/* One answer record. A name present with no record of the asked type gets NOERROR/NODATA;
 * a name absent from the table gets NXDOMAIN. */
struct fakedns_rec {
  const char *name; /* lowercase, no trailing dot */
  int type;         /* FAKEDNS_A or FAKEDNS_AAAA */
  const char *addr;
  uint32_t ttl;
};

struct fakedns;

/* Starts the server thread. `silent` makes it read and count queries but never answer (a dead
 * resolver). The table is copied by pointer: it must outlive the server. Returns 0 or -errno. */
int fakedns_start(const struct fakedns_rec *recs, size_t n, int silent, struct fakedns **out);

/* The UDP port it listens on (127.0.0.1). */
uint16_t fakedns_port(const struct fakedns *s);

/* Switches between answering and silence (thread-safe). */
void fakedns_set_silent(struct fakedns *s, int silent);

/* Holds answers until `n` are ready, then sends them back to back, so the client reads them
 * in one go (n <= 8; 0 or 1: answer at once). Set before the queries arrive. */
void fakedns_set_batch(struct fakedns *s, int n);

/* Number of queries received for (name, type); name NULL counts every query (thread-safe). */
unsigned fakedns_queries(struct fakedns *s, const char *name, int type);

/* Stops the thread (within ~50 ms) and frees the server. */
void fakedns_stop(struct fakedns *s);

#endif
