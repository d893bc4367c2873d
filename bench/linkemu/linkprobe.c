/* mhttp-linkprobe: measures TCP goodput across an emulated link. `serve` sends data to each
 * client connection for as long as it asks (one process per connection); `get` receives on
 * one or more parallel connections, skips a warm-up (slow start) and reports the goodput of a
 * timed window plus the L3 rate the link carried (what mhttp-linkemu --rate counts). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/tcp.h> /* not netinet/tcp.h: its tcp_info lacks tcpi_bytes_received */
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROG "mhttp-linkprobe"
#define MAX_STREAMS 16
#define MAX_CHILDREN 32

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void) {
  fprintf(stderr, "usage: " PROG " serve --port P [--bind ADDR] [--lifetime S]\n"
                  "       " PROG " get --addr A --port P [--warmup S] [--seconds S] [--streams N]\n"
                  "get prints: goodput_bps=N l3_bps=N wire_bps=N mss=N bytes=N segs=N window_s=X\n"
                  "l3_bps = goodput x (mss + IP/TCP headers + options) / mss; wire_bps = data segments\n"
                  "received (retransmissions too) x (mss + headers): the L3 rate the link carried.\n"
                  "With --streams N the figures are the sum over N parallel connections.\n");
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

/* One connection, in its own process: read "send SECONDS", then send until then. */
static void serve_one(int c, double end_of_life) {
  static char buf[1 << 16];
  memset(buf, 'x', sizeof buf);
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
  if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(l, MAX_STREAMS) < 0) {
    fprintf(stderr, PROG ": listen on port %d: %s\n", port, strerror(errno));
    return 1;
  }
  double end_of_life = now_s() + lifetime;
  int children = 0;
  while (now_s() < end_of_life) {
    while (children > 0 && waitpid(-1, NULL, WNOHANG) > 0)
      children--;
    struct pollfd p = {.fd = l, .events = POLLIN};
    if (children >= MAX_CHILDREN || poll(&p, 1, 200) <= 0) {
      if (children >= MAX_CHILDREN)
        usleep(100000);
      continue;
    }
    int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0)
      continue;
    pid_t pid = fork();
    if (pid == 0) {
      close(l);
      serve_one(c, end_of_life);
      _exit(0);
    }
    if (pid > 0)
      children++;
    close(c);
  }
  close(l);
  return 0;
}

/* Sums over the streams: bytes the kernel has received in order, data segments it has
 * received (in order or not, retransmissions included: what the link carried); and the time
 * it was asked. Kernel counters, not bytes read, so a late read cannot shift bytes across a
 * window edge. */
static void kernel_counts(const int *s, int n, unsigned long long *bytes, unsigned long long *segs, double *t) {
  *bytes = *segs = 0;
  for (int i = 0; i < n; i++) {
    struct tcp_info ti;
    socklen_t tl = sizeof ti;
    memset(&ti, 0, sizeof ti);
    getsockopt(s[i], IPPROTO_TCP, TCP_INFO, &ti, &tl);
    *bytes += ti.tcpi_bytes_received;
    *segs += ti.tcpi_data_segs_in;
  }
  *t = now_s();
}

static int get(int argc, char **argv) {
  static const char *const known[] = {"--addr", "--port", "--warmup", "--seconds", "--streams", NULL};
  if (check_opts(argc, argv, known) || !opt(argc, argv, "--addr", NULL) || !opt(argc, argv, "--port", NULL))
    usage();
  double warm = atof(opt(argc, argv, "--warmup", "2"));
  double secs = atof(opt(argc, argv, "--seconds", "5"));
  int n = atoi(opt(argc, argv, "--streams", "1"));
  if (warm < 0 || secs <= 0 || warm + secs > 290 || n < 1 || n > MAX_STREAMS)
    usage();
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(opt(argc, argv, "--port", "0")))};
  if (inet_pton(AF_INET, opt(argc, argv, "--addr", ""), &sa.sin_addr) != 1)
    usage();
  int s[MAX_STREAMS];
  struct pollfd pfd[MAX_STREAMS];
  char req[64];
  int rl = snprintf(req, sizeof req, "send %.3f\n", warm + secs + 2);
  for (int i = 0; i < n; i++) {
    s[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval tv = {.tv_sec = 5};
    setsockopt(s[i], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (s[i] < 0 || connect(s[i], (struct sockaddr *)&sa, sizeof sa) < 0) {
      fprintf(stderr, PROG ": connect: %s\n", strerror(errno));
      return 1;
    }
    if (send(s[i], req, (size_t)rl, MSG_NOSIGNAL) != rl) {
      fprintf(stderr, PROG ": send request: %s\n", strerror(errno));
      return 1;
    }
    pfd[i] = (struct pollfd){.fd = s[i], .events = POLLIN};
  }
  static char buf[1 << 16];
  unsigned long long total = 0, b1 = 0, b2 = 0, s1 = 0, s2 = 0;
  double t0 = -1, t1 = -1, t2 = -1;
  while (t2 < 0) {
    int pr = poll(pfd, (nfds_t)n, 5000);
    if (pr <= 0) {
      fprintf(stderr, PROG ": transfer stalled for 5 s after %llu bytes\n", total);
      return 1;
    }
    for (int i = 0; i < n; i++) {
      if (!pfd[i].revents)
        continue;
      ssize_t r = recv(s[i], buf, sizeof buf, MSG_DONTWAIT);
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
        fprintf(stderr, PROG ": transfer ended early after %llu bytes: %s\n", total,
                r < 0 ? strerror(errno) : "closed");
        return 1;
      }
      if (r > 0)
        total += (unsigned long long)r;
    }
    double t = now_s();
    if (t0 < 0)
      t0 = t;
    if (t1 < 0 && t - t0 >= warm)
      kernel_counts(s, n, &b1, &s1, &t1);
    else if (t1 >= 0 && t - t1 >= secs)
      kernel_counts(s, n, &b2, &s2, &t2);
  }
  int mss = 0;
  socklen_t ml = sizeof mss;
  getsockopt(s[0], IPPROTO_TCP, TCP_MAXSEG, &mss, &ml);
  struct tcp_info ti;
  socklen_t tl = sizeof ti;
  memset(&ti, 0, sizeof ti);
  getsockopt(s[0], IPPROTO_TCP, TCP_INFO, &ti, &tl);
  for (int i = 0; i < n; i++)
    close(s[i]);
  /* mss excludes TCP options; every segment carries 20 (IPv4) + 20 (TCP) bytes of headers
   * plus 12 of timestamps when negotiated. */
  int hdr = 40 + ((ti.tcpi_options & TCPI_OPT_TIMESTAMPS) ? 12 : 0);
  double good = (double)(b2 - b1) * 8.0 / (t2 - t1);
  double l3 = mss > 0 ? good * (double)(mss + hdr) / (double)mss : good;
  /* Bulk transfer: every data segment is a full one, so this is the L3 rate the link carried
   * (retransmissions included), immune to a loss hole straddling the window edge. */
  double wire = (double)(s2 - s1) * (double)(mss + hdr) * 8.0 / (t2 - t1);
  printf("goodput_bps=%.0f l3_bps=%.0f wire_bps=%.0f mss=%d bytes=%llu segs=%llu window_s=%.3f\n", good, l3, wire, mss,
         b2 - b1, s2 - s1, t2 - t1);
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
