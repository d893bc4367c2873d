/* Kernel network events (rtnetlink: links, addresses, routes) watched on an engine's loop and debounced into one call when the interface table really changed. */
#ifndef MH_NETWATCH_H
#define MH_NETWATCH_H
#include <stddef.h>
#include <uv.h>

#include "mh_path.h"

struct mh_upstream_env;
struct mh_config;
struct mh_netwatch;

/* How long a burst of messages is gathered before the table is read again (a DHCP renew, a
 * link coming back or an address change is several messages within a few milliseconds). */
#define MH_NETWATCH_SETTLE_MS 150

/* Both families' usable interfaces (mh_path_ifaces) as one table: what a refresh compares. */
struct mh_netwatch_table {
  struct mh_iface v[2 * MH_MAX_IFACES];
  int n;
};

/* Reads the kernel's table now (IPv4 then IPv6 entries). 0 or -errno. Any thread. */
int mh_netwatch_read(const struct mh_config *cfg, struct mh_netwatch_table *out);
/* Pure: 1 when two tables name the same interfaces with the same addresses, in order. */
int mh_netwatch_same(const struct mh_netwatch_table *a, const struct mh_netwatch_table *b);
/* Pure: how many of the rtnetlink messages in buf (len bytes, as one recv gave them) say a link,
 * an address or a route changed; an error or overrun message counts too (the table must be
 * read again). */
int mh_netwatch_relevant(const void *buf, size_t len);

/* Opens the NETLINK_ROUTE socket (announced through env's own_fd) and watches it on
 * loop: after each burst settles, when the interface table differs from the last one read,
 * changed(arg, table) runs on the loop thread. 0 or -errno (the engine then runs without
 * events). Loop thread. */
int mh_netwatch_start(uv_loop_t *loop, const struct mh_upstream_env *env, const struct mh_config *cfg,
                      void (*changed)(void *arg, const struct mh_netwatch_table *now), void *arg,
                      struct mh_netwatch **out);
/* Closes its handles and its socket; freed in their close callbacks. NULL: no-op. Loop thread. */
void mh_netwatch_close(struct mh_netwatch *nw);

#endif
