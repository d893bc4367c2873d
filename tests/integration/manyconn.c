/* Test helper: N non-blocking HTTP/1.1 downloads in one epoll loop (all at once, or at most C open at a time), each body compared byte for byte with the file on disk; prints counts, times, peak RSS and the descriptors and heap left behind. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#define MC_MAX_PATHS 64
#define MC_MAX_HOSTS 8
#define MC_HEAD_CAP 4096
#define MC_REPORT_MAX 10 /* failures printed one per line; the rest are only counted */

/* One expected body: a file of the docroot, mapped once. */
struct mc_file {
  const char *path; /* URL path, e.g. /files/65536.bin */
  const unsigned char *data;
  size_t size;
};

enum mc_state {
  MC_CONNECTING, /* non-blocking connect under way: waiting for writable */
  MC_SENDING,    /* the request is (partly) written */
  MC_HEAD,       /* reading the status line and headers */
  MC_BODY,       /* comparing body bytes with the file */
  MC_DONE,       /* every request answered byte-exact; socket closed */
  MC_FAILED,     /* gave up (reason printed); socket closed */
};

struct mc_conn {
  int fd;
  enum mc_state state;
  int host;          /* index into hosts[] */
  int reqs_done;     /* requests answered on this connection */
  struct mc_file *f; /* the object of the request in flight */
  char req[512];
  size_t req_len, req_off;
  char head[MC_HEAD_CAP];
  size_t head_len;
  size_t body_off;   /* body bytes compared so far */
  double start, end; /* seconds (monotonic) */
};

static struct {
  int n, k, deadline_s;
  int conc;                         /* most connections open at once (0: all n at once) */
  int started;                      /* connections opened so far */
  int settle_ms;                    /* wait after the last answer before counting what is left */
  int fds_start, fds_warm, fds_end; /* open descriptors: before, at n/10 ended, after */
  size_t heap_warm, heap_end;       /* malloc's in-use bytes at the same points */
  const char *root;
  const char *hosts[MC_MAX_HOSTS];
  struct sockaddr_storage addr[MC_MAX_HOSTS];
  socklen_t addr_len[MC_MAX_HOSTS];
  int nhosts;
  const char *port;
  struct mc_file files[MC_MAX_PATHS];
  int nfiles;
  struct mc_conn *c;
  int ep;
  int open, done, failed, reported;
  uint64_t bytes;
  size_t heap_live, heap_sys; /* peaks of malloc's in-use and obtained bytes, all arenas */
} M = {.n = 1000, .k = 1, .deadline_s = 60, .fds_warm = -1};

static unsigned char mc_buf[1 << 16];

static double mc_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Samples malloc's counters (every arena, the interposed engine's thread included): peak RSS
 * alone cannot tell live buffers from allocator slack. */
static void mc_sample_heap(void) {
  struct mallinfo2 mi = mallinfo2();
  size_t live = mi.uordblks + mi.hblkhd, sys = mi.arena + mi.hblkhd;
  if (live > M.heap_live)
    M.heap_live = live;
  if (sys > M.heap_sys)
    M.heap_sys = sys;
}

/* The process's open descriptors, the interposed engine's included: a leak grows it by one
 * (or more) per object, so it is read before, part-way and after. */
static int mc_count_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d)
    return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    n += e->d_name[0] != '.';
  closedir(d);
  return n - 1; /* the directory's own descriptor */
}

static size_t mc_heap_live(void) {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

static void mc_usage(void) {
  fprintf(stderr, "usage: manyconn [-n CONNS] [-c MAX_OPEN] [-k REQS_PER_CONN] [-t DEADLINE_S] [-s SETTLE_MS] "
                  "[-r DOCROOT] HOST[,HOST...] PORT PATH...\n"
                  "  connection i asks for PATH[(i + j) %% npaths] as its j-th request, to HOST[i %% nhosts];\n"
                  "  MAX_OPEN (default CONNS) connections are open at once, the next opened as one ends;\n"
                  "  DOCROOT (default $TESTBED_FILES_DIR) holds the expected bytes of each PATH\n");
  exit(2);
}

/* Enough descriptors for every connection plus what an interposed engine opens beside each
 * (its socketpair end, the upstream socket, a splice pipe, split legs): 8 per connection. */
static void mc_raise_nofile(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
    return;
  rlim_t want = (rlim_t)(M.conc ? M.conc : M.n) * 8 + 256;
  if (rl.rlim_cur >= want)
    return;
  if (rl.rlim_max < want) {
    struct rlimit hard = {want, want};
    if (setrlimit(RLIMIT_NOFILE, &hard) == 0)
      return;
    want = rl.rlim_max; /* not privileged: as many as allowed */
  }
  rl.rlim_cur = want;
  if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
    perror("manyconn: setrlimit");
}

static void mc_map_file(struct mc_file *f) {
  char p[4096];
  snprintf(p, sizeof p, "%s/%s", M.root, f->path[0] == '/' ? f->path + 1 : f->path);
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) {
    fprintf(stderr, "manyconn: %s: %s\n", p, strerror(errno));
    exit(2);
  }
  f->size = (size_t)st.st_size;
  f->data = f->size ? mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0) : (const unsigned char *)"";
  if (f->data == MAP_FAILED) {
    perror("manyconn: mmap");
    exit(2);
  }
  close(fd);
}

