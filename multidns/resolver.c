/* multiDNS: one c-ares resolver per interface on the engine's libuv loop, feeding the harvest cache. */
#include "multidns/mdns.h"
#include "multidns/answer.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <ares.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* c-ares lives inside our loop: sock_state_cb tells which fds to watch (one uv_poll_t each),
 * ares_timeout() says when to call back for retransmits (one uv_timer_t per channel), and
 * ares_process_fd() does the work. Every socket c-ares opens goes through mdns__asocket &
 * co. and therefore through the embedding code's socket table (the shim's real symbols). */

struct mdns__poll {
  uv_poll_t h;
  struct mdns__chan *c;
  int fd;
  struct mdns__poll *next;
};

struct mdns__query {
  struct mdns__query *next, *prev;
  struct mdns__chan *c;
  int family;
  char host[MDNS_HOST_MAX];
};

struct mdns__chan {
  struct mdns *m;
  int idx; /* position in cfg->ifaces */
  char name[IF_NAMESIZE];
  ares_channel ch; /* NULL: no servers for this interface (or closed) */
  uv_timer_t timer;
  bool timer_init;
  struct mdns__poll *polls;
  struct mdns__query *queries; /* in flight; also the "already asked" check */
  unsigned inflight;
  struct mdns_server_list servers;
  bool has4, has6;
  struct sockaddr_in src4;
  struct sockaddr_in6 src6;
  bool failing;          /* servers stopped answering: logged once, until they answer again */
  bool bindtodev_logged; /* SO_BINDTODEVICE refused (no CAP_NET_RAW): said once */
};

struct mdns {
  uv_loop_t *loop;
  struct mdns_config cfg; /* ifaces pointer not kept: see chans */
  struct mdns_sockfns fns;
  struct mdns_cache *cache;
  size_t n;
  struct mdns__chan *chans;
  uv_timer_t guard; /* runs the deferred close, and makes it complete even with no channels */
  bool closing;
  unsigned open_handles; /* handles initialised and not yet through their close callback */
  void (*close_cb)(void *ud);
  void *close_ud;
};

/* ---- logging ---------------------------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static void mdns__log(struct mdns *m, int level, const char *fmt, ...) {
  if (!m->cfg.log)
    return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  m->cfg.log(level, msg, m->cfg.ud);
}

uint64_t mdns_now_us(const struct mdns *m) { return m->cfg.clock ? m->cfg.clock(m->cfg.ud) : uv_hrtime() / 1000u; }

/* ---- sockets: every c-ares socket is created here, through the embedding code's table ----- */

/* With ares_set_socket_functions, c-ares 1.18 skips its own configure_socket(): no
 * O_NONBLOCK, no FD_CLOEXEC, no SO_BINDTODEVICE, no bind to ares_set_local_ip4/6. So this is
 * where the socket is tied to its interface. */
static ares_socket_t mdns__asocket(int domain, int type, int protocol, void *ud) {
  struct mdns__chan *c = ud;
  struct mdns *m = c->m;
  int fd = m->fns.socket(domain, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
  if (fd < 0)
    return ARES_SOCKET_BAD;

  bool on_dev = m->fns.setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, c->name, (socklen_t)strlen(c->name) + 1) == 0;
  if (!on_dev && !c->bindtodev_logged) {
    c->bindtodev_logged = true;
    mdns__log(m, MDNS_LOG_INFO, "multidns: %s: SO_BINDTODEVICE refused (%s); binding the source address only", c->name,
              strerror(errno));
  }

  int rc = 0;
  if (domain == AF_INET && c->has4)
    rc = m->fns.bind(fd, (const struct sockaddr *)&c->src4, sizeof c->src4);
  else if (domain == AF_INET6 && c->has6)
    rc = m->fns.bind(fd, (const struct sockaddr *)&c->src6, sizeof c->src6);
  else if (!on_dev) {
    /* Neither the device nor a source address of this family: the query would leave through
     * whatever interface the routing table picks and learn another network's answer. */
    rc = -1;
    errno = EADDRNOTAVAIL;
  }
  if (rc != 0) {
    int e = errno;
    m->fns.close(fd);
    errno = e;
    return ARES_SOCKET_BAD;
  }
  return fd;
}

