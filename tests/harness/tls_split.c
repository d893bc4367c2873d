/* One HTTPS object fetched by the split over TLS upstreams (mh_upstream_tls.c) into a file, as an API transfer will: the first connection made here, the split opens the rest over the same transport. */
/*
 * tls_split ADDR PORT HOST PATH IFACES SRC CAFILE OUT STATS
 *
 * Connects over TLS to ADDR:PORT for https://HOST:PORT (SNI and certificate: HOST) from SRC (an
 * address of the first of IFACES, "-" for none), trusting CAFILE ("-": libcurl's default;
 * "insecure": no check), then splits "GET PATH" over IFACES (MHTTP_IFACES syntax) into OUT,
 * which is created only once the first connection is up (so a failed handshake writes
 * nothing). The split's MHTTP_STATS line goes to STATS. Prints "tls_split: BYTES bytes in S s"
 * and exits 0 when every byte of the object was written; a failed connect prints libcurl's
 * words as curl does, "tls_split: (CODE) TEXT", and exits CODE (60: certificate, 35: TLS
 * handshake); other failures exit 1, a run past DEADLINE_S exits 2. This thread runs the
 * engine's loop itself (the engine never starts its thread), as the API's embedded mode will.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mh_clock.h"
#include "mh_config.h"
#include "mh_engine.h"
#include "mh_engine_int.h"
#include "mh_dns.h"
#include "mh_metrics.h"
#include "mh_path.h"
#include "mh_sink.h"
#include "mh_split.h"
#include "mh_upstream.h"
#include "mh_upstream_tls.h"

#define DEADLINE_S 120

struct run {
  uv_loop_t *loop;           /* the engine's own (its resolvers live there) */
  struct mh_tls tls;
  struct mh_upstream *up;
  struct mh_split *sp;
  struct mh_sink_file sink;
  const char *host, *path, *out;
  int connected, failed, pump_err, fd;
};

static int parse_addr(const char *s, unsigned port, struct sockaddr_storage *a) {
  memset(a, 0, sizeof *a);
  struct sockaddr_in *a4 = (struct sockaddr_in *)a;
  struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)a;
  if (inet_pton(AF_INET, s, &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)port);
    return 0;
  }
  if (inet_pton(AF_INET6, s, &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)port);
    return 0;
  }
  return -1;
}

static void kick(void *arg) {
  struct run *r = arg;
  if (r->sp && !r->pump_err)
    r->pump_err = mh_split_pump(r->sp);
}

