/* `mhttp ifaces`: the engine's view of the host's paths (interfaces, addresses, DNS servers, host-wide metrics), gathered and formatted. */
#ifndef CLI_IFACES_H
#define CLI_IFACES_H
#include <stddef.h>
#include <stdint.h>

/* One address of an interface with what the host-wide metrics store holds for it (0: none). */
struct cli_iface_addr {
  char addr[46];
  int has_metrics;
  uint64_t srtt_min_us, srtt_med_us;
  double max_rate; /* bytes per second */
};

struct cli_iface_row {
  char name[16];
  struct cli_iface_addr addr[2]; /* IPv4 then IPv6 when present */
  unsigned naddr;
  char dns[160];       /* "10.0.0.1, [fd00::1]:5353", "" when none */
  const char *dns_src; /* mdns_servers_src_name(), static */
};

/* The block printed for one interface (each line '\n'-terminated):
 *   wifi0
 *     address  10.201.1.2  srtt min 10.4 ms, median 11.0 ms, max 2.4 MiB/s
 *     dns      10.201.1.1 (environment)
 * Returns the length written (cut at cap). */
size_t cli_ifaces_format(const struct cli_iface_row *r, char *buf, size_t cap);

/* Prints every path the engine would use on this host and its metrics store; 0, or 2 with a
 * message on stderr when the configuration is wrong. */
int cli_ifaces(void);

#endif