static int mdns__aclose(ares_socket_t fd, void *ud) { return ((struct mdns__chan *)ud)->m->fns.close(fd); }

static int mdns__aconnect(ares_socket_t fd, const struct sockaddr *sa, ares_socklen_t len, void *ud) {
  return ((struct mdns__chan *)ud)->m->fns.connect(fd, sa, len);
}

static ares_ssize_t mdns__arecvfrom(ares_socket_t fd, void *buf, size_t len, int flags, struct sockaddr *sa,
                                    ares_socklen_t *salen, void *ud) {
  return ((struct mdns__chan *)ud)->m->fns.recvfrom(fd, buf, len, flags, sa, salen);
}

/* sendmsg rather than writev: c-ares falls back to TCP for truncated answers, and a write to
 * a TCP connection the server closed would raise SIGPIPE in the program we live in. */
static ares_ssize_t mdns__asendv(ares_socket_t fd, const struct iovec *iov, int n, void *ud) {
  struct msghdr mh;
  memset(&mh, 0, sizeof mh);
  mh.msg_iov = (struct iovec *)iov;
  mh.msg_iovlen = (size_t)n;
  return ((struct mdns__chan *)ud)->m->fns.sendmsg(fd, &mh, MSG_NOSIGNAL);
}

static const struct ares_socket_functions mdns__ares_fns = {
    mdns__asocket, mdns__aclose, mdns__aconnect, mdns__arecvfrom, mdns__asendv,
};

/* ---- driving c-ares from the loop --------------------------------------------------------- */

static void mdns__poll_closed(uv_handle_t *h);

static void mdns__timer_cb(uv_timer_t *t);

/* After anything that may have changed c-ares's next deadline, move the timer to it. */
static void mdns__rearm(struct mdns__chan *c) {
  if (!c->ch || !c->timer_init)
    return;
  struct timeval tv;
  struct timeval *next = ares_timeout(c->ch, NULL, &tv);
  if (!next) {
    uv_timer_stop(&c->timer);
    return;
  }
  /* round up: waking before c-ares's deadline would only spin */
  uint64_t ms = (uint64_t)next->tv_sec * 1000u + ((uint64_t)next->tv_usec + 999u) / 1000u;
  uv_timer_start(&c->timer, mdns__timer_cb, ms, 0);
}

static void mdns__timer_cb(uv_timer_t *t) {
  struct mdns__chan *c = t->data;
  if (!c->ch)
    return;
  ares_process_fd(c->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD); /* retransmits and timeouts */
  mdns__rearm(c);
}

static void mdns__poll_cb(uv_poll_t *h, int status, int events) {
  struct mdns__poll *p = h->data;
  struct mdns__chan *c = p->c;
  if (!c->ch)
    return;
  int fd = p->fd;
  /* On a poll error let c-ares read and write so it sees the socket error itself. */
  bool r = status < 0 || (events & UV_READABLE);
  bool w = status < 0 || (events & UV_WRITABLE);
  ares_process_fd(c->ch, r ? fd : ARES_SOCKET_BAD, w ? fd : ARES_SOCKET_BAD);
  mdns__rearm(c);
}

/* c-ares says which sockets to watch. (0, 0) comes right before c-ares closes the fd, so the
 * uv_close here (which removes the fd from epoll synchronously) happens while it is valid. */
static void mdns__sock_state_cb(void *data, ares_socket_t fd, int readable, int writable) {
  struct mdns__chan *c = data;
  struct mdns *m = c->m;
  struct mdns__poll **pp = &c->polls;
  while (*pp && (*pp)->fd != fd)
    pp = &(*pp)->next;
  struct mdns__poll *p = *pp;

  if (!readable && !writable) {
    if (p) {
      *pp = p->next;
      uv_close((uv_handle_t *)&p->h, mdns__poll_closed);
    }
    return;
  }
  if (!p) {
    p = calloc(1, sizeof *p);
    if (!p) {
      mdns__log(m, MDNS_LOG_ERROR, "multidns: %s: out of memory watching a DNS socket", c->name);
      return; /* the query times out through the timer */
    }
    int rc = uv_poll_init_socket(m->loop, &p->h, fd);
    if (rc < 0) {
      mdns__log(m, MDNS_LOG_ERROR, "multidns: %s: uv_poll_init_socket: %s", c->name, uv_strerror(rc));
      free(p);
      return;
    }
    m->open_handles++;
    p->h.data = p;
    p->c = c;
    p->fd = fd;
    p->next = c->polls;
    c->polls = p;
  }
  uv_poll_start(&p->h, (readable ? UV_READABLE : 0) | (writable ? UV_WRITABLE : 0), mdns__poll_cb);
}

