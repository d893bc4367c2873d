/* Metrics collectors on the engine loop: TCP_INFO sampling, byte counts, connection/transfer counts, the published snapshot and the MHTTP_METRICS file. */
#include "mh_clock.h"
#include "mh_fdgate.h"
#include "mh_metrics.h"
#include "mh_config.h"
#include "mh_log.h"
#include "mh_mstore.h"
#include "mh_path.h"
#include "mh_upstream.h"
#include "policy/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* One engine's collectors. Everything but the published copy belongs to the loop thread. */
struct mh_metrics {
  struct pol_metrics *store;
  const struct mh_config *cfg;
  uv_timer_t timer;
  int timer_ok, timer_on;
  struct mh_metrics_conn *conns;
  uint64_t next_id;
  unsigned n;
  char name[POL_MAX_IFACES][POL_IFNAME_MAX];
  struct sockaddr_storage addr4[POL_MAX_IFACES], addr6[POL_MAX_IFACES];
  uint64_t last_idle_dump_us;
  /* Host-wide store (mh_mstore.h). netns 0: this namespace cannot be told apart from another
   * one (no SO_NETNS_COOKIE), so nothing is shared. host[] holds the store's values as of
   * host_at; acc_* what this process observed since its last write (min SRTT of its samples,
   * max of its complete 100 ms rate buckets and of its trains), written at most once a second. */
  uint64_t netns;
  unsigned ifindex[POL_MAX_IFACES];
  struct pol_store_obs host[POL_MAX_IFACES];
  uint64_t host_at;
  uint64_t acc_min[POL_MAX_IFACES];
  double acc_rate[POL_MAX_IFACES];
  uint64_t tick_bytes[POL_MAX_IFACES]; /* arrived since the last tick (mh__tick_rates) */
  uint64_t tick_at;
  int train_new[POL_MAX_IFACES]; /* a train was timed since acc_rate last looked */
  uint64_t last_put_us;
  struct mh_mstore *mstore; /* the engine's copy of the host-wide store */
  /* Published copy: guarded by pub_mu, which is only ever held for a memcpy. */
  pthread_mutex_t pub_mu;
  struct mh_metrics_pub pub;
  int pub_ok;
  const char *pub_path; /* cfg->metrics, for mh_metrics_dump from any thread */
};

static int mh__find(const struct mh_metrics *m, const char *name) {
  for (unsigned i = 0; i < m->n; i++)
    if (!strcmp(m->name[i], name))
      return (int)i;
  return -1;
}

static int mh__add(struct mh_metrics *m, const char *name) {
  int i = mh__find(m, name);
  if (i >= 0 || m->n >= POL_MAX_IFACES || strlen(name) >= POL_IFNAME_MAX)
    return i;
  strcpy(m->name[m->n], name);
  return (int)m->n++;
}

/* Re-reads the interface list, keeping existing indices (an index never changes meaning). */
static void mh__refresh(struct mh_metrics *m) {
  static const int fam[2] = {AF_INET, AF_INET6};
  for (int f = 0; f < 2; f++) {
    struct mh_iface v[MH_MAX_IFACES];
    int n = mh_path_ifaces(m->cfg, fam[f], v, MH_MAX_IFACES);
    for (int k = 0; k < n; k++) {
      int i = mh__add(m, v[k].name);
      if (i >= 0) {
        memcpy(fam[f] == AF_INET ? &m->addr4[i] : &m->addr6[i], &v[k].addr, sizeof v[k].addr);
        m->ifindex[i] = if_nametoindex(v[k].name);
      }
    }
  }
}

static int mh__iface_of_addr(const struct mh_metrics *m, const struct sockaddr_storage *local) {
  for (unsigned i = 0; i < m->n; i++) {
    const struct sockaddr_storage *a = local->ss_family == AF_INET6 ? &m->addr6[i] : &m->addr4[i];
    if (a->ss_family != local->ss_family)
      continue;
    if (a->ss_family == AF_INET &&
        ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)local)->sin_addr.s_addr)
      return (int)i;
    if (a->ss_family == AF_INET6 && !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                                            &((const struct sockaddr_in6 *)local)->sin6_addr, sizeof(struct in6_addr)))
      return (int)i;
  }
  return -1;
}

