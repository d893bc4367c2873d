/* The engine's own captive-portal check: the URL parsed, one nonblocking GET per due interface bound to its address and watched on the loop, the answer's status turned into a link state. */
#include "mh_portal.h"
#include "mh_fdgate.h"
#include "mh_clock.h"
#include "mh_config.h"
#include "mh_dns.h"
#include "mh_paths.h"
#include "mh_upstream.h"
#include "mh_log.h"
#include "mh_netstate.h"
#include "mh_path.h"

#include <arpa/inet.h>
#include <llhttp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

static int mh__pv_head(llhttp_t *p) {
  (void)p;
  return HPE_PAUSED; /* the head says it all */
}

enum pol_link mh_portal_verdict(const char *buf, size_t len) {
  static const llhttp_settings_t settings = {.on_headers_complete = mh__pv_head};
  llhttp_t p;
  llhttp_init(&p, HTTP_RESPONSE, &settings);
  if (llhttp_execute(&p, buf, len) != HPE_PAUSED)
    return POL_LINK_UNKNOWN; /* not whole yet, or not HTTP */
  if (p.status_code == 204)
    return POL_LINK_FULL;
  /* a 200 counts only when it says its body is empty */
  return p.status_code == 200 && (p.flags & F_CONTENT_LENGTH) && !p.content_length ? POL_LINK_FULL : POL_LINK_PORTAL;
}

/* One check in flight: its socket under a poll, a timer bounding it. */
struct mh__pcheck {
  uv_poll_t poll;
  uv_timer_t timer;
  int fd, closing, open_handles;
  struct mh_netstate *ns;
  char ifname[16];
  char req[1024];
  size_t req_len, sent, got;
  char buf[2048];
};

static void mh__pc_closed(uv_handle_t *h) {
  struct mh__pcheck *c = h->data;
  if (--c->open_handles == 0)
    free(c);
}

/* The check ends with link (UNKNOWN: no word, nothing changes). */
static void mh__pc_end(struct mh__pcheck *c, enum pol_link link, const char *why) {
  if (c->closing)
    return;
  c->closing = 1;
  if (link == POL_LINK_PORTAL)
    mh_info("portal check: %s answered otherwise (%s): not used", c->ifname, why);
  else
    mh_dbg("portal check: %s: %s", c->ifname, link == POL_LINK_FULL ? "the expected answer" : why);
  mh_netstate_set_check(c->ns, c->ifname, link);
  uv_poll_stop(&c->poll);
  close(c->fd);
  uv_close((uv_handle_t *)&c->poll, mh__pc_closed);
  uv_close((uv_handle_t *)&c->timer, mh__pc_closed);
}

static void mh__pc_timeout(uv_timer_t *t) { mh__pc_end(t->data, POL_LINK_UNKNOWN, "no answer in time"); }

static void mh__pc_io(uv_poll_t *p, int status, int events) {
  struct mh__pcheck *c = p->data;
  int err = 0;
  socklen_t l = sizeof err;
  if (status < 0 || getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0 || err) {
    mh__pc_end(c, POL_LINK_UNKNOWN, "cannot connect");
    return;
  }
  if ((events & UV_WRITABLE) && c->sent < c->req_len) {
    ssize_t n = send(c->fd, c->req + c->sent, c->req_len - c->sent, MSG_NOSIGNAL);
    if (n > 0 && (c->sent += (size_t)n) == c->req_len)
      uv_poll_start(&c->poll, UV_READABLE, mh__pc_io);
  }
  if (!(events & UV_READABLE))
    return;
  ssize_t n = recv(c->fd, c->buf + c->got, sizeof c->buf - 1 - c->got, 0);
  if (n > 0)
    c->got += (size_t)n;
  enum pol_link v = mh_portal_verdict(c->buf, c->got);
  if (v != POL_LINK_UNKNOWN) {
    c->buf[strcspn(c->buf, "\r\n")] = 0;
    mh__pc_end(c, v, c->buf);
  } else if (n <= 0 || c->got == sizeof c->buf - 1) {
    mh__pc_end(c, c->got ? POL_LINK_PORTAL : POL_LINK_UNKNOWN, "an answer that is not HTTP");
  }
}