static void mc_resolve(void) {
  for (int h = 0; h < M.nhosts; h++) {
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(M.hosts[h], M.port, &hints, &res);
    if (rc) {
      fprintf(stderr, "manyconn: %s: %s\n", M.hosts[h], gai_strerror(rc));
      exit(2);
    }
    memcpy(&M.addr[h], res->ai_addr, res->ai_addrlen);
    M.addr_len[h] = res->ai_addrlen;
    freeaddrinfo(res);
  }
}

static void mc_open(struct mc_conn *c, int i);

/* A connection ended (done or failed): the warm checkpoint, then the next connection. */
static void mc_ended(void) {
  if (M.fds_warm < 0 && M.done + M.failed >= (M.n + 9) / 10) {
    M.fds_warm = mc_count_fds();
    M.heap_warm = mc_heap_live();
  }
  if (M.conc && M.started < M.n) {
    M.started++;
    mc_open(&M.c[M.started - 1], M.started - 1);
  }
}

static void mc_fail(struct mc_conn *c, const char *why) {
  if (M.reported++ < MC_REPORT_MAX)
    fprintf(stderr, "manyconn: conn %ld (%s, request %d, state %d, body %zu/%zu): %s\n", (long)(c - M.c),
            M.hosts[c->host], c->reqs_done, c->state, c->body_off, c->f ? c->f->size : 0, why);
  close(c->fd);
  c->fd = -1;
  c->state = MC_FAILED;
  c->end = mc_now();
  M.failed++;
  M.open--;
  mc_ended();
}

static void mc_watch(struct mc_conn *c, int op, uint32_t events) {
  struct epoll_event ev = {.events = events, .data.ptr = c};
  if (epoll_ctl(M.ep, op, c->fd, &ev) < 0) {
    perror("manyconn: epoll_ctl");
    exit(2);
  }
}

/* Prepares request number reqs_done of c (keep-alive unless it is the last). */
static void mc_next_request(struct mc_conn *c) {
  long i = c - M.c;
  c->f = &M.files[(i + c->reqs_done) % M.nfiles];
  int last = c->reqs_done + 1 == M.k;
  int n = snprintf(c->req, sizeof c->req, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: manyconn\r\n%s\r\n", c->f->path,
                   M.hosts[c->host], last ? "Connection: close\r\n" : "");
  c->req_len = (size_t)n;
  c->req_off = 0;
  c->head_len = 0;
  c->body_off = 0;
  c->state = MC_SENDING;
}

static void mc_open(struct mc_conn *c, int i) {
  c->host = i % M.nhosts;
  c->start = mc_now();
  c->fd = socket(M.addr[c->host].ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0) {
    fprintf(stderr, "manyconn: socket: %s\n", strerror(errno));
    exit(2);
  }
  M.open++;
  c->state = MC_CONNECTING;
  /* a refused connect fails at once; its mc_ended opens the next, bounded by n */
  if (connect(c->fd, (struct sockaddr *)&M.addr[c->host], M.addr_len[c->host]) < 0 && errno != EINPROGRESS) {
    mc_fail(c, strerror(errno));
    return;
  }
  mc_watch(c, EPOLL_CTL_ADD, EPOLLOUT);
}

static void mc_send(struct mc_conn *c) {
  while (c->req_off < c->req_len) {
    ssize_t n = write(c->fd, c->req + c->req_off, c->req_len - c->req_off);
    if (n < 0 && errno == EAGAIN)
      return;
    if (n < 0) {
      mc_fail(c, strerror(errno));
      return;
    }
    c->req_off += (size_t)n;
  }
  c->state = MC_HEAD;
  mc_watch(c, EPOLL_CTL_MOD, EPOLLIN);
}