static void mh__observe_rtt(struct mh_metrics *m, int i, uint64_t rtt_us) {
  if (!m->acc_min[i] || rtt_us < m->acc_min[i])
    m->acc_min[i] = rtt_us;
}

/* Rates come from the kernel's count of data segments that arrived (tcpi_data_segs_in) times
 * the peer's segment size, not from the engine's reads and not from the in-order byte count
 * (tcpi_bytes_received): a read after the loop was busy or a paused leg resumed drains
 * seconds of socket buffer at once, and a retransmission that fills a hole releases the
 * whole out-of-order queue at once; either made one 100 ms bucket 2-3 times the demo's
 * 50 Mbit/s link. The timer fires at bucket middles and gives each interface one sample:
 * its connections' bytes since the previous tick, scaled to one bucket's length when the
 * interval was longer (a late timer must not make a bucket look faster). Buckets under-read
 * a slow-start-limited path (one round per bucket): the same counters sampled at every read
 * event give its packet trains (policy/train.h). */

/* glibc's struct tcp_info stops at tcpi_total_retrans; the kernel's (linux/tcp.h, which
 * cannot be included next to netinet/tcp.h) goes on with these, at these offsets (the
 * kernel ABI only ever appends). */
struct mh__tcp_info {
  struct tcp_info base;
  uint64_t pacing_rate, max_pacing_rate, bytes_acked, bytes_received;
  uint32_t segs_out, segs_in, notsent_bytes, min_rtt, data_segs_in, data_segs_out;
};
_Static_assert(offsetof(struct mh__tcp_info, data_segs_in) == 152, "linux tcp_info layout");

/* Read events closer than this share one sample: on a fast link a readable event per segment
 * would cost a getsockopt each, and any subset of exact samples measures the same trains. */
#define MH_METRICS_TRAIN_GAP_US 250u

/* A train c closed (rate > 0) is a rate of its interface; 0 is none. */
static void mh__train_rate(struct mh_metrics_conn *c, double rate, uint64_t now) {
  struct mh_metrics *m = c->m;
  if (!(rate > 0))
    return;
  pol_metrics_capacity(m->store, (unsigned)c->iface, rate, now);
  m->train_new[c->iface] = 1;
}

/* One arrival-curve sample for the capacity estimate; a train that it closed becomes a rate
 * of the interface (the host-wide store gets the confirmed one: mh_metrics_snapshot). */
static void mh__train(struct mh_metrics_conn *c, const struct mh__tcp_info *ti, socklen_t l, uint64_t now) {
  struct mh_metrics *m = c->m;
  if (l < offsetof(struct mh__tcp_info, data_segs_in) + sizeof ti->data_segs_in)
    return; /* a kernel older than 4.6 */
  c->train_at_us = now;
  uint64_t before = c->train.closed_us;
  double rate =
      pol_train_sample(&c->train, ti->data_segs_in, ti->bytes_received, ti->base.tcpi_rcv_mss, ti->base.tcpi_rtt, now);
  mh__train_rate(c, rate, now);
  if ((c->train.closed_us != before && c->train.closed_bytes) || rate > 0)
    mh_dbg("metrics: %s conn %" PRIu64 " train %" PRIu64 " B in %" PRIu64 " us: %.0f B/s%s", m->name[c->iface], c->id,
           c->train.closed_bytes, c->train.closed_us,
           c->train.closed_us ? (double)c->train.closed_bytes * 1e6 / (double)c->train.closed_us : 0.0,
           rate > 0 ? "" : " (too short, not counted)");
}

static int mh__tcp_info(struct mh_metrics_conn *c, struct mh__tcp_info *ti, socklen_t *l) {
  int len = (int)sizeof *ti;
  memset(ti, 0, sizeof *ti);
  int rc = mh_upstream_query(c->up, MH_UPQ_TCP_INFO, &len, ti);
  *l = (socklen_t)len;
  return rc < 0 ? -1 : 0;
}

