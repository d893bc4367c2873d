/* A small epoll-driven HTTP/1.1 GET client: registers its socket before the first write, as aria2 and libuv programs do, and streams the body to a file. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* usage: epoll_get URL [OUTFILE]   (URL = http://host[:port]/path; body to OUTFILE or stdout)
 * exit: 0 on a 2xx response read to its end, 1 on another status, 2 on a network error. */

static int fail(const char *what, int err) {
  fprintf(stderr, "epoll_get: %s: %s\n", what, strerror(err));
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 2 || strncmp(argv[1], "http://", 7)) {
    fprintf(stderr, "usage: epoll_get http://host[:port]/path [outfile]\n");
    return 2;
  }
  char host[256], port[8] = "80";
  const char *h = argv[1] + 7, *path = strchr(h, '/');
  if (!path)
    path = "/";
  size_t hl = (size_t)(path == h ? 0 : (strchr(h, '/') ? strchr(h, '/') - h : (long)strlen(h)));
  if (hl == 0 || hl >= sizeof host)
    return fail("bad host", EINVAL);
  memcpy(host, h, hl);
  host[hl] = 0;
  char *colon = host[0] == '[' ? strstr(host, "]:") : strrchr(host, ':');
  if (colon) {
    if (host[0] == '[')
      colon++;
    snprintf(port, sizeof port, "%s", colon + 1);
    *colon = 0;
  }
  char *name = host;
  if (name[0] == '[') { /* [v6 literal] */
    name++;
    name[strcspn(name, "]")] = 0;
  }
  int out = 1;
  if (argc > 2 && (out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
    return fail(argv[2], errno);

  struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
  int rc = getaddrinfo(name, port, &hints, &ai);
  if (rc) {
    fprintf(stderr, "epoll_get: %s: %s\n", name, gai_strerror(rc));
    return 2;
  }
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return fail("socket", errno);
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS)
    return fail("connect", errno);
  freeaddrinfo(ai);

  int ep = epoll_create1(EPOLL_CLOEXEC);
  /* registered before anything is written: under libmhttp this registration must follow the
   * fd when the connection is taken over on the first write */
  struct epoll_event ev = {.events = EPOLLOUT, .data.fd = fd};
  if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
    return fail("epoll", errno);

  char req[1024];
  int reqlen = snprintf(
      req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: epoll_get\r\nConnection: close\r\n\r\n", path, host);
  int sent = 0, status = 0, in_body = 0;
  char head[16384];
  size_t headlen = 0;
  char buf[65536];
  for (;;) {
    struct epoll_event got;
    int n = epoll_wait(ep, &got, 1, 30000);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return fail("epoll_wait", n == 0 ? ETIMEDOUT : errno);
    if (sent < reqlen) {
      int err = 0;
      socklen_t el = sizeof err;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
      if (err)
        return fail("connect", err);
      ssize_t w = send(fd, req + sent, (size_t)(reqlen - sent), MSG_NOSIGNAL);
      if (w < 0 && errno != EAGAIN)
        return fail("send", errno);
      if (w > 0 && (sent += (int)w) == reqlen) {
        ev.events = EPOLLIN; /* MOD, not ADD: the same registration now waits for the answer */
        if (epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev) < 0)
          return fail("epoll_ctl MOD", errno);
      }
      continue;
    }
    ssize_t r = recv(fd, buf, sizeof buf, 0);
    if (r < 0 && errno == EAGAIN)
      continue;
    if (r < 0)
      return fail("recv", errno);
    if (r == 0)
      break;
    if (in_body) {
      if (write(out, buf, (size_t)r) != r)
        return fail("write", errno);
      continue;
    }
    size_t k = (size_t)r < sizeof head - headlen ? (size_t)r : sizeof head - headlen;
    memcpy(head + headlen, buf, k);
    headlen += k;
    char *end = memmem(head, headlen, "\r\n\r\n", 4);
    if (!end) {
      if (headlen == sizeof head)
        return fail("response header", E2BIG);
      continue;
    }
    sscanf(head, "HTTP/%*d.%*d %d", &status);
    size_t hdr = (size_t)(end + 4 - head);
    in_body = 1;
    size_t body = headlen - hdr + ((size_t)r - k);
    const char *bstart = buf + (size_t)r - body;
    if (body && write(out, bstart, body) != (ssize_t)body)
      return fail("write", errno);
  }
  fprintf(stderr, "epoll_get: HTTP %d\n", status);
  close(fd);
  return status >= 200 && status < 300 ? 0 : 1;
}
