/* Discovery of each interface's own DNS servers: config/env, systemd-resolved, resolv.conf. */
#ifndef MHTTP_MULTIDNS_SERVERS_H
#define MHTTP_MULTIDNS_SERVERS_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

/* Runs on whichever thread builds the configuration (the engine loop at start-up); reads a few
 * small files synchronously, once per interface. No state of its own. */

#define MDNS_SERVERS_MAX 8

struct mdns_server {
  int family;    /* AF_INET or AF_INET6 */
  uint16_t port; /* host byte order; 53 unless given */
  union {
    struct in_addr v4;
    struct in6_addr v6;
  } addr;
};

struct mdns_server_list {
  size_t n;
  struct mdns_server s[MDNS_SERVERS_MAX];
};

/* Where a server list came from, in the order discovery tries them. */
enum mdns_server_src {
  MDNS_SERVERS_NONE = 0,    /* nothing found: this interface gets no channel */
  MDNS_SERVERS_ENV,         /* MHTTP_DNS_<iface> */
  MDNS_SERVERS_CONFIG,      /* the configuration file's per-interface value */
  MDNS_SERVERS_RESOLVED,    /* systemd-resolved's per-link state, SERVERS= */
  MDNS_SERVERS_RESOLV_CONF, /* /etc/resolv.conf, default-route interface only */
};

/* File locations and the environment, injectable for tests. A NULL member means the system
 * default shown in brackets. */
struct mdns_discovery {
  const char *resolv_conf;                 /* [/etc/resolv.conf] */
  const char *resolved_netif;              /* [/run/systemd/resolve/netif], files named by ifindex */
  const char *proc_route;                  /* [/proc/net/route] */
  const char *proc_ipv6_route;             /* [/proc/net/ipv6_route] */
  const char *(*getenv)(const char *name); /* [secure_getenv: ignore env in setuid programs] */
};

/* Parses a server list: addresses separated by commas or blanks, each "1.2.3.4",
 * "1.2.3.4:5353", "2001:db8::1" or "[2001:db8::1]:5353"; systemd-resolved's "addr#name" and
 * "%ifindex" suffixes are accepted and dropped. At most MDNS_SERVERS_MAX are kept; duplicates
 * are dropped. Link-local IPv6 servers are skipped (c-ares 1.18 cannot carry their scope).
 * Returns the number of servers parsed (0 for an empty string), or -EINVAL at the first
 * malformed token (so a typo in MHTTP_DNS_<iface> is an error, not a silent fallback). */
int mdns_servers_parse(const char *text, struct mdns_server_list *out);

/* Name of the environment variable for an interface: "MHTTP_DNS_" + the name with every
 * character that is not [A-Za-z0-9_] turned into '_' ("eth0.100" → MHTTP_DNS_eth0_100).
 * Returns 0 or -ENOSPC. */
int mdns_servers_env_name(const char *ifname, char *out, size_t len);

/* Kernel name of the interface holding the default route: the lowest-metric IPv4 default
 * route, else the lowest-metric IPv6 one (reject and loopback routes ignored).
 * Returns 0, -ENOENT (no default route) or -errno from reading the files. */
int mdns_servers_default_iface(const struct mdns_discovery *d, char *ifname, size_t len);

/* Finds the DNS servers of one interface, trying in order: MHTTP_DNS_<ifname> (when set, even
 * to an empty value, which means "no harvest on this interface"), `configured`
 * (the configuration file's value, may be NULL), systemd-resolved's per-link file for
 * `ifindex` (when resolved runs and lists servers for that link), /etc/resolv.conf when
 * `ifname` holds the default route. `d` may be NULL (system defaults).
 * Fills *out and *src. Returns the number of servers (0 with MDNS_SERVERS_NONE when nothing
 * applies), or -EINVAL when the environment or config value is malformed. */
int mdns_servers_discover(const char *ifname, unsigned ifindex, const char *configured, const struct mdns_discovery *d,
                          struct mdns_server_list *out, enum mdns_server_src *src);

/* Formats a list for logs: "1.2.3.4, [2001:db8::1]:5353". Always NUL-terminates (truncating). */
void mdns_servers_format(const struct mdns_server_list *l, char *out, size_t len);

/* Human name of a source, e.g. "systemd-resolved". Static string. */
const char *mdns_servers_src_name(enum mdns_server_src src);

#endif