static void mh__sample(struct mh_metrics_conn *c, uint64_t now) {
  struct mh_metrics *m = c->m;
  struct mh__tcp_info ti;
  socklen_t l;
  if (mh__tcp_info(c, &ti, &l) < 0)
    return;
  /* tcpi_rtt is 0 in SYN-SENT and after close: pol_metrics_rtt refuses it, which is right */
  if (ti.base.tcpi_rtt) {
    pol_metrics_rtt(m->store, (unsigned)c->iface, c->id, ti.base.tcpi_rtt, now);
    mh__observe_rtt(m, c->iface, ti.base.tcpi_rtt);
  }
  if (l < offsetof(struct mh__tcp_info, data_segs_in) + sizeof ti.data_segs_in)
    return; /* a kernel older than 4.6 */
  if (ti.base.tcpi_rtt && pol_metrics_min_rtt(m->store, (unsigned)c->iface, c->id, ti.min_rtt, now) == 0)
    mh__observe_rtt(m, c->iface, ti.min_rtt);
  mh__train(c, &ti, l, now);
  /* Bytes since this connection's last sample, for the interface's next tick; counted in
   * the current MSS (the kernel's estimate grows during the first segments). */
  uint64_t segs = ti.data_segs_in;
  if (c->rx_at_us && segs > c->rx)
    m->tick_bytes[c->iface] += (segs - c->rx) * ti.base.tcpi_rcv_mss;
  c->rx = segs;
  c->rx_at_us = now;
}

/* One sample per interface and tick: every connection's bytes since the last tick (those
 * closed meanwhile included) over the time since it, scaled to one bucket when that is
 * longer. Samples added per connection put a tick's 100 ms and another connection's or the
 * close's extra tens of ms into one bucket (asym wifi0 read 282 kB/s of 241, demo lte0 up
 * to +22 % under load); one interval for all of them cannot. */
static void mh__tick_rates(struct mh_metrics *m, uint64_t now) {
  uint64_t dt = now > m->tick_at ? now - m->tick_at : 0;
  for (unsigned i = 0; i < m->n; i++) {
    if (m->tick_bytes[i] && dt) {
      uint64_t b = m->tick_bytes[i];
      if (dt > POL_BUCKET_US)
        b = (uint64_t)((double)b * POL_BUCKET_US / (double)dt);
      pol_metrics_bytes(m->store, i, b, now);
    }
    m->tick_bytes[i] = 0;
  }
  m->tick_at = now;
}

void mh_metrics_conn_readable(struct mh_metrics_conn *c) {
  if (!c->registered)
    return;
  uint64_t now = mh_now_us();
  if (c->train_at_us && now - c->train_at_us < MH_METRICS_TRAIN_GAP_US)
    return;
  struct mh__tcp_info ti;
  socklen_t l;
  if (mh__tcp_info(c, &ti, &l) == 0)
    mh__train(c, &ti, l, now);
}

/* The next middle of a 100 ms bucket, in ms from now. */
static uint64_t mh__to_mid_ms(uint64_t now) {
  uint64_t mid = now / POL_BUCKET_US * POL_BUCKET_US + POL_BUCKET_US / 2;
  if (mid <= now + 5000)
    mid += POL_BUCKET_US;
  return (mid - now + 999) / 1000;
}

/* The store key of interface i for one family (AF_INET: its IPv4 address; AF_INET6: its
 * IPv6 one). 0 when the interface has no such address or the namespace is unknown. */
static int mh__key(const struct mh_metrics *m, unsigned i, int fam, struct pol_store_key *k) {
  const struct sockaddr_storage *a = fam == AF_INET ? &m->addr4[i] : &m->addr6[i];
  k->netns = 0;
  if (!m->netns || !m->ifindex[i] || a->ss_family != fam)
    return 0;
  mh_mstore_key(k, m->netns, m->name[i], m->ifindex[i], a);
  return 1;
}

/* Re-reads the host-wide values of every interface (the file at most once a second): under
 * its IPv4 address, else its IPv6 one (the engine writes both, the shim reads the one of
 * the destination's family). */
static void mh__host_refresh(struct mh_metrics *m, uint64_t now) {
  struct pol_store_key k[POL_MAX_IFACES];
  for (unsigned i = 0; i < m->n; i++)
    if (!mh__key(m, i, AF_INET, &k[i]))
      mh__key(m, i, AF_INET6, &k[i]);
  if (mh_mstore_lookup(m->mstore, m->cfg, k, m->n, now, m->host) != -EBUSY)
    m->host_at = now; /* busy (a program thread's connect is reading): the next snapshot retries */
}