/* ---- queries ------------------------------------------------------------------------------ */

/* Transport-level outcomes mean "this network's resolver is not answering us"; a SERVFAIL or
 * NXDOMAIN is about the name, not the interface. */
static bool mdns__is_iface_failure(int status) {
  return status == ARES_ETIMEOUT || status == ARES_ECONNREFUSED || status == ARES_EREFUSED;
}

static void mdns__set_failing(struct mdns__chan *c, bool failing, int status) {
  if (c->failing == failing)
    return;
  c->failing = failing;
  char list[256];
  mdns_servers_format(&c->servers, list, sizeof list);
  if (failing)
    mdns__log(c->m, MDNS_LOG_WARN,
              "multidns: %s: DNS servers %s not answering (%s); harvest there paused until they do", c->name, list,
              ares_strerror(status));
  else
    mdns__log(c->m, MDNS_LOG_INFO, "multidns: %s: DNS servers %s answering again", c->name, list);
}

static void mdns__unlink(struct mdns__query *q) {
  struct mdns__chan *c = q->c;
  if (q->prev)
    q->prev->next = q->next;
  else
    c->queries = q->next;
  if (q->next)
    q->next->prev = q->prev;
  c->inflight--;
}

static void mdns__query_cb(void *arg, int status, int timeouts, unsigned char *abuf, int alen) {
  struct mdns__query *q = arg;
  struct mdns__chan *c = q->c;
  struct mdns *m = c->m;
  (void)timeouts;
  mdns__unlink(q);
  if (status == ARES_EDESTRUCTION || status == ARES_ECANCELLED || m->closing) {
    free(q);
    return;
  }

  struct mdns_rr rrs[MDNS_ADDRS_MAX];
  size_t n = 0;
  int parsed = status;
  if (status == ARES_SUCCESS)
    parsed = mdns_answer_from_dns(abuf, alen, q->family, m->cfg.min_ttl_s, m->cfg.max_ttl_s, rrs, &n);

  uint64_t now = mdns_now_us(m);
  const char *fam = q->family == AF_INET ? "A" : "AAAA";
  if (parsed == ARES_SUCCESS || parsed == ARES_ENODATA || parsed == ARES_ENOTFOUND) {
    mdns__set_failing(c, false, parsed);
    int added = mdns_cache_put(m->cache, c->idx, q->host, MDNS_SRC_HARVEST, q->family, rrs,
                               parsed == ARES_SUCCESS ? n : 0, m->cfg.neg_ttl_s, now);
    mdns__log(m, MDNS_LOG_DEBUG, "multidns: %s: %s %s: %zu address(es), %d new", c->name, fam, q->host,
              parsed == ARES_SUCCESS ? n : 0, added);
    if (added > 0 && m->cfg.on_learned)
      m->cfg.on_learned(m, c->idx, q->host, m->cfg.ud);
  } else if (mdns__is_iface_failure(parsed)) {
    mdns__set_failing(c, true, parsed);
  } else {
    /* A broken answer for this name (SERVFAIL, FORMERR, a bad packet): remember it as
     * negative so a name that always fails is not asked again on every lookup. */
    mdns__log(m, MDNS_LOG_DEBUG, "multidns: %s: %s %s: %s", c->name, fam, q->host, ares_strerror(parsed));
    mdns_cache_put(m->cache, c->idx, q->host, MDNS_SRC_HARVEST, q->family, NULL, 0, m->cfg.neg_ttl_s, now);
  }
  free(q);
}

