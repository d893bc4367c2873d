/* Connect-time source choice: the kernel's routes, the interfaces, the metrics (published or host-wide) and the pending load in, one interface to bind out (mh_choose.h). */
#include "mh_choose.h"
#include "mh_fdgate.h"
#include "mh_clock.h"
#include "mh_config.h"
#include "mh_paths.h"
#include "mh_log.h"
#include "mh_metrics.h"
#include "mh_mstore.h"
#include "mh_netstate.h"
#include "mh_policy.h"
#include "mh_trust.h"
#include "policy/connect.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Destinations a choice never applies to: the host itself, link-local and multicast ones
 * (one link only), and v4-mapped IPv6 (the IPv4 interface list does not describe them). */
static int mh__never_rebind(const struct sockaddr *sa) {
  if (sa->sa_family == AF_INET) {
    uint32_t a = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
    return (a >> 24) == 127 || (a >> 16) == 0xa9fe || a == 0 || (a >> 28) == 0xe;
  }
  const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
  return IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_UNSPECIFIED(a) ||
         IN6_IS_ADDR_MULTICAST(a) || IN6_IS_ADDR_V4MAPPED(a);
}

static const void *mh__in_addr(const struct sockaddr *sa) {
  return sa->sa_family == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr
                                   : (const void *)&((const struct sockaddr_in *)sa)->sin_addr;
}

/* Appends attribute `type` holding an address of alen bytes to a netlink request. */
static void mh__rta_addr(struct nlmsghdr *nh, unsigned short type, const void *addr, size_t alen) {
  struct rtattr *a = (struct rtattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));
  a->rta_type = type;
  a->rta_len = (unsigned short)RTA_LENGTH(alen);
  memcpy(RTA_DATA(a), addr, alen);
  nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* The output interface (ifindex) of the kernel's route to dst, from src when given, asked on
 * netlink socket nl (RTM_GETROUTE: the same look-up a packet would get, policy rules included);
 * -1 on error or no route. *via (may be NULL): the route goes through a gateway. The kernel
 * answers inside sendto, so the read never waits; the sequence number keeps a late answer to
 * an earlier request from being taken for this one. */
static int mh__route_oif(int nl, unsigned seq, const struct sockaddr *src, const struct sockaddr *dst, int *via) {
  struct {
    struct nlmsghdr nh;
    struct rtmsg rt;
    char attrs[64];
  } req;
  memset(&req, 0, sizeof req);
  int fam = dst->sa_family;
  size_t alen = fam == AF_INET6 ? 16 : 4;
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof req.rt);
  req.nh.nlmsg_type = RTM_GETROUTE;
  req.nh.nlmsg_flags = NLM_F_REQUEST;
  req.nh.nlmsg_seq = seq;
  req.rt.rtm_family = (unsigned char)fam;
  req.rt.rtm_dst_len = (unsigned char)(alen * 8);
  mh__rta_addr(&req.nh, RTA_DST, mh__in_addr(dst), alen);
  if (src) {
    req.rt.rtm_src_len = (unsigned char)(alen * 8);
    mh__rta_addr(&req.nh, RTA_SRC, mh__in_addr(src), alen);
  }
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  if (via)
    *via = 0;
  if (sendto(nl, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof kernel) != (ssize_t)req.nh.nlmsg_len)
    return -1;
  union {
    struct nlmsghdr h;
    char b[4096];
  } buf;
  ssize_t n = recv(nl, &buf, sizeof buf, MSG_DONTWAIT);
  struct nlmsghdr *h = &buf.h;
  if (n <= 0 || !NLMSG_OK(h, (size_t)n) || h->nlmsg_seq != seq || h->nlmsg_type != RTM_NEWROUTE)
    return -1; /* NLMSG_ERROR: no route (ENETUNREACH) */
  int oif = -1;
  struct rtmsg *rt = NLMSG_DATA(h);
  int len = (int)RTM_PAYLOAD(h);
  for (struct rtattr *r = RTM_RTA(rt); RTA_OK(r, len); r = RTA_NEXT(r, len))
    if (r->rta_type == RTA_OIF)
      memcpy(&oif, RTA_DATA(r), sizeof oif);
    else if (r->rta_type == RTA_GATEWAY && via)
      *via = 1;
  return oif;
}

/* Asks the kernel's routes to dst (without a source, and from each interface's address) and
 * fills f->usable and f->kernel (pol_connect_usable). -1: leave the connection to the kernel. */