/* Writes what this process observed since its last write (force: now, else at most once a
 * second), then sees the store as written. Loop thread. */
static void mh__flush(struct mh_metrics *m, uint64_t now, int force) {
  if (!force && now - m->last_put_us < 1000000u)
    return;
  struct pol_store_key k[2 * POL_MAX_IFACES];
  struct pol_store_obs o[2 * POL_MAX_IFACES];
  unsigned n = 0;
  int any = 0;
  for (unsigned i = 0; i < m->n; i++) {
    if (!m->acc_min[i] && !(m->acc_rate[i] > 0))
      continue;
    struct pol_path p;
    memset(&p, 0, sizeof p);
    pol_metrics_snapshot(m->store, i, now, &p);
    memset(&o[n], 0, sizeof o[n]);
    o[n].srtt_min_us = m->acc_min[i];
    o[n].srtt_med_us = p.srtt_med_us; /* the latest median: the store keeps one per slot */
    o[n].max_rate = m->acc_rate[i];
    m->acc_min[i] = 0;
    m->acc_rate[i] = 0;
    o[n + 1] = o[n];
    any |= mh__key(m, i, AF_INET, &k[n]);
    any |= mh__key(m, i, AF_INET6, &k[n + 1]);
    n += 2;
  }
  if (!any)
    return;
  m->last_put_us = now;
  int rc = mh_mstore_put(m->mstore, m->cfg, k, o, n, now);
  if (rc < 0)
    mh_dbg("metrics: host-wide store not written (%s)", strerror(-rc));
  mh__host_refresh(m, now);
}

static void mh__tick(uv_timer_t *t) {
  struct mh_metrics *m = t->data;
  uint64_t now = mh_now_us();
  for (struct mh_metrics_conn *c = m->conns; c; c = c->next)
    mh__sample(c, now);
  mh__tick_rates(m, now);
  mh_metrics_publish(m);
  if (!m->conns) {
    m->timer_on = 0;
    return;
  }
  uv_timer_start(&m->timer, mh__tick, mh__to_mid_ms(mh_now_us()), 0);
}

int mh_metrics_start(struct mh_metrics *m, uv_loop_t *loop, const struct mh_config *cfg) {
  if (!m->store && pol_metrics_new(&m->store) < 0)
    return -ENOMEM;
  for (unsigned i = 0; i < POL_MAX_IFACES; i++)
    pol_metrics_reset(m->store, i);
  m->cfg = cfg;
  m->conns = NULL;
  m->n = 0;
  memset(m->addr4, 0, sizeof m->addr4);
  memset(m->addr6, 0, sizeof m->addr6);
  mh__refresh(m);
  uv_timer_init(loop, &m->timer);
  m->timer.data = m;
  uv_unref((uv_handle_t *)&m->timer);
  m->timer_ok = 1;
  m->timer_on = 0;
  m->pub_path = cfg->metrics[0] ? cfg->metrics : NULL;
  memset(m->acc_min, 0, sizeof m->acc_min);
  memset(m->acc_rate, 0, sizeof m->acc_rate);
  memset(m->train_new, 0, sizeof m->train_new);
  memset(m->tick_bytes, 0, sizeof m->tick_bytes);
  m->tick_at = 0;
  memset(m->host, 0, sizeof m->host);
  m->last_put_us = 0;
  /* the namespace is known before any connection, so the first plan sees the store */
  m->netns = 0;
  mh_fdgate(1); /* no fork copies the socket meanwhile */
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    m->netns = mh_mstore_netns(fd);
    close(fd);
  }
  mh_fdgate(0);
  mh__host_refresh(m, mh_now_us());
  mh_metrics_publish(m);
  return 0;
}

