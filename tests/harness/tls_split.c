/* One HTTPS object fetched by the split over TLS upstreams (mh_upstream_tls.c) into a file, as an API transfer will: the first connection made here, the split opens the rest over the same transport. */
/*
 * tls_split ADDR PORT HOST PATHS IFACES SRC CAFILE OUT STATS
 *
 * Connects over TLS to ADDR:PORT for https://HOST:PORT (SNI and certificate: HOST) from SRC (an
 * address of the first of IFACES, "-" for none), trusting CAFILE ("-": libcurl's default;
 * "insecure": no check), then splits "GET PATH" over IFACES (MHTTP_IFACES syntax) for each of
 * PATHS (comma separated, one after another on the same connections, as a keep-alive client
 * would: the next object goes out on the first connection and the split takes its other legs
 * from the engine's pool) into OUT (the first) and OUT.2, OUT.3..., each created only once a
 * connection is up (so a failed handshake writes nothing). The splits' MHTTP_STATS lines go to
 * STATS. Prints per object "tls_split: BYTES bytes in S s (done), N new TLS connections", and
 * between objects how many extra paths have a pooled connection for the next one (under the
 * TLS key, and under the plain one: never); it
 * exits 0 when every byte of every object was written; a failed connect prints libcurl's
 * words as curl does, "tls_split: (CODE) TEXT", and exits CODE (60: certificate, 35: TLS
 * handshake); other failures exit 1, a run past DEADLINE_S exits 2. This thread runs the
 * engine's loop itself (the engine never starts its thread), as the API's embedded mode will.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
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
#include "mh_log.h"
#include "mh_dns.h"
#include "mh_metrics.h"
#include "mh_path.h"
#include "mh_sink.h"
#include "mh_split.h"
#include "mh_upstream.h"
#include "mh_upstream_tls.h"

#define DEADLINE_S 120

#define MAX_OBJECTS 8

/* The transport as the split sees it, counting the connections it makes (the split reaches
 * the transport only through tls.connect). */
struct counted_tls {
  struct mh_tls tls; /* first: the transport's argument casts back */
  unsigned connects;
};

static struct mh_upstream *counted_connect(uv_loop_t *loop, struct mh_upstream_env *env, const struct sockaddr *src,
                                           const char *ifname, const struct sockaddr *dst, const struct mh_tls *tls,
                                           mh_upstream_event_cb on_event, void *owner, int *err) {
  ((struct counted_tls *)tls)->connects++;
  return mh_upstream_tls_connect(loop, env, src, ifname, dst, tls, on_event, owner, err);
}

struct run {
  uv_loop_t *loop; /* the engine's own (its resolvers live there) */
  struct counted_tls ct;
  struct mh_upstream *up;
  struct mh_split *sp;
  struct mh_sink_file sink; /* the object's file ... */
  const struct mh_sink_ops *file_ops;
  struct mh_sink_ops ops;     /* ... its ops but end(), which keeps the result too */
  struct mh_split_result res; /* how the object's split ended (valid until it is freed) */
  const char *host, *out;
  char *paths[MAX_OBJECTS];
  int nobj, obj;
  unsigned c0;        /* ct.connects when the object's split started */
  const char *ifaces; /* IFACES, for the pool count */
  struct sockaddr_storage dst;
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

/* The split's end: its result is kept for the owner (next_object), then the file sink's own end. */
static void sink_end(struct mh_sink *k, const struct mh_split_result *res) {
  struct run *r = (struct run *)((char *)k - offsetof(struct run, sink.sink));
  r->res = *res;
  r->file_ops->end(k, res);
}

/* Starts object r->obj's split on r->up into its own file. */
static void start_object(struct run *r) {
  char req[1024], out[4096];
  int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: mhttp-tls-split\r\nAccept: */*\r\n\r\n",
                   r->paths[r->obj], r->host);
  if (r->obj)
    snprintf(out, sizeof out, "%s.%d", r->out, r->obj + 1);
  else
    snprintf(out, sizeof out, "%s", r->out);
  r->fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (r->fd < 0 || n < 0 || (size_t)n >= sizeof req) {
    perror("tls_split: open");
    r->failed = 1;
    return;
  }
  mh_sink_file_init(&r->sink, r->fd, 0);
  r->file_ops = r->sink.sink.ops;
  r->ops = *r->file_ops;
  r->ops.end = sink_end;
  r->sink.sink.ops = &r->ops;
  r->c0 = r->ct.connects;
  struct mh_split_owner own = {
      .env = mh_engine_split_env(mh_engine_of(r->loop)), .kick = kick, .arg = r, .tls = &r->ct.tls};
  int rc = mh_split_start(&own, r->loop, r->up, req, (size_t)n, &r->sink.sink, &r->sp);
  if (rc < 0) {
    fprintf(stderr, "tls_split: not split: %s\n", strerror(-rc));
    r->failed = 1;
    return;
  }
  kick(r);
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
  start_object(r);
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
  const char *log = getenv("MHTTP_LOG"); /* as the shim reads it */
  if (log && *log && mh_config_set(cfg, "log", log, "MHTTP_LOG", err, sizeof err) == 0)
    mh_log_setup(cfg->log_level, 2, NULL);
  struct mh_engine_hooks hooks = {.cfg = cfg};
  return mh_engine_new(&hooks, eng);
}

/* Runs the loop until the split ended, the connect failed or the deadline passed. */
static int run_until_done(struct run *r) {
  uint64_t t0 = mh_now_us();
  while (!r->failed && !r->pump_err && (!r->sp || !r->sink.sink.ended)) {
    if (mh_now_us() - t0 > DEADLINE_S * 1000000ULL) {
      fprintf(stderr, "tls_split: no end after %d s\n", DEADLINE_S);
      return 2;
    }
    uv_run(r->loop, UV_RUN_ONCE); /* the split's tick wakes it every 100 ms */
  }
  if (r->failed)
    return r->failed;
  double s = (mh_now_us() - t0) / 1e6;
  int ok = !r->pump_err && r->res.end == MH_SPLIT_END_DONE && r->sink.err == 0;
  printf("tls_split: %llu bytes in %.3f s (%s), %u new TLS connections\n", (unsigned long long)r->sink.bytes, s,
         ok ? "done" : "failed", r->ct.connects - r->c0);
  return ok ? 0 : 1;
}

/* How many of IFACES but the first have a connected connection to dst for HOST in the engine's
 * pool under transport key xport: the extra paths' parked legs (on the first, the program's
 * path, the split parks its standby connection, mh__standby_open). */
static int pooled(struct run *r, const char *xport) {
  char name[16];
  struct mh_pool *pool = mh_engine_of(r->loop)->paths.pool;
  int n = 0, first = 1;
  for (const char *p = r->ifaces; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ','), first = 0) {
    snprintf(name, sizeof name, "%.*s", (int)strcspn(p, ","), p);
    n += !first && mh_pool_has(pool, name, (struct sockaddr *)&r->dst, xport, r->host);
  }
  return n;
}

