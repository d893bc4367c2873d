/* Connect-time path choice: an unbound TCP socket is bound to the source address of the interface the policy picks, when routing lets that interface reach the destination. */
#include "shim.h"
#include "mh_clock.h"
#include "mh_log.h"
#include "mh_metrics.h"
#include "mh_mstore.h"
#include "mh_path.h"
#include "mh_policy.h"
#include "shim_load.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

/*
 * Why a route check: binding the source address of a non-default interface makes packets
 * leave through it only where source-based policy routing exists (`ip rule from ADDR lookup
 * T`, as the testbed sets up and as multi-homed hosts should). On a host without such rules
 * the kernel would route the packet out of the default interface with a foreign source
 * address (dropped by rp_filter or the ISP). So an interface is usable for a destination
 * only when the kernel's route for (that source, destination) leaves through that very
 * interface; and nothing is bound when the pick is the kernel's own choice anyway.
 */

/* The output interface (ifindex) of the kernel's route to dst, from src when given (rtnetlink
 * RTM_GETROUTE: the same lookup a packet would get, policy rules included); -1 on error.
 * *via (may be NULL) tells whether the route goes through a gateway (0: dst is on a link of
 * this host). The kernel answers a route request synchronously inside sendmsg, so the reply
 * read never waits. */
static int shim__route_oif(const struct sockaddr *src, const struct sockaddr *dst, int *via) {
  struct {
    struct nlmsghdr nh;
    struct rtmsg rt;
    char attrs[64];
  } req;
  memset(&req, 0, sizeof req);
  int fam = dst->sa_family;
  size_t alen = fam == AF_INET6 ? 16 : 4;
  const void *d = fam == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)dst)->sin6_addr
                                  : (const void *)&((const struct sockaddr_in *)dst)->sin_addr;
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof req.rt);
  req.nh.nlmsg_type = RTM_GETROUTE;
  req.nh.nlmsg_flags = NLM_F_REQUEST;
  req.nh.nlmsg_seq = 1;
  req.rt.rtm_family = (unsigned char)fam;
  struct rtattr *a = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.nh.nlmsg_len));
  a->rta_type = RTA_DST;
  a->rta_len = (unsigned short)RTA_LENGTH(alen);
  memcpy(RTA_DATA(a), d, alen);
  req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_ALIGN(a->rta_len);
  req.rt.rtm_dst_len = (unsigned char)(alen * 8);
  if (src) {
    const void *s = fam == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)src)->sin6_addr
                                    : (const void *)&((const struct sockaddr_in *)src)->sin_addr;
    a = (struct rtattr *)((char *)&req + req.nh.nlmsg_len);
    a->rta_type = RTA_SRC;
    a->rta_len = (unsigned short)RTA_LENGTH(alen);
    memcpy(RTA_DATA(a), s, alen);
    req.nh.nlmsg_len += RTA_ALIGN(a->rta_len);
    req.rt.rtm_src_len = (unsigned char)(alen * 8);
  }
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0)
    return -1;
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  int oif = -1;
  if (via)
    *via = 0;
  if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof kernel) ==
      (ssize_t)req.nh.nlmsg_len) {
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    for (struct nlmsghdr *h = (struct nlmsghdr *)buf; n > 0 && NLMSG_OK(h, (size_t)n);
         h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type != RTM_NEWROUTE)
        break;  /* NLMSG_ERROR: no route (ENETUNREACH) */
      struct rtmsg *rt = NLMSG_DATA(h);
      int len = (int)RTM_PAYLOAD(h);
      for (struct rtattr *r = RTM_RTA(rt); RTA_OK(r, len); r = RTA_NEXT(r, len))
        if (r->rta_type == RTA_OIF)
          oif = *(int *)RTA_DATA(r);
        else if (r->rta_type == RTA_GATEWAY && via)
          *via = 1;
      break;
    }
  }
  shim_real.close(fd);
  return oif;
}