/* A nonblocking connection from ifc's address to dst, under a poll; 0 or -errno. */
static int mh__pc_open(struct mh_paths *e, struct mh__pcheck *c, const struct mh_iface *ifc,
                       const struct sockaddr_storage *dst) {
  socklen_t al = dst->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
  mh_fdgate(1); /* made and announced before a fork can copy it */
  c->fd = socket(dst->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int rc = c->fd < 0 ? -errno : 0;
  mh_upstream_own_fd(e->env, c->fd);
  mh_fdgate(0);
  if (rc < 0)
    return rc;
  if (bind(c->fd, (const struct sockaddr *)&ifc->addr, al) < 0 ||
      (connect(c->fd, (const struct sockaddr *)dst, al) < 0 && errno != EINPROGRESS) ||
      uv_poll_init(e->loop, &c->poll, c->fd) < 0) {
    int err = -errno;
    close(c->fd);
    return err ? err : -EIO;
  }
  uv_timer_init(e->loop, &c->timer);
  c->poll.data = c->timer.data = c;
  c->open_handles = 2;
  uv_poll_start(&c->poll, UV_WRITABLE | UV_READABLE, mh__pc_io);
  uv_timer_start(&c->timer, mh__pc_timeout, MH_PORTAL_TIMEOUT_US / 1000, 0);
  return 0;
}

/* The check's server as interface ifc sees it: a literal, else what ifc's own resolver named
 * (asked now when it named nothing yet: the next due check finds it). 0 or -1. */
static int mh__pc_dst(struct mh_paths *e, const struct mh_url *u, const struct mh_iface *ifc,
                      struct sockaddr_storage *dst) {
  memset(dst, 0, sizeof *dst);
  struct sockaddr_in *s4 = (struct sockaddr_in *)dst;
  struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)dst;
  if (inet_pton(AF_INET, u->host, &s4->sin_addr) == 1)
    dst->ss_family = AF_INET;
  else if (inet_pton(AF_INET6, u->host, &s6->sin6_addr) == 1)
    dst->ss_family = AF_INET6;
  else if (mh_dns_addrs(e->dns, u->host, ifc->name, dst, 1) < 1) {
    mh_dns_host_header(e->dns, u->host, strlen(u->host));
    return -1;
  }
  if (dst->ss_family != ifc->addr.ss_family)
    return -1;
  if (dst->ss_family == AF_INET)
    s4->sin_port = htons((uint16_t)u->portnum);
  else
    s6->sin6_port = htons((uint16_t)u->portnum);
  return 0;
}

void mh_portal_check(struct mh_paths *e, const struct mh_iface *ifs, int n) {
  struct mh_url u;
  if (!strcmp(e->cfg->portal_check, "off") || mh_config_portal_url(e->cfg->portal_check, &u) < 0)
    return;
  uint64_t now = mh_now_us();
  for (int i = 0; i < n; i++) {
    struct sockaddr_storage dst;
    if (mh__pc_dst(e, &u, &ifs[i], &dst) < 0 ||
        !mh_netstate_check_due(e->netstate, ifs[i].name, MH_PORTAL_PERIOD_US, now))
      continue;
    struct mh__pcheck *c = calloc(1, sizeof *c);
    if (!c)
      return;
    c->ns = e->netstate;
    snprintf(c->ifname, sizeof c->ifname, "%s", ifs[i].name);
    int hl = snprintf(c->req, sizeof c->req,
                      "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: libmhttp-portal-check\r\nConnection: close\r\n\r\n",
                      u.path, u.hostport);
    c->req_len = hl > 0 && (size_t)hl < sizeof c->req ? (size_t)hl : 0;
    if (!c->req_len || mh__pc_open(e, c, &ifs[i], &dst) < 0) {
      free(c);
      continue;
    }
    mh_dbg("portal check: GET %s on %s", e->cfg->portal_check, ifs[i].name);
  }
}