static bool mdns__asking(const struct mdns__chan *c, const char *key, int family) {
  for (const struct mdns__query *q = c->queries; q; q = q->next)
    if (q->family == family && strcmp(q->host, key) == 0)
      return true;
  return false;
}

static bool mdns__is_literal(const char *host) {
  unsigned char buf[sizeof(struct in6_addr)];
  return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

int mdns_harvest(struct mdns *m, const char *host, int except_iface, uint64_t now_us) {
  if (!m)
    return -EINVAL;
  if (m->closing)
    return -ESHUTDOWN;
  char key[MDNS_HOST_MAX];
  if (mdns_cache_host_key(host, key) < 0)
    return -EINVAL;
  if (mdns__is_literal(key))
    return 0;
  int started = 0;
  static const int fams[2] = {AF_INET, AF_INET6};
  for (size_t i = 0; i < m->n; i++) {
    struct mdns__chan *c = &m->chans[i];
    if (!c->ch || (int)i == except_iface)
      continue;
    for (size_t f = 0; f < 2; f++) {
      if (mdns_cache_fresh(m->cache, c->idx, key, fams[f], now_us) || mdns__asking(c, key, fams[f]))
        continue;
      if (c->inflight >= m->cfg.max_inflight || (c->failing && c->inflight > 0))
        continue; /* bounded; and one probe at a time into a resolver that is not answering */
      struct mdns__query *q = calloc(1, sizeof *q);
      if (!q)
        return started ? started : -ENOMEM;
      q->c = c;
      q->family = fams[f];
      memcpy(q->host, key, sizeof key);
      q->next = c->queries;
      if (c->queries)
        c->queries->prev = q;
      c->queries = q;
      c->inflight++;
      started++;
      /* May call mdns__query_cb synchronously (no usable socket): q is not touched after. */
      ares_query(c->ch, key, ns_c_in, fams[f] == AF_INET ? ns_t_a : ns_t_aaaa, mdns__query_cb, q);
    }
    mdns__rearm(c);
  }
  return started;
}

int mdns_harvest_host_header(struct mdns *m, const char *value, size_t len, uint64_t now_us) {
  if (!m || !value)
    return -EINVAL;
  while (len && (*value == ' ' || *value == '\t'))
    value++, len--;
  while (len && (value[len - 1] == ' ' || value[len - 1] == '\t'))
    len--;
  if (len == 0 || len >= MDNS_HOST_MAX || value[0] == '[')
    return 0; /* empty, absurd, or an IPv6 literal: nothing to resolve */
  char host[MDNS_HOST_MAX];
  memcpy(host, value, len);
  host[len] = '\0';
  char *colon = strchr(host, ':');
  if (colon)
    *colon = '\0'; /* "host:port" */
  struct sockaddr_storage tmp[1];
  int primary_known = m->cfg.primary >= 0 && mdns_cache_get(m->cache, m->cfg.primary, host, now_us, tmp, 1) > 0;
  return mdns_harvest(m, host, primary_known ? m->cfg.primary : -1, now_us);
}

int mdns_note_program(struct mdns *m, const char *host, const struct sockaddr_storage *addrs, size_t n,
                      uint64_t now_us) {
  if (!m || (n && !addrs) || m->cfg.primary < 0)
    return -EINVAL;
  struct mdns_rr rrs[MDNS_ADDRS_MAX];
  size_t k = 0;
  for (size_t i = 0; i < n && k < MDNS_ADDRS_MAX; i++) {
    if (addrs[i].ss_family != AF_INET && addrs[i].ss_family != AF_INET6)
      continue;
    rrs[k].addr = addrs[i];
    rrs[k].ttl_s = m->cfg.program_ttl_s;
    k++;
  }
  int added = mdns_cache_put(m->cache, m->cfg.primary, host, MDNS_SRC_PROGRAM, AF_UNSPEC, rrs, k, 0, now_us);
  if (added > 0 && m->cfg.on_learned && !m->closing) {
    char key[MDNS_HOST_MAX];
    mdns_cache_host_key(host, key);
    m->cfg.on_learned(m, m->cfg.primary, key, m->cfg.ud);
  }
  return added;
}

int mdns_addrs(struct mdns *m, int iface, const char *host, uint64_t now_us, struct sockaddr_storage *out, size_t max) {
  if (!m || !out || iface < 0 || (size_t)iface >= m->n)
    return -EINVAL;
  struct sockaddr_storage all[3 * MDNS_ADDRS_MAX];
  size_t n = mdns_cache_get(m->cache, iface, host, now_us, all, 3 * MDNS_ADDRS_MAX);
  const struct mdns__chan *c = &m->chans[iface];
  size_t k = 0;
  for (size_t i = 0; i < n && k < max; i++) {
    /* An address of a family the interface has no source address for cannot be reached
     * through it (an IPv6 answer on an IPv4-only network). */
    if ((all[i].ss_family == AF_INET && !c->has4) || (all[i].ss_family == AF_INET6 && !c->has6))
      continue;
    out[k++] = all[i];
  }
  return (int)k;
}

int mdns_host_of(struct mdns *m, const struct sockaddr *sa, char *host, size_t len) {
  if (!m)
    return -EINVAL;
  return mdns_cache_host_of(m->cache, sa, mdns_now_us(m), host, len, NULL);
}

size_t mdns_channels(const struct mdns *m) {
  size_t k = 0;
  for (size_t i = 0; m && i < m->n; i++)
    k += m->chans[i].ch != NULL;
  return k;
}

size_t mdns_pending(const struct mdns *m, int iface) {
  size_t k = 0;
  for (size_t i = 0; m && i < m->n; i++)
    if (iface < 0 || (size_t)iface == i)
      k += m->chans[i].inflight;
  return k;
}

int mdns_failing(const struct mdns *m, int iface) {
  if (!m || iface < 0 || (size_t)iface >= m->n)
    return 0;
  return m->chans[iface].failing;
}

/* ---- creation ----------------------------------------------------------------------------- */

static const char *mdns__libc_getenv(const char *n) { return secure_getenv(n); }
static int mdns__libc_socket(int d, int t, int p) { return socket(d, t, p); }
static int mdns__libc_close(int fd) { return close(fd); }
static int mdns__libc_connect(int fd, const struct sockaddr *sa, socklen_t l) { return connect(fd, sa, l); }
static int mdns__libc_bind(int fd, const struct sockaddr *sa, socklen_t l) { return bind(fd, sa, l); }
static int mdns__libc_setsockopt(int fd, int lv, int nm, const void *v, socklen_t l) {
  return setsockopt(fd, lv, nm, v, l);
}
static ssize_t mdns__libc_recvfrom(int fd, void *b, size_t l, int f, struct sockaddr *sa, socklen_t *sl) {
  return recvfrom(fd, b, l, f, sa, sl);
}
static ssize_t mdns__libc_sendmsg(int fd, const struct msghdr *mh, int f) { return sendmsg(fd, mh, f); }

/* The interface's first usable address per family, when the config gave none. Link-local
 * IPv6 is skipped: a source of fe80:: only reaches the link, not a DNS server beyond it. */
static void mdns__find_sources(struct mdns__chan *c, const struct mdns_iface_config *ic) {
  if (ic->src4.sin_family == AF_INET) {
    c->src4 = ic->src4;
    c->has4 = true;
  }
  if (ic->src6.sin6_family == AF_INET6) {
    c->src6 = ic->src6;
    c->has6 = true;
  }
  if (c->has4 && c->has6)
    return;
  struct ifaddrs *ifa = NULL;
  if (getifaddrs(&ifa) != 0)
    return;
  for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
    if (!i->ifa_addr || strcmp(i->ifa_name, c->name) != 0)
      continue;
    if (i->ifa_addr->sa_family == AF_INET && !c->has4 && ic->src4.sin_family == 0) {
      memcpy(&c->src4, i->ifa_addr, sizeof c->src4);
      c->has4 = true;
    } else if (i->ifa_addr->sa_family == AF_INET6 && !c->has6 && ic->src6.sin6_family == 0) {
      const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)i->ifa_addr;
      if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr))
        continue;
      memcpy(&c->src6, s6, sizeof c->src6);
      c->has6 = true;
    }
  }
  freeifaddrs(ifa);
  c->src4.sin_port = 0;
  c->src6.sin6_port = 0;
}

