/* Two engines in one process, each with its own interfaces, fetch one object each at the same time through connections handed over as the shim hands them; bodies go to files, each engine's metrics must name its own interfaces only. */
/*
 * two_engines ORIGIN_IP HOST PATH  IFACES_A SRC_A OUT_A STATS_A  IFACES_B SRC_B OUT_B STATS_B
 *
 * For each engine: IFACES its interface set (MHTTP_IFACES syntax), SRC the source address
 * the program's own connection is bound to (an address of the first of them), OUT the file
 * the response body goes to (the caller checks its sha256), STATS its MHTTP_STATS file. The
 * program connects to ORIGIN_IP:80 once per engine, hands each connection to its engine
 * (mh_engine_submit with a socketpair end and the connected socket), writes a GET for PATH
 * on both and reads both answers at once. Exit 0 when both answers are a 200 with the whole
 * body and each engine's published metrics list exactly its own interfaces, each with a
 * measured round trip (a connection of that engine ran there); 1 otherwise. Both engines are
 * freed at the end (the Asan tree's LeakSanitizer judges that).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mh_config.h"
#include "mh_conn.h"
#include "mh_engine.h"
#include "mh_log.h"
#include "mh_metrics.h"

#define DEADLINE_S 90

struct side {
  const char *name, *ifaces, *src, *out, *stats;
  struct mh_config cfg;
  struct mh_engine *eng;
  int app; /* the program's end of the socketpair */
  int out_fd;
  char head[16384];
  size_t hlen;
  int head_done, done;
  long long clen, got;
};

static int fail(const struct side *s, const char *what) {
  fprintf(stderr, "two_engines: engine %s: %s\n", s->name, what);
  return -1;
}

static int configure(struct side *s) {
  char err[MH_CONFIG_ERR_MAX];
  mh_config_defaults(&s->cfg);
  if (mh_config_set(&s->cfg, "ifaces", s->ifaces, "test", err, sizeof err) < 0 ||
      mh_config_set(&s->cfg, "stats", s->stats, "test", err, sizeof err) < 0 ||
      mh_config_set(&s->cfg, "metrics_store", "off", "test", err, sizeof err) < 0)
    return fail(s, err);
  struct mh_engine_hooks hooks = {.cfg = &s->cfg};
  /* an engine with one interface splits anyway, so both run their splits side by side */
  hooks.split_one_path = !strchr(s->ifaces, ',');
  return mh_engine_new(&hooks, &s->eng) < 0 ? fail(s, "mh_engine_new") : 0;
}

/* The program's connection, bound to src as the shim's connect-time choice binds it. */
static int connect_from(const struct side *s, const char *origin) {
  struct sockaddr_in src = {.sin_family = AF_INET}, dst = {.sin_family = AF_INET, .sin_port = htons(80)};
  if (inet_pton(AF_INET, s->src, &src.sin_addr) != 1 || inet_pton(AF_INET, origin, &dst.sin_addr) != 1)
    return fail(s, "not an IPv4 address");
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct timeval tv = {10, 0};
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0 ||
      bind(fd, (struct sockaddr *)&src, sizeof src) < 0 || connect(fd, (struct sockaddr *)&dst, sizeof dst) < 0) {
    perror("two_engines: connect");
    if (fd >= 0)
      close(fd);
    return -1;
  }
  return fd;
}

/* The shim's takeover, without the dup2: the engine gets the connected socket and one end of a
 * socketpair, the program keeps the other end. */