static int mh__routes(int nl, const struct sockaddr *dst, const struct mh_iface *ifs, const unsigned *ifindex,
                      struct mh_choose_facts *f) {
  int via = 0;
  int oif[MH_MAX_IFACES];
  int koif = mh__route_oif(nl, 1, NULL, dst, &via);
  for (unsigned i = 0; i < f->n; i++)
    oif[i] = koif >= 0 && via && ifindex[i] ? mh__route_oif(nl, 2 + i, (const struct sockaddr *)&ifs[i].addr, dst, NULL)
                                            : -1;
  struct pol_routes r = {.n = f->n, .ifindex = ifindex, .oif = oif, .kernel_oif = koif, .kernel_via = via};
  return pol_connect_usable(&r, &f->usable, &f->kernel);
}

/* Fills m[] from the host-wide store (mh_mstore.h; the file is read at most once a second).
 * The namespace is the netlink socket's: the one whose routes were just asked. */
static void mh__host_metrics(struct mh_paths *paths, int nl, const struct mh_iface *ifs, const unsigned *ifindex,
                             unsigned n, uint64_t now_us, struct pol_path *m) {
  uint64_t netns = mh_mstore_netns(nl);
  if (!netns)
    return;
  struct pol_store_key k[MH_MAX_IFACES];
  struct pol_store_obs o[MH_MAX_IFACES];
  for (unsigned i = 0; i < n; i++)
    mh_mstore_key(&k[i], ifindex[i] ? netns : 0, ifs[i].name, ifindex[i], &ifs[i].addr);
  if (mh_mstore_lookup(paths->mstore, paths->cfg, k, n, now_us, o) <= 0)
    return;
  for (unsigned i = 0; i < n; i++)
    pol_store_merge(&m[i], &o[i]);
  mh_dbg("connect-time metrics from the host-wide store");
}

/* f->m: the metrics as the engine last published them (the host-wide store merged in); before
 * the engine published anything (this process's first connections), the host-wide store's own
 * values: another program on this host may have measured these paths a moment ago. Then the
 * connections placed since the snapshot, load it cannot show yet (policy/pending.h): without
 * them a browser-like program's six simultaneous connects would all take the same path. */
static void mh__metrics(struct mh_paths *paths, int nl, const struct mh_iface *ifs, const unsigned *ifindex,
                        uint64_t now_us, struct mh_choose_facts *f) {
  struct mh_metrics_pub pub;
  memset(f->m, 0, sizeof f->m);
  int have = mh_metrics_read(paths->metrics, &pub) == 0;
  for (unsigned i = 0; i < f->n; i++)
    for (unsigned k = 0; have && k < pub.n; k++)
      if (!strcmp(pub.name[k], ifs[i].name))
        f->m[i] = pub.path[k];
  if (!have)
    mh__host_metrics(paths, nl, ifs, ifindex, f->n, now_us, f->m);
  for (unsigned i = 0; i < f->n; i++)
    f->m[i].transfers += pol_pending_count(&paths->choose.pending, (int)i,
                                           have ? pol_pending_since(pub.t_us, f->m[i].srtt_min_us) : 0, now_us);
}

/* f->trust: each path's word about dst (this process's notes and the host-wide store's, keyed
 * in the netlink socket's namespace); f->link: the system's connectivity of each path as the
 * engine last read it (never read here: a program's connect() makes no D-Bus call). */
static void mh__trust(struct mh_paths *paths, int nl, const struct sockaddr *dst, const struct mh_iface *ifs,
                      const unsigned *ifindex, uint64_t now_us, struct mh_choose_facts *f) {
  uint64_t netns = mh_mstore_netns(nl);
  struct pol_store_key k[MH_MAX_IFACES];
  for (unsigned i = 0; i < f->n; i++)
    mh_mstore_key(&k[i], ifindex[i] ? netns : 0, ifs[i].name, ifindex[i], &ifs[i].addr);
  if (mh_mstore_trust(paths->mstore, paths->cfg, k, f->n, mh_trust_dest(dst), now_us, f->trust) == -EBUSY)
    mh_dbg("connect-time trust unknown (the store copy is busy)");
  mh_netstate_links(paths->netstate, f->names, f->n, f->link);
}

int mh_choose_decide(const struct mh_config *cfg, const struct mh_choose_facts *f, double draw, unsigned *rr,
                     struct mh_choose_pick *out) {
  memset(out, 0, sizeof *out);
  out->iface = -1;
  struct pol p;
  if (pol_init(&p, &cfg->pol) < 0)
    return -1;
  p.rr_next = *rr;
  out->policy = p.ops->name;
  struct pol_view v;
  uint32_t usable = f->usable;
  if (cfg->pol.kind != POL_SINGLE)
    usable &= pol_trust_bindable(f->trust, f->link, f->n, f->kernel);
  mh_policy_view(cfg, f->n, f->names, f->m, usable, 0, NULL, &v);
  /* a connection the engine will take over starts with the probe: decided for the size it
   * would have on the kernel's path (one size for every path: pol_choose compares one) */
  out->size = cfg->intent_hint;
  out->probe =
      out->size == POL_SIZE_UNKNOWN && cfg->split && f->port >= 0 && mh_config_port_eligible(cfg, (unsigned)f->port);
  if (out->probe) {
    out->size = cfg->init_chunk_set ? cfg->init_chunk
                                    : pol_probe_size(&p, f->kernel >= 0 ? &v.path[f->kernel] : NULL, cfg->init_chunk,
                                                     cfg->init_chunk * POL_PROBE_MAX_CHUNKS);
    out->iface = mh_policy_probe_pick(&p, &v, out->size, draw, f->kernel, &out->c);
  } else {
    out->iface = mh_policy_connect_pick(&p, &v, out->size, draw, f->kernel, &out->c);
  }
  /* round-robin moves it, and so does every policy's cold-start fallback (paths in turn) */
  *rr = p.rr_next;
  return 0;
}