/* The connect's outcome: a failure is reported in curl's words; success starts the split. */
static void connected(struct run *r) {
  r->connected = 1;
  int err = mh_upstream_error(r->up);
  if (err < 0) {
    int code = 0;
    const char *msg = "";
    mh_upstream_query(r->up, MH_UPQ_CURL_CODE, &code, NULL);
    mh_upstream_query(r->up, MH_UPQ_ERRMSG, NULL, &msg);
    fprintf(stderr, "tls_split: (%d) %s\n", code, msg);
    r->failed = code ? code : 1;
    return;
  }
  char req[1024];
  int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: mhttp-tls-split\r\nAccept: */*\r\n\r\n",
                   r->path, r->host);
  r->fd = open(r->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (r->fd < 0 || n < 0 || (size_t)n >= sizeof req) {
    perror("tls_split: open");
    r->failed = 1;
    return;
  }
  mh_sink_file_init(&r->sink, r->fd, 0);
  struct mh_split_owner own = {.kick = kick, .arg = r, .tls = &r->tls};
  int rc = mh_split_start(&own, r->loop, r->up, req, (size_t)n, &r->sink.sink, &r->sp);
  if (rc < 0) {
    fprintf(stderr, "tls_split: not split: %s\n", strerror(-rc));
    r->failed = 1;
    return;
  }
  kick(r);
}

/* The owner keeps its upstream's callbacks: the outcome first, then the split's events. */
static void up_event(struct mh_upstream *up, int status, int events) {
  struct run *r = up->owner;
  if (!r->connected)
    connected(r);
  else if (r->sp)
    mh_split_up_event(r->sp, status, events);
}

static int configure(struct mh_config *cfg, const char *ifaces, const char *stats, struct mh_engine **eng) {
  char err[MH_CONFIG_ERR_MAX];
  mh_config_defaults(cfg);
  if (mh_config_set(cfg, "ifaces", ifaces, "test", err, sizeof err) < 0 ||
      mh_config_set(cfg, "stats", stats, "test", err, sizeof err) < 0 ||
      mh_config_set(cfg, "metrics_store", "off", "test", err, sizeof err) < 0) {
    fprintf(stderr, "tls_split: %s\n", err);
    return -1;
  }
  struct mh_engine_hooks hooks = {.cfg = cfg};
  return mh_engine_new(&hooks, eng);
}

/* Runs the loop until the split ended, the connect failed or the deadline passed. */
static int run_until_done(struct run *r) {
  uint64_t t0 = mh_now_us();
  struct mh_split_result res;
  while (!r->failed && !r->pump_err && (!r->sp || mh_split_result(r->sp, &res) == MH_SPLIT_RUNNING)) {
    if (mh_now_us() - t0 > DEADLINE_S * 1000000ULL) {
      fprintf(stderr, "tls_split: no end after %d s\n", DEADLINE_S);
      return 2;
    }
    uv_run(r->loop, UV_RUN_ONCE);  /* the split's tick wakes it every 100 ms */
  }
  if (r->failed)
    return r->failed;
  double s = (mh_now_us() - t0) / 1e6;
  int ok = !r->pump_err && res.end == MH_SPLIT_END_DONE && r->sink.err == 0;
  printf("tls_split: %llu bytes in %.3f s (%s)\n", (unsigned long long)r->sink.bytes, s, ok ? "done" : "failed");
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc != 10) {
    fprintf(stderr, "usage: tls_split ADDR PORT HOST PATH IFACES SRC CAFILE OUT STATS\n");
    return 1;
  }
  struct run r = {.host = argv[3], .path = argv[4], .out = argv[8], .fd = -1};
  unsigned port = (unsigned)atoi(argv[2]);
  struct sockaddr_storage dst, src;
  int has_src = strcmp(argv[6], "-") != 0;
  if (parse_addr(argv[1], port, &dst) < 0 || (has_src && parse_addr(argv[6], 0, &src) < 0)) {
    fprintf(stderr, "tls_split: not an address\n");
    return 1;
  }
  static struct mh_config cfg;
  struct mh_engine *eng;
  if (configure(&cfg, argv[5], argv[9], &eng) < 0)
    return 1;
  /* the engine's loop, run by this thread (the engine never starts its own): its resolvers,
   * splits and transports find the engine there */
  r.loop = &eng->loop;
  if (uv_loop_init(r.loop) < 0)
    return 1;
  r.loop->data = eng;
  if (mh_metrics_start(eng->metrics, r.loop, &cfg) < 0)  /* as the engine's own loop does */
    fprintf(stderr, "tls_split: no metrics\n");
  int insecure = !strcmp(argv[7], "insecure");
  mh_tls_init(&r.tls, r.host, port, insecure || !strcmp(argv[7], "-") ? NULL : argv[7], insecure);
  char ifname[16] = "";
  snprintf(ifname, sizeof ifname, "%.*s", (int)strcspn(argv[5], ","), argv[5]);
  int err = 0;
  r.up = mh_upstream_tls_connect(r.loop, has_src ? (struct sockaddr *)&src : NULL, has_src ? ifname : NULL,
                                 (struct sockaddr *)&dst, &r.tls, up_event, &r, &err);
  if (!r.up) {
    fprintf(stderr, "tls_split: connect: %s\n", strerror(-err));
    return 1;
  }
  r.up->ops->watch(r.up, UV_WRITABLE);
  int rc = run_until_done(&r);
  struct mh_split_result res = {0};
  if (r.sp) {
    mh_split_result(r.sp, &res);
    mh_split_free(r.sp, rc != 0);
  }
  if (res.new_up)
    res.new_up->ops->close(res.new_up, 1, NULL);
  r.up->ops->close(r.up, rc != 0, NULL);
  mh_pool_close_all(eng->pool);
  mh_metrics_stop(eng->metrics);
  mh_dns_close(eng->dns);
  uv_run(r.loop, UV_RUN_DEFAULT);
  if (uv_loop_close(r.loop) < 0) {
    fprintf(stderr, "tls_split: a handle outlived the loop\n");
    rc = rc ? rc : 1;
  }
  if (r.fd >= 0)
    close(r.fd);
  mh_engine_free(eng);
  return rc;
}