static int hand_over(struct side *s, int up) {
  int sp[2];
  struct mh_conn *c = mh_conn_new();
  if (!c || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
    return fail(s, "socketpair");
  c->peer_len = sizeof c->peer;
  c->local_len = sizeof c->local;
  getpeername(up, (struct sockaddr *)&c->peer, &c->peer_len);
  getsockname(up, (struct sockaddr *)&c->local, &c->local_len);
  c->family = c->peer.ss_family;
  c->app_fd = sp[0];
  struct stat st;
  fstat(sp[0], &st);
  c->app_dev = st.st_dev;
  c->app_ino = st.st_ino;
  c->up_fd = up;
  if (mh_engine_submit(s->eng, sp[1], up, c) < 0) {
    close(sp[0]);
    close(sp[1]);
    mh_conn_unref(c);
    return fail(s, "mh_engine_submit");
  }
  s->app = sp[0];
  return 0;
}

static int start(struct side *s, const char *origin, const char *host, const char *path) {
  s->out_fd = open(s->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (s->out_fd < 0)
    return fail(s, "cannot open the output file");
  int up = connect_from(s, origin);
  if (up < 0 || hand_over(s, up) < 0)
    return -1;
  char req[1024];
  int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, host);
  if (n <= 0 || (size_t)n >= sizeof req || write(s->app, req, (size_t)n) != n)
    return fail(s, "cannot write the request");
  fcntl(s->app, F_SETFL, O_NONBLOCK);
  return 0;
}

/* The head is whole: a 200 with a Content-Length, the rest of the buffer is body. */
static int parse_head(struct side *s, char *end) {
  *end = 0;
  const char *cl = strcasestr(s->head, "\r\nContent-Length:");
  if (strncmp(s->head, "HTTP/1.1 200 ", 13) || !cl)
    return fail(s, "not a 200 with a Content-Length");
  s->clen = atoll(cl + 17);
  s->head_done = 1;
  size_t body = s->hlen - (size_t)(end + 4 - s->head);
  s->got = (long long)body;
  return write(s->out_fd, end + 4, body) == (ssize_t)body ? 0 : fail(s, "write");
}

/* Reads what the program's end holds. 0 to go on, 1 when the body is whole, -1 on failure. */
static int pump(struct side *s) {
  char buf[65536];
  for (;;) {
    char *dst = s->head_done ? buf : s->head + s->hlen;
    size_t cap = s->head_done ? sizeof buf : sizeof s->head - 1 - s->hlen;
    ssize_t n = read(s->app, dst, cap);
    if (n < 0)
      return errno == EAGAIN ? 0 : fail(s, strerror(errno));
    if (n == 0)
      return fail(s, "the engine closed before the body was whole");
    if (!s->head_done) {
      s->hlen += (size_t)n;
      s->head[s->hlen] = 0;
      char *end = strstr(s->head, "\r\n\r\n");
      if (!end && s->hlen == sizeof s->head - 1)
        return fail(s, "head too long");
      if (end && parse_head(s, end) < 0)
        return -1;
    } else {
      if (write(s->out_fd, buf, (size_t)n) != n)
        return fail(s, "write");
      s->got += n;
    }
    if (s->head_done && s->got >= s->clen)
      return s->got == s->clen ? 1 : fail(s, "more bytes than Content-Length");
  }
}

/* Both answers at once, bounded by DEADLINE_S. */
static int fetch_both(struct side *v) {
  time_t until = time(NULL) + DEADLINE_S;
  while (!(v[0].done && v[1].done)) {
    if (time(NULL) > until)
      return fail(&v[!v[0].done ? 0 : 1], "no answer within the deadline");
    struct pollfd p[2] = {{.fd = v[0].done ? -1 : v[0].app, .events = POLLIN},
                          {.fd = v[1].done ? -1 : v[1].app, .events = POLLIN}};
    if (poll(p, 2, 1000) < 0 && errno != EINTR)
      return -1;
    for (int i = 0; i < 2; i++) {
      if (v[i].done || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      int rc = pump(&v[i]);
      if (rc < 0)
        return -1;
      v[i].done = rc;
    }
  }
  return 0;
}

/* The engine's published metrics name exactly its interfaces, each with a round trip its own
 * connections measured: two engines sharing collectors would list the union and count one's
 * connections in the other. */
static int check_metrics(struct side *s) {
  struct mh_metrics_pub pub;
  (void)mh_engine_drain(s->eng, 2000); /* publishes the last snapshot */
  if (mh_metrics_read(mh_engine_metrics(s->eng), &pub) < 0)
    return fail(s, "nothing published");
  char want[128];
  snprintf(want, sizeof want, ",%s,", s->ifaces);
  unsigned own = 1;
  for (const char *c = s->ifaces; *c; c++)
    own += *c == ',';
  int bad = pub.n != own;
  for (unsigned i = 0; i < pub.n; i++) {
    char key[POL_IFNAME_MAX + 2];
    snprintf(key, sizeof key, ",%s,", pub.name[i]);
    int mine = strstr(want, key) != NULL;
    printf("engine %s metrics: %s srtt_min_us=%llu%s\n", s->name, pub.name[i],
           (unsigned long long)pub.path[i].srtt_min_us, mine ? "" : " (not its interface)");
    bad |= !mine || !pub.path[i].srtt_min_us;
  }
  return bad ? fail(s, "metrics name other interfaces, or one of its own was never used") : 0;
}

int main(int argc, char **argv) {
  if (argc != 12) {
    fprintf(stderr, "usage: two_engines ORIGIN_IP HOST PATH IFACES_A SRC_A OUT_A STATS_A "
                    "IFACES_B SRC_B OUT_B STATS_B\n");
    return 2;
  }
  const char *log = getenv("MHTTP_LOG");
  if (log && *log)
    mh_log_setup(MH_LOG_DEBUG, 2, write);
  struct side v[2] = {{.name = "A", .ifaces = argv[4], .src = argv[5], .out = argv[6], .stats = argv[7]},
                      {.name = "B", .ifaces = argv[8], .src = argv[9], .out = argv[10], .stats = argv[11]}};
  v[0].app = v[1].app = v[0].out_fd = v[1].out_fd = -1;
  int rc = 0;
  for (int i = 0; i < 2 && rc == 0; i++)
    rc = configure(&v[i]);
  for (int i = 0; i < 2 && rc == 0; i++)
    rc = start(&v[i], argv[1], argv[2], argv[3]);
  if (rc == 0)
    rc = fetch_both(v);
  for (int i = 0; i < 2 && rc == 0; i++)
    rc = check_metrics(&v[i]);
  for (int i = 0; i < 2; i++) {
    printf("engine %s: %lld of %lld body bytes\n", v[i].name, v[i].got, v[i].clen);
    if (v[i].app >= 0)
      close(v[i].app);
    if (v[i].out_fd >= 0)
      close(v[i].out_fd);
    mh_engine_free(v[i].eng);
  }
  return rc == 0 ? 0 : 1;
}
