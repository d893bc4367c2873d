/* mhttp-linkprobe: measures TCP goodput across an emulated link. `serve` sends data to each
 * client for as long as it asks; `get` receives, skips a warm-up (slow start) and reports the
 * goodput of a timed window plus the L3 rate it implies (what mhttp-linkemu --rate counts). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <linux/tcp.h> /* not netinet/tcp.h: its tcp_info lacks tcpi_bytes_received */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG "mhttp-linkprobe"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void) {
  fprintf(stderr,
          "usage: " PROG " serve --port P [--bind ADDR] [--lifetime S]\n"
          "       " PROG " get --addr A --port P [--warmup S] [--seconds S]\n"
          "get prints: goodput_bps=N l3_bps=N wire_bps=N mss=N bytes=N segs=N window_s=X\n"
          "l3_bps = goodput x (mss + IP/TCP headers + options) / mss; wire_bps = data segments\n"
          "received (retransmissions too) x (mss + headers): the L3 rate the link carried\n");
  exit(1);
}

static const char *opt(int argc, char **argv, const char *name, const char *def) {
  for (int i = 2; i + 1 < argc; i += 2)
    if (!strcmp(argv[i], name))
      return argv[i + 1];
  return def;
}

static int check_opts(int argc, char **argv, const char *const *known) {
  if (argc % 2)
    return -1;
  for (int i = 2; i < argc; i += 2) {
    int ok = 0;
    for (const char *const *k = known; *k; k++)
      ok |= !strcmp(argv[i], *k);
    if (!ok)
      return -1;
  }
  return 0;
}

static int serve(int argc, char **argv) {
  static const char *const known[] = {"--port", "--bind", "--lifetime", NULL};
  if (check_opts(argc, argv, known) || !opt(argc, argv, "--port", NULL))
    usage();
  int port = atoi(opt(argc, argv, "--port", "0"));
  double lifetime = atof(opt(argc, argv, "--lifetime", "600"));
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, opt(argc, argv, "--bind", "0.0.0.0"), &sa.sin_addr) != 1)
    usage();
  int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(l, 4) < 0) {
    fprintf(stderr, PROG ": listen on port %d: %s\n", port, strerror(errno));
    return 1;
  }
  static char buf[1 << 16];
  memset(buf, 'x', sizeof buf);
  double end_of_life = now_s() + lifetime;
  while (now_s() < end_of_life) {
    struct pollfd p = {.fd = l, .events = POLLIN};
    if (poll(&p, 1, 500) <= 0)
      continue;
    int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0)
      continue;
    struct timeval tv = {.tv_sec = 5};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    char req[64] = {0};
    ssize_t r = recv(c, req, sizeof req - 1, 0);
    double secs = 0;
    if (r > 0 && sscanf(req, "send %lf", &secs) == 1 && secs > 0 && secs <= 300) {
      double end = now_s() + secs;
      while (now_s() < end && now_s() < end_of_life)
        if (send(c, buf, sizeof buf, MSG_NOSIGNAL) < 0 && errno != EINTR && errno != EAGAIN)
          break;
    }
    close(c);
  }
  close(l);
  return 0;
}

/* Bytes the kernel has received in order on `s`, data segments it has received (in order or
 * not, retransmissions included: what the link carried), and the time it was asked. */
static unsigned long long kernel_bytes(int s, unsigned long long *segs, double *t) {
  struct tcp_info ti;
  socklen_t tl = sizeof ti;
  memset(&ti, 0, sizeof ti);
  getsockopt(s, IPPROTO_TCP, TCP_INFO, &ti, &tl);
  *t = now_s();
  *segs = ti.tcpi_data_segs_in;
  return (unsigned long long)ti.tcpi_bytes_received;
}

static int get(int argc, char **argv) {
  static const char *const known[] = {"--addr", "--port", "--warmup", "--seconds", NULL};
  if (check_opts(argc, argv, known) || !opt(argc, argv, "--addr", NULL) || !opt(argc, argv, "--port", NULL))
    usage();
  double warm = atof(opt(argc, argv, "--warmup", "2"));
  double secs = atof(opt(argc, argv, "--seconds", "5"));
  if (warm < 0 || secs <= 0 || warm + secs > 290)
    usage();
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(opt(argc, argv, "--port", "0")))};
  if (inet_pton(AF_INET, opt(argc, argv, "--addr", ""), &sa.sin_addr) != 1)
    usage();
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct timeval tv = {.tv_sec = 5};
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
    fprintf(stderr, PROG ": connect: %s\n", strerror(errno));
    return 1;
  }
  char req[64];
  int n = snprintf(req, sizeof req, "send %.3f\n", warm + secs + 2);
  if (send(s, req, (size_t)n, MSG_NOSIGNAL) != n) {
    fprintf(stderr, PROG ": send request: %s\n", strerror(errno));
    return 1;
  }
  static char buf[1 << 16];
  unsigned long long total = 0, b1 = 0, b2 = 0, s1 = 0, s2 = 0;
  double t0 = -1, t1 = -1, t2 = -1;
  for (;;) {
    ssize_t r = recv(s, buf, sizeof buf, 0);
    if (r <= 0) {
      fprintf(stderr, PROG ": transfer ended early after %llu bytes: %s\n", total,
              r < 0 ? strerror(errno) : "closed");
      return 1;
    }
    double t = now_s();
    if (t0 < 0)
      t0 = t;
    total += (unsigned long long)r;
    /* The window's edges use the kernel's count of bytes received (TCP_INFO), not what this
     * process has read so far: a late read would shift bytes across an edge. */
    if (t1 < 0 && t - t0 >= warm) {
      b1 = kernel_bytes(s, &s1, &t1);
    } else if (t1 >= 0 && t - t1 >= secs) {
      b2 = kernel_bytes(s, &s2, &t2);
      break;
    }
  }
  int mss = 0;
  socklen_t ml = sizeof mss;
  getsockopt(s, IPPROTO_TCP, TCP_MAXSEG, &mss, &ml);
  struct tcp_info ti;
  socklen_t tl = sizeof ti;
  memset(&ti, 0, sizeof ti);
  getsockopt(s, IPPROTO_TCP, TCP_INFO, &ti, &tl);
  close(s);
  /* mss excludes TCP options; every segment carries 20 (IPv4) + 20 (TCP) bytes of headers
   * plus 12 of timestamps when negotiated. */
  int hdr = 40 + ((ti.tcpi_options & TCPI_OPT_TIMESTAMPS) ? 12 : 0);
  double good = (double)(b2 - b1) * 8.0 / (t2 - t1);
  double l3 = mss > 0 ? good * (double)(mss + hdr) / (double)mss : good;
  /* Bulk transfer: every data segment is a full one, so this is the L3 rate the link carried
   * (retransmissions included), immune to a hole straddling a window edge. */
  double wire = (double)(s2 - s1) * (double)(mss + hdr) * 8.0 / (t2 - t1);
  printf("goodput_bps=%.0f l3_bps=%.0f wire_bps=%.0f mss=%d bytes=%llu segs=%llu window_s=%.3f\n", good,
         l3, wire, mss, b2 - b1, s2 - s1, t2 - t1);
  return 0;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc < 2)
    usage();
  if (!strcmp(argv[1], "serve"))
    return serve(argc, argv);
  if (!strcmp(argv[1], "get"))
    return get(argc, argv);
  usage();
  return 1;
}
