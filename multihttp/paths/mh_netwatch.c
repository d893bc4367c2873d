/* Kernel network events (rtnetlink) on an engine's loop: a NETLINK_ROUTE socket under a uv_poll_t, a settle timer, the interface table read again and compared. */
#include "mh_netwatch.h"
#include "mh_fdgate.h"
#include "mh_upstream.h"
#include "mh_log.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct mh_netwatch {
  int fd;
  uv_poll_t poll;
  uv_timer_t settle;
  int open_handles; /* handles not yet closed: freed when it reaches 0 */
  const struct mh_config *cfg;
  struct mh_netwatch_table last; /* the table as last read */
  void (*changed)(void *arg, const struct mh_netwatch_table *now);
  void *arg;
};

int mh_netwatch_read(const struct mh_config *cfg, struct mh_netwatch_table *out) {
  int n4 = mh_path_ifaces(cfg, AF_INET, out->v, MH_MAX_IFACES);
  if (n4 < 0)
    return n4;
  int n6 = mh_path_ifaces(cfg, AF_INET6, out->v + n4, MH_MAX_IFACES);
  if (n6 < 0)
    return n6;
  out->n = n4 + n6;
  return 0;
}

int mh_netwatch_same(const struct mh_netwatch_table *a, const struct mh_netwatch_table *b) {
  if (a->n != b->n)
    return 0;
  for (int i = 0; i < a->n; i++)
    if (strcmp(a->v[i].name, b->v[i].name) ||
        !mh_path_same_addr((const struct sockaddr *)&a->v[i].addr, (const struct sockaddr *)&b->v[i].addr))
      return 0;
  return 1;
}

int mh_netwatch_relevant(const void *buf, size_t len) {
  int n = 0;
  size_t left = len;
  for (const struct nlmsghdr *h = buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
    switch (h->nlmsg_type) {
    case RTM_NEWLINK:
    case RTM_DELLINK:
    case RTM_NEWADDR:
    case RTM_DELADDR:
    case RTM_NEWROUTE:
    case RTM_DELROUTE:
    case NLMSG_ERROR:
    case NLMSG_OVERRUN: n++; break;
    default: break;
    }
  }
  return n;
}

/* The burst settled: the table is read again, and a change is announced. */
static void mh__nw_settled(uv_timer_t *t) {
  struct mh_netwatch *nw = t->data;
  struct mh_netwatch_table now;
  int rc = mh_netwatch_read(nw->cfg, &now);
  if (rc < 0) {
    mh_info("netwatch: interfaces unreadable: %s", strerror(-rc));
    return;
  }
  if (mh_netwatch_same(&now, &nw->last))
    return;
  nw->last = now;
  nw->changed(nw->arg, &now);
}

/* Reads every queued message (bounded per event: the loop serves others too); a relevant one
 * (or a lost one: ENOBUFS) starts the settle timer unless a burst is being gathered already. */
static void mh__nw_readable(uv_poll_t *h, int status, int events) {
  (void)events;
  struct mh_netwatch *nw = h->data;
  char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
  int relevant = status < 0;
  for (int k = 0; k < 64; k++) {
    ssize_t r = recv(nw->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0 && errno == ENOBUFS) { /* the kernel dropped messages: read the table again */
      relevant = 1;
      continue;
    }
    if (r <= 0)
      break;
    relevant += mh_netwatch_relevant(buf, (size_t)r);
  }
  if (relevant && !uv_is_active((uv_handle_t *)&nw->settle))
    uv_timer_start(&nw->settle, mh__nw_settled, MH_NETWATCH_SETTLE_MS, 0);
}

static int mh__nw_socket(void) {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
  if (fd < 0)
    return -errno;
  struct sockaddr_nl sa = {.nl_family = AF_NETLINK,
                           .nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE |
                                        RTMGRP_IPV6_ROUTE};
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
    int err = -errno;
    close(fd);
    return err;
  }
  return fd;
}

int mh_netwatch_start(uv_loop_t *loop, const struct mh_upstream_env *env, const struct mh_config *cfg,
                      void (*changed)(void *arg, const struct mh_netwatch_table *now), void *arg,
                      struct mh_netwatch **out) {
  struct mh_netwatch *nw = calloc(1, sizeof *nw);
  if (!nw)
    return -ENOMEM;
  mh_fdgate(1); /* made and announced before a fork can copy it */
  nw->fd = mh__nw_socket();
  mh_upstream_own_fd(env, nw->fd);
  mh_fdgate(0);
  if (nw->fd < 0) {
    int err = nw->fd;
    free(nw);
    return err;
  }
  int rc = uv_poll_init(loop, &nw->poll, nw->fd);
  if (rc < 0) {
    close(nw->fd);
    free(nw);
    return rc;
  }
  nw->cfg = cfg;
  nw->changed = changed;
  nw->arg = arg;
  if (mh_netwatch_read(cfg, &nw->last) < 0)
    nw->last.n = 0;
  uv_timer_init(loop, &nw->settle);
  nw->poll.data = nw->settle.data = nw;
  nw->open_handles = 2;
  uv_poll_start(&nw->poll, UV_READABLE, mh__nw_readable);
  /* watching keeps no loop alive that has nothing else to do (an embedding's uv_run returns) */
  uv_unref((uv_handle_t *)&nw->poll);
  uv_unref((uv_handle_t *)&nw->settle);
  *out = nw;
  return 0;
}

static void mh__nw_closed(uv_handle_t *h) {
  struct mh_netwatch *nw = h->data;
  if (h == (uv_handle_t *)&nw->poll)
    close(nw->fd); /* only now: a descriptor number is never reused under a live poll */
  if (--nw->open_handles == 0)
    free(nw);
}

void mh_netwatch_close(struct mh_netwatch *nw) {
  if (!nw)
    return;
  uv_close((uv_handle_t *)&nw->poll, mh__nw_closed);
  uv_close((uv_handle_t *)&nw->settle, mh__nw_closed);
}