static int mdns__chan_open(struct mdns *m, struct mdns__chan *c) {
  struct ares_options o;
  memset(&o, 0, sizeof o);
  o.timeout = (int)m->cfg.timeout_ms;
  o.tries = (int)m->cfg.tries;
  o.sock_state_cb = mdns__sock_state_cb;
  o.sock_state_cb_data = c;
  o.lookups = (char *)"b"; /* DNS only: /etc/hosts is the program's resolver's business */
  o.ndomains = 0;          /* ares_query never searches; no domains from resolv.conf either */
  o.domains = NULL;
  int mask = ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_SOCK_STATE_CB | ARES_OPT_LOOKUPS | ARES_OPT_DOMAINS;
  int rc = ares_init_options(&c->ch, &o, mask);
  if (rc != ARES_SUCCESS) {
    mdns__log(m, MDNS_LOG_ERROR, "multidns: %s: ares_init_options: %s", c->name, ares_strerror(rc));
    c->ch = NULL;
    return rc == ARES_ENOMEM ? -ENOMEM : -EIO;
  }
  struct ares_addr_port_node nodes[MDNS_SERVERS_MAX];
  for (size_t i = 0; i < c->servers.n; i++) {
    memset(&nodes[i], 0, sizeof nodes[i]);
    nodes[i].next = i + 1 < c->servers.n ? &nodes[i + 1] : NULL;
    nodes[i].family = c->servers.s[i].family;
    if (nodes[i].family == AF_INET)
      nodes[i].addr.addr4 = c->servers.s[i].addr.v4;
    else
      memcpy(&nodes[i].addr.addr6, &c->servers.s[i].addr.v6, sizeof nodes[i].addr.addr6);
    nodes[i].udp_port = nodes[i].tcp_port = c->servers.s[i].port;
  }
  rc = ares_set_servers_ports(c->ch, nodes);
  if (rc != ARES_SUCCESS) {
    mdns__log(m, MDNS_LOG_ERROR, "multidns: %s: ares_set_servers_ports: %s", c->name, ares_strerror(rc));
    ares_destroy(c->ch);
    c->ch = NULL;
    return -EIO;
  }
  /* c-ares ignores these for user-managed sockets (mdns__asocket does the binding); they are
   * set anyway so the channel describes itself correctly to anything that inspects it. */
  ares_set_local_dev(c->ch, c->name);
  if (c->has4)
    ares_set_local_ip4(c->ch, ntohl(c->src4.sin_addr.s_addr));
  if (c->has6)
    ares_set_local_ip6(c->ch, c->src6.sin6_addr.s6_addr);
  ares_set_socket_functions(c->ch, &mdns__ares_fns, c);
  return 0;
}