void mh_metrics_conn_open(struct mh_metrics *m, struct mh_metrics_conn *c, struct mh_upstream *up,
                          uint64_t handshake_us) {
  if (!m || !m->timer_ok || c->registered)
    return;
  struct sockaddr_storage local;
  if (mh_upstream_query(up, MH_UPQ_LOCAL, NULL, &local) < 0)
    return;
  int i = mh__iface_of_addr(m, &local);
  if (i < 0) {
    mh__refresh(m); /* an interface that came up after the engine started */
    i = mh__iface_of_addr(m, &local);
  }
  if (i < 0)
    return; /* loopback or an unlisted device: says nothing about the paths */
  c->m = m;
  c->up = up;
  c->iface = i;
  c->id = ++m->next_id;
  c->registered = 1;
  c->prev = NULL;
  c->next = m->conns;
  if (m->conns)
    m->conns->prev = c;
  m->conns = c;
  uint64_t now = mh_now_us();
  pol_metrics_conns(m->store, (unsigned)i, +1);
  if (handshake_us) {
    pol_metrics_handshake(m->store, (unsigned)i, c->id, handshake_us, now);
    mh__observe_rtt(m, i, handshake_us);
  }
  if (!m->netns && mh_upstream_query(up, MH_UPQ_NETNS, NULL, &m->netns) < 0)
    m->netns = 0;
  if (!m->timer_on)
    m->tick_at = now; /* the first tick's interval starts now, not at the last one long ago */
  mh__sample(c, now);
  if (!m->timer_on) {
    uv_timer_start(&m->timer, mh__tick, mh__to_mid_ms(now), 0);
    m->timer_on = 1;
  }
}

void mh_metrics_conn_close(struct mh_metrics_conn *c) {
  if (!c->registered)
    return;
  struct mh_metrics *m = c->m;
  uint64_t now = mh_now_us();
  mh__sample(c, now);
  /* the stretch still open ended with the connection's last bytes */
  mh__train_rate(c, pol_train_end(&c->train), now);
  pol_metrics_conns(m->store, (unsigned)c->iface, -1);
  if (c->prev)
    c->prev->next = c->next;
  else
    m->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  c->registered = 0;
  mh_metrics_publish(m);
}

/* The observer's calls (mh_metrics_observer): a record of its own per counted connection. */
static void *mh__observe_open(void *arg, struct mh_upstream *up, uint64_t handshake_us) {
  struct mh_metrics_conn *c = calloc(1, sizeof *c);
  if (c)
    mh_metrics_conn_open(arg, c, up, handshake_us);
  if (c && !c->registered) { /* not counted (loopback, no collectors): asked again if reopened */
    free(c);
    c = NULL;
  }
  return c;
}

static void mh__observe_readable(void *record) { mh_metrics_conn_readable(record); }

static void mh__observe_close(void *record) {
  mh_metrics_conn_close(record);
  free(record);
}

void mh_metrics_observer(struct mh_metrics *m, struct mh_upstream_observer *o) {
  *o = (struct mh_upstream_observer){mh__observe_open, mh__observe_readable, mh__observe_close, m};
}

uint64_t mh_metrics_netns(const struct mh_metrics *m) { return m->netns; }

int mh_metrics_iface(struct mh_metrics *m, const char *name) { return m->timer_ok ? mh__add(m, name) : -1; }

void mh_metrics_transfer(struct mh_metrics *m, int iface, int delta) {
  if (m->timer_ok && iface >= 0 && (unsigned)iface < m->n &&
      pol_metrics_transfers(m->store, (unsigned)iface, delta) < 0)
    mh_err("metrics: transfer count of %s would go below 0", m->name[iface]);
}

int mh_metrics_snapshot(struct mh_metrics *m, int iface, struct pol_path *out) {
  out->srtt_min_us = out->srtt_med_us = 0;
  out->max_rate = out->cur_rate = 0;
  out->transfers = out->conns = 0;
  if (!m->timer_ok || iface < 0 || (unsigned)iface >= m->n)
    return -EINVAL;
  uint64_t now = mh_now_us();
  int rc = pol_metrics_snapshot(m->store, (unsigned)iface, now, out);
  /* every complete bucket passes here (the publish at each tick): the best is written back,
   * and so is the train rate after each new train (once a second train confirmed it; only
   * then, so an old measurement is not written back as a new one) */
  if (out->cur_rate > m->acc_rate[iface])
    m->acc_rate[iface] = out->cur_rate;
  if (m->train_new[iface]) {
    m->train_new[iface] = 0;
    double trains = pol_metrics_train_rate(m->store, (unsigned)iface, now);
    if (trains > m->acc_rate[iface])
      m->acc_rate[iface] = trains;
  }
  if (now - m->host_at >= 1000000u)
    mh__host_refresh(m, now);
  pol_store_merge(out, &m->host[iface]);
  return rc;
}