/* The split of the last object ends; the next one goes out on the first connection as the
 * split left it: its own, or, when the split asked for one, a replacement the owner takes from
 * the pool or opens, which may still be connecting (a TLS upstream cannot tell its addresses
 * before its handshake ends, and the split needs them): the next split starts from that
 * connection's outcome, as the first one did. 0, or 1 when no connection is left to use. */
static int next_object(struct run *r) {
  struct mh_split_result res = r->res;
  mh_split_free(r->sp, 0);
  r->sp = NULL;
  close(r->fd);
  r->fd = -1;
  char key[MH_POOL_XPORT_MAX];
  mh_pool_xport_key(&r->ct.tls, key, sizeof key);
  printf("tls_split: pooled for the next object: %d TLS, %d plain\n", pooled(r, key), pooled(r, ""));
  r->obj++;
  if (res.replace) {
    int err = 0;
    struct mh_engine *eng = mh_engine_of(r->loop);
    struct mh_upstream *nu = mh_pool_dial(eng->paths.pool, r->loop, &eng->upenv, &res.route, &r->ct.tls, &err);
    if (!nu) {
      fprintf(stderr, "tls_split: no connection for the next object: %s\n", strerror(-err));
      return 1;
    }
    r->up->ops->close(r->up, 0, NULL);
    r->up = nu;
    r->up->on_event = up_event;
    r->up->owner = r;
    r->connected = 0;
    r->up->ops->watch(r->up, UV_WRITABLE);
    return 0;
  }
  if (res.up_dead) {
    fprintf(stderr, "tls_split: the first connection cannot carry another request\n");
    return 1;
  }
  start_object(r);
  return r->failed;
}

int main(int argc, char **argv) {
  if (argc != 10) {
    fprintf(stderr, "usage: tls_split ADDR PORT HOST PATHS IFACES SRC CAFILE OUT STATS\n");
    return 1;
  }
  struct run r = {.host = argv[3], .out = argv[8], .fd = -1, .ifaces = argv[5]};
  for (char *save = NULL, *p = strtok_r(argv[4], ",", &save); p && r.nobj < MAX_OBJECTS; p = strtok_r(NULL, ",", &save))
    r.paths[r.nobj++] = p;
  unsigned port = (unsigned)atoi(argv[2]);
  struct sockaddr_storage src, *dst = &r.dst;
  int has_src = strcmp(argv[6], "-") != 0;
  if (!r.nobj || parse_addr(argv[1], port, dst) < 0 || (has_src && parse_addr(argv[6], 0, &src) < 0)) {
    fprintf(stderr, "tls_split: not an address, or no path\n");
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
  if (mh_metrics_start(eng->paths.metrics, r.loop, &cfg) < 0) /* as the engine's own loop does */
    fprintf(stderr, "tls_split: no metrics\n");
  int insecure = !strcmp(argv[7], "insecure");
  mh_tls_init(&r.ct.tls, r.host, port, insecure || !strcmp(argv[7], "-") ? NULL : argv[7], insecure);
  r.ct.tls.connect = counted_connect;
  char ifname[16] = "";
  snprintf(ifname, sizeof ifname, "%.*s", (int)strcspn(argv[5], ","), argv[5]);
  int err = 0;
  r.up = mh_upstream_connect(r.loop, &eng->upenv, has_src ? (struct sockaddr *)&src : NULL, has_src ? ifname : NULL,
                             (struct sockaddr *)dst, &r.ct.tls, up_event, &r, &err);
  if (!r.up) {
    fprintf(stderr, "tls_split: connect: %s\n", strerror(-err));
    return 1;
  }
  r.up->ops->watch(r.up, UV_WRITABLE);
  int rc = run_until_done(&r);
  while (rc == 0 && r.obj + 1 < r.nobj && (rc = next_object(&r)) == 0)
    rc = run_until_done(&r);
  if (r.sp)
    mh_split_free(r.sp, rc != 0);
  r.up->ops->close(r.up, rc != 0, NULL);
  mh_pool_close_all(eng->paths.pool);
  mh_metrics_stop(eng->paths.metrics);
  mh_dns_close(eng->paths.dns);
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