/* Frees what mdns_new allocated before any handle exists (failure path): synchronous. */
static void mdns__free_unstarted(struct mdns *m) {
  for (size_t i = 0; i < m->n; i++)
    if (m->chans[i].ch)
      ares_destroy(m->chans[i].ch); /* no query was sent: no socket, no callback */
  mdns_cache_free(m->cache);
  free(m->chans);
  free(m);
  ares_library_cleanup();
}

/* The configuration with every unset limit at its default (the interface list is the
 * caller's: not kept). */
static void mdns__cfg_defaults(struct mdns *m, const struct mdns_config *cfg) {
  m->cfg = *cfg;
  m->cfg.ifaces = NULL;
  if (!m->cfg.max_entries)
    m->cfg.max_entries = 1024;
  if (!m->cfg.timeout_ms)
    m->cfg.timeout_ms = 2000;
  if (!m->cfg.tries)
    m->cfg.tries = 2;
  if (!m->cfg.max_inflight)
    m->cfg.max_inflight = 64;
  if (!m->cfg.neg_ttl_s)
    m->cfg.neg_ttl_s = 30;
  if (!m->cfg.max_ttl_s)
    m->cfg.max_ttl_s = 86400;
  if (!m->cfg.min_ttl_s)
    m->cfg.min_ttl_s = 2;
  if (!m->cfg.program_ttl_s)
    m->cfg.program_ttl_s = 60;
}