/* Parses a complete header block: 200 and a Content-Length equal to the file's size. */
static int mc_parse_head(struct mc_conn *c, const char **why) {
  int status = 0;
  if (sscanf(c->head, "HTTP/1.%*d %d", &status) != 1 || status != 200) {
    *why = "status is not 200";
    return -1;
  }
  long long len = -1;
  for (char *l = strstr(c->head, "\r\n"); l && l[2] != '\r'; l = strstr(l + 2, "\r\n"))
    if (!strncasecmp(l + 2, "Content-Length:", 15))
      len = atoll(l + 17);
  if (len < 0 || (size_t)len != c->f->size) {
    *why = "Content-Length missing or not the file's size";
    return -1;
  }
  return 0;
}

/* Takes header bytes from p; returns how many were used, -1 after a failure. */
static ssize_t mc_take_head(struct mc_conn *c, const unsigned char *p, size_t n) {
  size_t room = MC_HEAD_CAP - 1 - c->head_len;
  size_t k = n < room ? n : room;
  memcpy(c->head + c->head_len, p, k);
  size_t old = c->head_len;
  c->head_len += k;
  c->head[c->head_len] = 0;
  char *end = strstr(c->head, "\r\n\r\n");
  if (!end) {
    if (c->head_len == MC_HEAD_CAP - 1) {
      mc_fail(c, "header block too long");
      return -1;
    }
    return (ssize_t)k;
  }
  size_t used = (size_t)(end + 4 - c->head) - old;
  end[2] = 0;
  const char *why;
  if (mc_parse_head(c, &why) < 0) {
    mc_fail(c, why);
    return -1;
  }
  c->state = MC_BODY;
  return (ssize_t)used;
}

static void mc_request_done(struct mc_conn *c) {
  c->reqs_done++;
  if (c->reqs_done < M.k) {
    mc_next_request(c);
    mc_watch(c, EPOLL_CTL_MOD, EPOLLOUT);
    return;
  }
  close(c->fd);
  c->fd = -1;
  c->state = MC_DONE;
  c->end = mc_now();
  M.done++;
  M.open--;
  mc_ended();
}

/* Compares body bytes; returns how many were used, -1 after a failure or when done. */
static ssize_t mc_take_body(struct mc_conn *c, const unsigned char *p, size_t n) {
  size_t left = c->f->size - c->body_off;
  if (n > left) {
    mc_fail(c, "bytes beyond the body");
    return -1;
  }
  if (memcmp(p, c->f->data + c->body_off, n)) {
    mc_fail(c, "body differs from the file");
    return -1;
  }
  c->body_off += n;
  M.bytes += n;
  return (ssize_t)n;
}

static void mc_consume(struct mc_conn *c, const unsigned char *p, size_t n) {
  while (n || (c->state == MC_BODY && c->body_off == c->f->size)) {
    ssize_t used = c->state == MC_HEAD ? mc_take_head(c, p, n) : mc_take_body(c, p, n);
    if (used < 0)
      return;
    p += used;
    n -= (size_t)used;
    if (c->state == MC_BODY && c->body_off == c->f->size) {
      if (n) {
        mc_fail(c, "bytes beyond the body");
        return;
      }
      mc_request_done(c);
      return;
    }
  }
}

static void mc_read(struct mc_conn *c) {
  for (int round = 0; round < 16 && (c->state == MC_HEAD || c->state == MC_BODY); round++) {
    ssize_t n = read(c->fd, mc_buf, sizeof mc_buf);
    if (n < 0 && errno == EAGAIN)
      return;
    if (n < 0) {
      mc_fail(c, strerror(errno));
      return;
    }
    if (n == 0) {
      mc_fail(c, "EOF before the end of the response");
      return;
    }
    mc_consume(c, mc_buf, (size_t)n);
  }
}

static void mc_event(struct mc_conn *c, uint32_t ev) {
  if (c->state == MC_CONNECTING) {
    int err = 0;
    socklen_t l = sizeof err;
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l);
    if (err) {
      mc_fail(c, strerror(err));
      return;
    }
    mc_next_request(c);
  }
  if (c->state == MC_SENDING)
    mc_send(c);
  else if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && (c->state == MC_HEAD || c->state == MC_BODY))
    mc_read(c);
}