/* Fills m[] from the host-wide store (mh_mstore.h; the file is read at most once a second). */
static void shim__host_metrics(int fd, const struct mh_iface *ifs, const unsigned *ifindex, int n,
                               uint64_t now_us, struct pol_path *m) {
  uint64_t netns = mh_mstore_netns(fd);
  if (!netns)
    return;
  struct pol_store_key k[MH_MAX_IFACES];
  struct pol_store_obs o[MH_MAX_IFACES];
  for (int i = 0; i < n; i++)
    mh_mstore_key(&k[i], ifindex[i] ? netns : 0, ifs[i].name, ifindex[i], &ifs[i].addr);
  if (!shim_engine() ||
      mh_mstore_lookup(mh_engine_mstore(shim_engine()), &shim_config, k, (unsigned)n, now_us, o) <= 0)
    return;
  for (int i = 0; i < n; i++)
    pol_store_merge(&m[i], &o[i]);
  mh_dbg("fd %d: connect-time metrics from the host-wide store", fd);
}

static int shim__never_rebind(const struct sockaddr *sa) {
  if (sa->sa_family == AF_INET) {
    uint32_t a = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
    return (a >> 24) == 127 || (a >> 16) == 0xa9fe || a == 0 || (a >> 28) == 0xe;
  }
  const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
  return IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_UNSPECIFIED(a) ||
         IN6_IS_ADDR_MULTICAST(a) || IN6_IS_ADDR_V4MAPPED(a);
}

/* 1 when the program left the source to the kernel: no address, no port. */
static int shim__unbound(int fd, int family) {
  struct sockaddr_storage l;
  socklen_t ll = sizeof l;
  if (shim_real.getsockname(fd, (struct sockaddr *)&l, &ll) < 0 || l.ss_family != family)
    return 0;
  if (family == AF_INET) {
    const struct sockaddr_in *s = (const void *)&l;
    return s->sin_port == 0 && s->sin_addr.s_addr == htonl(INADDR_ANY);
  }
  const struct sockaddr_in6 *s6 = (const void *)&l;
  return s6->sin6_port == 0 && IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr);
}