/* The socket calls the resolvers make: the embedding's where given, else libc's. */
static void mdns__fns_set(struct mdns *m, const struct mdns_sockfns *s) {
  m->fns.socket = s && s->socket ? s->socket : mdns__libc_socket;
  m->fns.close = s && s->close ? s->close : mdns__libc_close;
  m->fns.connect = s && s->connect ? s->connect : mdns__libc_connect;
  m->fns.bind = s && s->bind ? s->bind : mdns__libc_bind;
  m->fns.setsockopt = s && s->setsockopt ? s->setsockopt : mdns__libc_setsockopt;
  m->fns.recvfrom = s && s->recvfrom ? s->recvfrom : mdns__libc_recvfrom;
  m->fns.sendmsg = s && s->sendmsg ? s->sendmsg : mdns__libc_sendmsg;
}

/* The primary is where the program's own resolver answers: the default-route interface. */
static void mdns__primary_find(struct mdns *m, const struct mdns_config *cfg, const struct mdns_discovery *disc) {
  if (m->cfg.primary >= 0)
    return;
  char def[IF_NAMESIZE * 4];
  m->cfg.primary = 0;
  if (mdns_servers_default_iface(disc, def, sizeof def) == 0)
    for (size_t i = 0; i < m->n; i++)
      if (cfg->ifaces[i].name && strcmp(cfg->ifaces[i].name, def) == 0)
        m->cfg.primary = (int)i;
}

/* Interface i's servers (configured or discovered), sources and c-ares channel. 0 or -errno. */
static int mdns__chan_setup(struct mdns *m, size_t i, const struct mdns_iface_config *ic,
                            const struct mdns_discovery *disc) {
  struct mdns__chan *c = &m->chans[i];
  c->m = m;
  c->idx = (int)i;
  if (!ic->name || !*ic->name || strlen(ic->name) >= sizeof c->name) {
    mdns__log(m, MDNS_LOG_ERROR, "multidns: interface %zu: missing or over-long name", i);
    return -EINVAL;
  }
  snprintf(c->name, sizeof c->name, "%s", ic->name);
  enum mdns_server_src src = MDNS_SERVERS_CONFIG;
  if (ic->servers) {
    c->servers = *ic->servers;
  } else {
    unsigned ifindex = ic->ifindex ? ic->ifindex : if_nametoindex(ic->name);
    if (mdns_servers_discover(ic->name, ifindex, ic->dns, disc, &c->servers, &src) < 0) {
      char env[128];
      mdns_servers_env_name(ic->name, env, sizeof env);
      mdns__log(m, MDNS_LOG_ERROR, "multidns: %s: malformed DNS server list in %s or the config file", ic->name, env);
      return -EINVAL;
    }
  }
  mdns__find_sources(c, ic);
  if (c->servers.n == 0) {
    mdns__log(m, MDNS_LOG_INFO, "multidns: %s: no DNS servers found; no harvest on this interface", c->name);
    return 0;
  }
  char list[256];
  mdns_servers_format(&c->servers, list, sizeof list);
  mdns__log(m, MDNS_LOG_INFO, "multidns: %s: DNS servers %s (from %s)%s", c->name, list, mdns_servers_src_name(src),
            (int)i == m->cfg.primary ? ", primary" : "");
  return mdns__chan_open(m, c);
}

/* The uv handles, after every fallible step: they cannot fail. */
static void mdns__handles_init(struct mdns *m) {
  for (size_t i = 0; i < m->n; i++) {
    struct mdns__chan *c = &m->chans[i];
    if (!c->ch)
      continue;
    uv_timer_init(m->loop, &c->timer);
    c->timer.data = c;
    c->timer_init = true;
    m->open_handles++;
  }
  uv_timer_init(m->loop, &m->guard);
  m->guard.data = m;
  m->open_handles++;
}