static int mc_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One line on stdout: counts, times (connect to last byte) and the process's peak RSS. */
static void mc_report(double t0, int timed_out) {
  double *d = calloc((size_t)M.n, sizeof *d);
  int nd = 0;
  for (int i = 0; i < M.n; i++)
    if (M.c[i].state == MC_DONE)
      d[nd++] = M.c[i].end - M.c[i].start;
  qsort(d, (size_t)nd, sizeof *d, mc_cmp_double);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("manyconn: conns %d reqs_per_conn %d completed %d failed %d stalled %d bytes %llu wall_ms %.0f "
         "median_ms %.0f max_ms %.0f maxrss_kib %ld heap_live_kib %zu heap_sys_kib %zu "
         "fds_start %d fds_warm %d fds_end %d heap_warm_kib %zu heap_end_kib %zu%s\n",
         M.n, M.k, M.done, M.failed, M.open, (unsigned long long)M.bytes, (mc_now() - t0) * 1e3,
         nd ? d[nd / 2] * 1e3 : 0, nd ? d[nd - 1] * 1e3 : 0, ru.ru_maxrss, M.heap_live >> 10, M.heap_sys >> 10,
         M.fds_start, M.fds_warm, M.fds_end, M.heap_warm >> 10, M.heap_end >> 10, timed_out ? " TIMEOUT" : "");
  free(d);
}

/* At the deadline: how many connections wait in each state, and a few of them. */
static void mc_report_stalled(void) {
  int by[MC_FAILED + 1] = {0};
  for (int i = 0; i < M.started; i++)
    by[M.c[i].state]++;
  fprintf(stderr, "manyconn: deadline: connecting %d sending %d head %d body %d\n", by[MC_CONNECTING], by[MC_SENDING],
          by[MC_HEAD], by[MC_BODY]);
  int shown = 0;
  for (int i = 0; i < M.started && shown < MC_REPORT_MAX; i++) {
    struct mc_conn *c = &M.c[i];
    if (c->state < MC_DONE && ++shown)
      fprintf(stderr, "manyconn: stalled conn %d fd %d (%s, request %d, state %d, body %zu/%zu)\n", i, c->fd,
              M.hosts[c->host], c->reqs_done, c->state, c->body_off, c->f ? c->f->size : 0);
  }
}

static void mc_args(int argc, char **argv) {
  int o;
  M.root = getenv("TESTBED_FILES_DIR");
  while ((o = getopt(argc, argv, "n:c:k:t:s:r:")) != -1) {
    if (o == 'n')
      M.n = atoi(optarg);
    else if (o == 'c')
      M.conc = atoi(optarg);
    else if (o == 's')
      M.settle_ms = atoi(optarg);
    else if (o == 'k')
      M.k = atoi(optarg);
    else if (o == 't')
      M.deadline_s = atoi(optarg);
    else if (o == 'r')
      M.root = optarg;
    else
      mc_usage();
  }
  if (argc - optind < 3 || M.n <= 0 || M.k <= 0 || M.deadline_s <= 0 || M.conc < 0 || M.settle_ms < 0 || !M.root)
    mc_usage();
  for (char *h = strtok(argv[optind], ","); h && M.nhosts < MC_MAX_HOSTS; h = strtok(NULL, ","))
    M.hosts[M.nhosts++] = h;
  M.port = argv[optind + 1];
  for (int i = optind + 2; i < argc && M.nfiles < MC_MAX_PATHS; i++)
    M.files[M.nfiles++].path = argv[i];
}

int main(int argc, char **argv) {
  mc_args(argc, argv);
  mc_raise_nofile();
  for (int i = 0; i < M.nfiles; i++)
    mc_map_file(&M.files[i]);
  mc_resolve();
  M.c = calloc((size_t)M.n, sizeof *M.c);
  M.ep = epoll_create1(EPOLL_CLOEXEC);
  if (!M.c || M.ep < 0)
    return 2;
  if (M.conc >= M.n)
    M.conc = 0;
  M.fds_start = mc_count_fds();
  double t0 = mc_now(), deadline = t0 + M.deadline_s;
  int first = M.conc ? M.conc : M.n;
  for (int i = 0; i < first; i++) {
    M.started++;
    mc_open(&M.c[i], i);
  }
  struct epoll_event evs[256];
  double next_sample = 0;
  while (M.open > 0 && mc_now() < deadline) {
    if (mc_now() >= next_sample) {
      mc_sample_heap();
      next_sample = mc_now() + 0.005;
    }
    int ms = (int)((deadline - mc_now()) * 1e3) + 1;
    int n = epoll_wait(M.ep, evs, 256, ms);
    if (n < 0 && errno != EINTR) {
      perror("manyconn: epoll_wait");
      return 2;
    }
    for (int i = 0; i < n; i++)
      mc_event(evs[i].data.ptr, evs[i].events);
  }
  int timed_out = M.open > 0;
  if (timed_out)
    mc_report_stalled();
  if (M.settle_ms)
    usleep((useconds_t)M.settle_ms * 1000);
  M.fds_end = mc_count_fds();
  M.heap_end = mc_heap_live();
  mc_report(t0, timed_out);
  return timed_out ? 3 : M.failed ? 1 : 0;
}