int shim_bind_choose(int fd, const struct sockaddr *sa, socklen_t len, struct sockaddr_storage *from) {
  from->ss_family = AF_UNSPEC;
  if (!sa || !((sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) ||
               (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6))) ||
      shim__never_rebind(sa))
    return -1;
  int err = errno;
  int type = 0, proto = 0;
  socklen_t l = sizeof type;
  if (shim_real.getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0 || type != SOCK_STREAM ||
      (l = sizeof proto, shim_real.getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l) < 0) ||
      proto != IPPROTO_TCP || !shim__unbound(fd, sa->sa_family)) {
    errno = err;
    return -1;
  }
  struct mh_iface ifs[MH_MAX_IFACES];
  int n = mh_path_ifaces(&shim_config, sa->sa_family, ifs, MH_MAX_IFACES);
  if (n < 2) {
    errno = err;
    return n < 0 ? -1 : n;
  }
  /* usable: the kernel's route from that interface's address leaves through it */
  uint32_t usable = 0;
  int kernel = -1;
  unsigned ifindex[MH_MAX_IFACES] = {0};
  int via = 0;
  int koif = shim__route_oif(NULL, sa, &via);
  if (koif < 0 || !via) {
    /* no route, or a destination on one of our links (a gateway, the local resolver): it is
     * reachable through that link only, whatever another interface's table says */
    errno = err;
    return -1;
  }
  for (int i = 0; i < n; i++) {
    int idx = (int)if_nametoindex(ifs[i].name);
    ifindex[i] = idx > 0 ? (unsigned)idx : 0;
    if (idx > 0 && idx == koif)
      kernel = i;
    if (idx > 0 && shim__route_oif((const struct sockaddr *)&ifs[i].addr, sa, NULL) == idx)
      usable |= 1u << i;
  }
  /* metrics as the engine last published them (the host-wide store merged in); before the
   * engine published anything (this process's first connections), the host-wide store's own
   * values: another program on this host may have measured these paths a moment ago */
  struct mh_metrics_pub pub;
  struct pol_path m[MH_MAX_IFACES];
  const char *names[MH_MAX_IFACES];
  memset(m, 0, sizeof m);
  int have = shim_engine() && mh_metrics_read(mh_engine_metrics(shim_engine()), &pub) == 0;
  for (int i = 0; i < n; i++) {
    names[i] = ifs[i].name;
    for (unsigned k = 0; have && k < pub.n; k++)
      if (!strcmp(pub.name[k], ifs[i].name))
        m[i] = pub.path[k];
  }
  uint64_t now_us = mh_now_us();
  if (!have)
    shim__host_metrics(fd, ifs, ifindex, n, now_us, m);
  /* connections placed since the snapshot are load it cannot show yet (shim_load.h): without
   * them a browser-like program's six simultaneous connects would all take the same path */
  static struct shim_load load;
  for (int i = 0; i < n; i++)
    m[i].transfers += shim_load_pending(&load, i, have ? shim_load_since(pub.t_us, m[i].srtt_min_us) : 0, now_us);
  struct pol_view v;
  mh_policy_view(&shim_config, (unsigned)n, names, m, usable, 0, NULL, &v);
  /* our own copy of the policy: only the round-robin cursor is shared, atomically */
  static _Atomic unsigned rr;
  struct pol p;
  if (pol_init(&p, &shim_config.pol) < 0) {
    errno = err;
    return -1;
  }
  p.rr_next = atomic_load(&rr);
  struct pol_choice c;
  /* a connection the engine will take over starts with the probe: decided for the size it
   * would have on the kernel's path (one size for every path: pol_choose compares one) */
  uint64_t hint = shim_config.intent_hint;
  int port = shim_sa_port(sa, len);
  int probe = hint == POL_SIZE_UNKNOWN && shim_config.split && port >= 0 &&
              mh_config_port_eligible(&shim_config, (unsigned)port);
  int pick;
  if (probe) {
    hint = shim_config.init_chunk_set
               ? shim_config.init_chunk
               : pol_probe_size(&p, kernel >= 0 ? &v.path[kernel] : NULL, shim_config.init_chunk,
                                shim_config.init_chunk * POL_PROBE_MAX_CHUNKS);
    pick = mh_policy_probe_pick(&p, &v, hint, mh_policy_draw(), kernel, &c);
  } else {
    pick = mh_policy_connect_pick(&p, &v, hint, mh_policy_draw(), kernel, &c);
  }
  /* round-robin moves it, and so does every policy's cold-start fallback (paths in turn) */
  atomic_store(&rr, p.rr_next);
  /* a connection the engine takes over counts as a transfer once its request is in: until the
   * next snapshot shows it, it is this process's pending load on its path */
  if (probe)
    shim_load_note(&load, pick >= 0 ? pick : kernel, now_us);
  char dbuf[64];
  if (pick < 0) {
    mh_dbg("fd %d: connect to %s: left to the kernel (%s, %d usable interfaces)", fd,
           mh_path_ntop(sa, dbuf, sizeof dbuf), kernel >= 0 ? ifs[kernel].name : "?",
           __builtin_popcount(usable));
    if (kernel >= 0)
      *from = ifs[kernel].addr;
    errno = err;
    return n;
  }
  int one = 1;
  /* the port is picked at connect time, per destination: binding an address must not
   * reserve a port for every destination (ephemeral port exhaustion) */
  shim_real.setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
  socklen_t alen = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
  if (bind(fd, (const struct sockaddr *)&ifs[pick].addr, alen) < 0) {
    mh_info("fd %d: bind to %s failed (%s): left to the kernel", fd, ifs[pick].name, strerror(errno));
    if (kernel >= 0)
      *from = ifs[kernel].addr;
  } else {
    *from = ifs[pick].addr;
    mh_dbg("fd %d: connect to %s from %s (policy %s, size hint %llu%s, predicted %.0f us; kernel: %s)",
           fd, mh_path_ntop(sa, dbuf, sizeof dbuf), ifs[pick].name, p.ops->name,
           (unsigned long long)hint, probe ? " (probe)" : "", c.predicted_us,
           kernel >= 0 ? ifs[kernel].name : "?");
  }
  errno = err;
  return n;
}