void mh_metrics_publish(struct mh_metrics *m) {
  if (!m->timer_ok)
    return;
  struct mh_metrics_pub p;
  memset(&p, 0, sizeof p);
  p.n = m->n;
  for (unsigned i = 0; i < m->n; i++) {
    memcpy(p.name[i], m->name[i], POL_IFNAME_MAX);
    mh_metrics_snapshot(m, (int)i, &p.path[i]);
  }
  p.t_us = mh_now_us();
  pthread_mutex_lock(&m->pub_mu);
  m->pub = p;
  m->pub_ok = 1;
  pthread_mutex_unlock(&m->pub_mu);
  /* while traffic flows once a second; when the last connection closed (idle, exit) now */
  mh__flush(m, mh_now_us(), !m->conns);
}

int mh_metrics_read(struct mh_metrics *m, struct mh_metrics_pub *out) {
  pthread_mutex_lock(&m->pub_mu);
  int ok = m->pub_ok;
  if (ok)
    *out = m->pub;
  pthread_mutex_unlock(&m->pub_mu);
  return ok ? 0 : -ENODATA;
}

int mh_metrics_format(char *buf, size_t cap, int pid, const char *iface, const struct pol_path *p) {
  int n = snprintf(buf, cap,
                   "{\"metrics\":1,\"pid\":%d,\"iface\":\"%s\",\"srtt_min_us\":%" PRIu64 ",\"srtt_med_us\":%" PRIu64
                   ",\"max_rate_Bps\":%.0f,\"cur_rate_Bps\":%.0f,"
                   "\"transfers\":%u,\"conns\":%u}\n",
                   pid, iface, p->srtt_min_us, p->srtt_med_us, p->max_rate, p->cur_rate, p->transfers, p->conns);
  return n > 0 && (size_t)n < cap ? n : -1;
}

void mh_metrics_dump(struct mh_metrics *m) {
  struct mh_metrics_pub p;
  if (!m->pub_path || mh_metrics_read(m, &p) < 0 || !p.n)
    return;
  char buf[POL_MAX_IFACES * 256];
  size_t len = 0;
  for (unsigned i = 0; i < p.n; i++) {
    int n = mh_metrics_format(buf + len, sizeof buf - len, (int)getpid(), p.name[i], &p.path[i]);
    if (n < 0)
      break;
    len += (size_t)n;
  }
  /* one write of every interface's line: O_APPEND keeps another process's set whole */
  int fd = open(m->pub_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  (void)!write(fd, buf, len);
  close(fd);
}

void mh_metrics_idle(struct mh_metrics *m) {
  uint64_t now = mh_now_us();
  if (m->timer_ok)
    mh__flush(m, now, 1);
  if (!m->pub_path || (m->last_idle_dump_us && now - m->last_idle_dump_us < 1000000u))
    return;
  m->last_idle_dump_us = now;
  mh_metrics_publish(m);
  mh_metrics_dump(m);
}

void mh_metrics_store_flush(struct mh_metrics *m) {
  if (m->timer_ok)
    mh__flush(m, mh_now_us(), 1);
}

int mh_metrics_new(struct mh_mstore *mstore, struct mh_metrics **out) {
  struct mh_metrics *m = calloc(1, sizeof *m);
  if (!m)
    return -ENOMEM;
  m->mstore = mstore;
  pthread_mutex_init(&m->pub_mu, NULL);
  *out = m;
  return 0;
}

void mh_metrics_stop(struct mh_metrics *m) {
  if (!m->timer_ok)
    return;
  m->timer_ok = m->timer_on = 0; /* a connection opening meanwhile is no longer counted */
  uv_close((uv_handle_t *)&m->timer, NULL);
}

void mh_metrics_free(struct mh_metrics *m) {
  if (!m)
    return;
  pol_metrics_free(m->store);
  pthread_mutex_destroy(&m->pub_mu);
  free(m);
}