int mdns_new(uv_loop_t *loop, const struct mdns_config *cfg, struct mdns **out) {
  if (!loop || !cfg || !out || !cfg->ifaces || cfg->n_ifaces == 0 || cfg->n_ifaces > MDNS_IFACES_MAX ||
      cfg->primary >= (int)cfg->n_ifaces || cfg->primary < -1)
    return -EINVAL;
  struct mdns *m = calloc(1, sizeof *m);
  if (!m)
    return -ENOMEM;
  m->loop = loop;
  mdns__cfg_defaults(m, cfg);
  mdns__fns_set(m, cfg->sock);
  if (ares_library_init(ARES_LIB_INIT_ALL) != ARES_SUCCESS) { /* ref-counted; paired in free */
    free(m);
    return -EIO;
  }
  m->chans = calloc(cfg->n_ifaces, sizeof *m->chans);
  int rc = m->chans ? mdns_cache_new(m->cfg.max_entries, &m->cache) : -ENOMEM;
  m->n = m->chans ? cfg->n_ifaces : 0;
  struct mdns_discovery disc = cfg->discovery ? *cfg->discovery : (struct mdns_discovery){0};
  if (!disc.getenv)
    disc.getenv = mdns__libc_getenv;
  if (rc == 0)
    mdns__primary_find(m, cfg, &disc);
  /* First every fallible step (discovery, c-ares channels), then the uv handles, which cannot
   * fail: a failed mdns_new leaves nothing behind on the loop. */
  for (size_t i = 0; i < m->n && rc == 0; i++)
    rc = mdns__chan_setup(m, i, &cfg->ifaces[i], &disc);
  if (rc < 0) {
    mdns__free_unstarted(m);
    return rc;
  }
  mdns__handles_init(m);
  *out = m;
  return 0;
}

/* ---- closing ------------------------------------------------------------------------------ */

static void mdns__handle_gone(struct mdns *m) {
  if (--m->open_handles > 0 || !m->closing)
    return;
  void (*cb)(void *) = m->close_cb;
  void *ud = m->close_ud;
  mdns_cache_free(m->cache);
  free(m->chans);
  free(m);
  ares_library_cleanup();
  if (cb)
    cb(ud);
}

static void mdns__poll_closed(uv_handle_t *h) {
  struct mdns__poll *p = h->data;
  struct mdns *m = p->c->m;
  free(p);
  mdns__handle_gone(m);
}

static void mdns__timer_closed(uv_handle_t *h) { mdns__handle_gone(((struct mdns__chan *)h->data)->m); }

static void mdns__guard_closed(uv_handle_t *h) { mdns__handle_gone(h->data); }

/* Destroys the channels (their pending queries end with ARES_EDESTRUCTION and their sockets
 * go through sock_state_cb(fd, 0, 0), closing the polls), then closes the timers. */
static void mdns__teardown(struct mdns *m) {
  for (size_t i = 0; i < m->n; i++) {
    struct mdns__chan *c = &m->chans[i];
    if (c->ch) {
      ares_channel ch = c->ch;
      c->ch = NULL; /* poll and timer callbacks already queued for this turn become no-ops */
      ares_destroy(ch);
    }
    while (c->polls) { /* anything c-ares did not report closed */
      struct mdns__poll *p = c->polls;
      c->polls = p->next;
      uv_close((uv_handle_t *)&p->h, mdns__poll_closed);
    }
    if (c->timer_init)
      uv_close((uv_handle_t *)&c->timer, mdns__timer_closed);
  }
  uv_close((uv_handle_t *)&m->guard, mdns__guard_closed);
}

static void mdns__guard_cb(uv_timer_t *t) { mdns__teardown(t->data); }

void mdns_close(struct mdns *m, void (*cb)(void *ud), void *ud) {
  if (!m || m->closing)
    return;
  m->closing = true;
  m->close_cb = cb;
  m->close_ud = ud;
  /* Deferred to a loop turn of its own: mdns_close may be called from on_learned, i.e. from
   * inside ares_process_fd, where ares_destroy would free the channel under c-ares's feet. */
  uv_timer_start(&m->guard, mdns__guard_cb, 0, 0);
}