static int mh__dst_port(const struct sockaddr *sa) {
  return ntohs(sa->sa_family == AF_INET6 ? ((const struct sockaddr_in6 *)sa)->sin6_port
                                         : ((const struct sockaddr_in *)sa)->sin_port);
}

/* The interfaces, their routes and metrics for dst, then the decision. Returns the number of
 * interfaces of dst's family (fewer than two: no decision), or -1 (leave it to the kernel). */
static int mh__choose(struct mh_paths *paths, int nl, const struct sockaddr *dst, struct mh_iface *ifs,
                      struct mh_choose_facts *f, struct mh_choose_pick *pk) {
  const struct mh_config *cfg = paths->cfg;
  struct mh_choose *st = &paths->choose;
  int n = mh_path_ifaces(cfg, dst->sa_family, ifs, MH_MAX_IFACES);
  if (n < 2)
    return n < 0 ? -1 : n;
  f->n = (unsigned)n;
  f->port = mh__dst_port(dst);
  unsigned ifindex[MH_MAX_IFACES] = {0};
  for (int i = 0; i < n; i++) {
    ifindex[i] = if_nametoindex(ifs[i].name);
    f->names[i] = ifs[i].name;
  }
  if (mh__routes(nl, dst, ifs, ifindex, f) < 0)
    return -1;
  uint64_t now_us = mh_now_us();
  mh__metrics(paths, nl, ifs, ifindex, now_us, f);
  mh__trust(paths, nl, dst, ifs, ifindex, now_us, f);
  unsigned rr = atomic_load(&st->rr);
  if (mh_choose_decide(cfg, f, mh_policy_draw(), &rr, pk) < 0)
    return -1;
  atomic_store(&st->rr, rr);
  /* a connection the engine takes over counts as a transfer once its request is in: until the
   * next snapshot shows it, it is this process's pending load on its path */
  if (pk->probe)
    pol_pending_note(&st->pending, pk->iface >= 0 ? pk->iface : f->kernel, now_us);
  return n;
}

int mh_choose_source(struct mh_paths *paths, const struct sockaddr *dst, socklen_t len, struct mh_choice *out) {
  memset(out, 0, sizeof *out);
  out->n = -1;
  out->bind.ss_family = out->kernel.ss_family = AF_UNSPEC;
  if (!((dst->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) ||
        (dst->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6))) ||
      mh__never_rebind(dst))
    return -1;
  int err = errno;
  mh_fdgate(1); /* the netlink socket lives for this call: no fork copies it meanwhile */
  int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (nl < 0) {
    mh_fdgate(0);
    errno = err;
    return -1;
  }
  struct mh_iface ifs[MH_MAX_IFACES];
  struct mh_choose_facts f = {.kernel = -1};
  struct mh_choose_pick pk = {.iface = -1};
  out->n = mh__choose(paths, nl, dst, ifs, &f, &pk);
  close(nl);
  mh_fdgate(0);
  if (out->n >= 2) {
    char dbuf[64];
    if (f.kernel >= 0)
      out->kernel = ifs[f.kernel].addr;
    if (pk.iface < 0) {
      mh_dbg("connect to %s: left to the kernel (%s, %d usable interfaces)", mh_path_ntop(dst, dbuf, sizeof dbuf),
             f.kernel >= 0 ? ifs[f.kernel].name : "?", __builtin_popcount(f.usable));
    } else {
      out->bind = ifs[pk.iface].addr;
      snprintf(out->ifname, sizeof out->ifname, "%s", ifs[pk.iface].name);
      mh_dbg("connect to %s from %s (policy %s, size hint %llu%s, predicted %.0f us; kernel: %s)",
             mh_path_ntop(dst, dbuf, sizeof dbuf), ifs[pk.iface].name, pk.policy, (unsigned long long)pk.size,
             pk.probe ? " (probe)" : "", pk.c.predicted_us, f.kernel >= 0 ? ifs[f.kernel].name : "?");
    }
  }
  errno = err;
  return out->n;
}
