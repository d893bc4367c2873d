/* libmhttp transfers for the daemon's active downloads, on the daemon's loop (engine.h). */
#include "engine.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "naming.h"
#include "options.h"

/* one running transfer and the download it serves */
struct xfer {
  struct dmn_engine *e;
  struct dmn_dl *d;
  mhttp_xfer *x;
};

static void on_timer(uv_timer_t *h);
static void eng_limits(void *ctx);

/* The session's work runs from the timer only: its descriptor's readiness and every new
 * transfer set it to 0, so mhttp_perform never runs inside a callback of its own. */
static void run(struct dmn_engine *e) {
  e->kicked = 0;
  mhttp_perform(e->s);
  for (size_t i = 0; i < e->ndead; i++) {
    struct xfer *t = e->dead[i];
    mhttp_xfer_free(t->x);
    free(t);
  }
  e->ndead = 0;
  int ms = e->kicked ? 0 : mhttp_get_timeout(e->s);
  if (ms >= 0)
    uv_timer_start(&e->timer, on_timer, (uint64_t)ms, 0);
}

static void on_timer(uv_timer_t *h) { run(h->data); }
static void kick(struct dmn_engine *e) {
  e->kicked = 1;
  uv_timer_start(&e->timer, on_timer, 0, 0);
}
static void on_poll(uv_poll_t *h, int status, int events) {
  (void)status, (void)events;
  run(h->data);
}

int dmn_engine_init(struct dmn_engine *e, uv_loop_t *loop, const json_t *global, char *err, size_t errlen) {
  memset(e, 0, sizeof *e);
  e->loop = loop;
  e->global = global;
  mhttp_code rc = mhttp_session_new(0, &e->s);
  int fd = rc == MHTTP_OK ? mhttp_get_fd(e->s) : -1;
  if (fd < 0) {
    snprintf(err, errlen, "cannot make the download session: %s", mhttp_strerror(rc ? rc : MHTTP_E_SYSTEM));
    mhttp_session_free(e->s);
    return -1;
  }
  uv_timer_init(loop, &e->timer);
  e->timer.data = e;
  uv_poll_init(loop, &e->poll, fd);
  e->poll.data = e;
  uv_poll_start(&e->poll, UV_READABLE, on_poll);
  kick(e);
  return 0;
}

void dmn_engine_close(struct dmn_engine *e) {
  uv_poll_stop(&e->poll);
  uv_close((uv_handle_t *)&e->poll, NULL);
  uv_close((uv_handle_t *)&e->timer, NULL);
  e->q->max_active = 0;     /* a transfer reported cancelled starts no other */
  mhttp_session_free(e->s); /* frees every transfer, ended or not */
  e->s = NULL;
  for (size_t i = 0; i < e->ndead; i++)
    free(e->dead[i]);
  free(e->dead);
  e->dead = NULL;
  e->ndead = e->cap = 0;
  for (size_t i = 0; i < e->q->active.n; i++) {
    free(e->q->active.v[i]->xfer); /* its transfer went with the session */
    e->q->active.v[i]->xfer = NULL;
  }
}

static void bury(struct dmn_engine *e, struct xfer *t) {
  if (e->ndead == e->cap) {
    size_t cap = e->cap ? 2 * e->cap : 8;
    void **v = realloc(e->dead, cap * sizeof *v);
    if (!v)
      return; /* left to mhttp_session_free */
    e->dead = v;
    e->cap = cap;
  }
  e->dead[e->ndead++] = t;
}

static void on_event(const mhttp_event *ev, void *arg) {
  struct xfer *t = arg;
  struct dmn_dl *d = t->d;
  if (ev->total != UINT64_MAX)
    d->total = ev->total;
  if (ev->type != MHTTP_EV_PATH_UP && ev->type != MHTTP_EV_PATH_DOWN)
    d->done = ev->done;
  if (ev->type != MHTTP_EV_COMPLETE && ev->type != MHTTP_EV_ERROR)
    return;
  d->xfer = NULL;
  bury(t->e, t);
  char msg[300];
  snprintf(msg, sizeof msg, "%s%s%s", mhttp_strerror(ev->code), ev->message && *ev->message ? ": " : "",
           ev->message ? ev->message : "");
  dmn_q_ended(t->e->q, d, ev->type == MHTTP_EV_COMPLETE, dmn_aria2_error(ev->code, ev->http_status), msg);
  eng_limits(t->e); /* its share goes to the downloads still active */
}

/* an option of d, else the global one */
static const char *opt(const struct dmn_engine *e, const struct dmn_dl *d, const char *name) {
  const char *v = json_string_value(json_object_get(d->opts, name));
  return v ? v : json_string_value(json_object_get(e->global, name));
}

static int mkdirs(const char *dir) {
  char p[PATH_MAX];
  if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
    return -1;
  for (char *s = p + 1; *s; s++) {
    if (*s != '/')
      continue;
    *s = '\0';
    if (mkdir(p, 0755) < 0 && errno != EEXIST)
      return -1;
    *s = '/';
  }
  return mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* aria2's failure of a file path that names a directory: errorCode code, the path reported */
static int aborted(struct dmn_dl *d, const char *path, int code, char *err, size_t errlen) {
  d->path = strdup(path); /* files[].path as aria2 shows it; never opened */
  snprintf(err, errlen, "Download aborted.");
  return code;
}

/* d's file: kept once chosen (a paused download goes on in it); dir/out or the URI's name,
 * renamed name.N.ext when taken and neither continued nor ours (a resume file beside it).
 * Returns 0, -1 (err filled) or aria2's errorCode for the download.
 * Safety: the file is always in dir (the URI's name holds no '/', out no ".." component) and
 * never dir/. nor dir/.. (a "." or ".." name, aria2's too, is renamed "..1", "..1." as aria2
 * renames it, else the download fails with aria2's errorCode, as aria2's does). */
static int choose_path(struct dmn_engine *e, struct dmn_dl *d, int cont, char *err, size_t errlen) {
  if (d->path) /* chosen before: kept, but never a directory */
    return dmn_names_dir(d->path) ? (snprintf(err, errlen, "Download aborted."), 16) : 0;
  const char *dir = opt(e, d, "dir"), *out = json_string_value(json_object_get(d->opts, "out"));
  char name[256], path[PATH_MAX], res[PATH_MAX + 8];
  if (!out)
    dmn_name_from_uri(d->uri, name, sizeof name);
  if (snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", out ? out : name) >= (int)sizeof path)
    return snprintf(err, errlen, "the file name is too long"), -1;
  memcpy(res, path, sizeof path);
  *strrchr(res, '/') = '\0';
  int existed = exists(res), isdir = dmn_names_dir(path);
  if (mkdirs(res) < 0)
    return snprintf(err, errlen, "cannot create directory %s: %s", res, strerror(errno)), -1;
  snprintf(res, sizeof res, "%s.mhttp", path);
  int overwrite = !strcmp(opt(e, d, "allow-overwrite") ? opt(e, d, "allow-overwrite") : "", "true");
  int code = isdir ? dmn_dir_name_error(existed, cont, overwrite) : 0;
  if (code)
    return aborted(d, path, code, err, errlen);
  for (unsigned n = 1; isdir || (!cont && !overwrite && exists(path) && !exists(res)); n++) {
    char alt[PATH_MAX];
    if (n > 9999 || dmn_renamed(path, n, alt, sizeof alt) < 0)
      return snprintf(err, errlen, "File %s exists, but a control file does not exist.", path), -1;
    if (!exists(alt)) {
      memcpy(path, alt, sizeof path);
      break;
    }
  }
  if (dmn_names_dir(path)) /* not renamed: never a file */
    return aborted(d, path, 16, err, errlen);
  d->path = strdup(path);
  return d->path ? 0 : -1;
}

/* the transfer options of d: headers (header, referer), user-agent, checksum, mirrors */
static mhttp_code set_options(struct dmn_engine *e, struct dmn_dl *d, mhttp_xfer *x, int cont) {
  mhttp_code rc = mhttp_xfer_setopt(x, "output", d->path);
  const char *ua = opt(e, d, "user-agent"), *ref = opt(e, d, "referer"), *sum = opt(e, d, "checksum");
  if (!rc && cont)
    rc = mhttp_xfer_setopt(x, "continue", "1");
  if (!rc && ua)
    rc = mhttp_xfer_setopt(x, "user-agent", ua);
  if (!rc && sum)
    rc = mhttp_xfer_setopt(x, "checksum", sum);
  if (!rc && ref) {
    char h[2048];
    snprintf(h, sizeof h, "Referer: %s", ref);
    rc = mhttp_xfer_setopt(x, "header", h);
  }
  json_t *hs = json_object_get(d->opts, "header");
  for (size_t i = 0; !rc && i < (json_is_array(hs) ? json_array_size(hs) : 1); i++) {
    const char *h = json_is_array(hs) ? json_string_value(json_array_get(hs, i)) : json_string_value(hs);
    if (h)
      rc = mhttp_xfer_setopt(x, "header", h);
  }
  for (size_t i = 1; !rc && i < json_array_size(d->uris); i++)
    rc = mhttp_xfer_add_mirror(x, json_string_value(json_array_get(d->uris, i)));
  return rc;
}

/* aria2's size (options.c checked it: digits, then K or M, 1024-based) in bytes */
static uint64_t size_of(const char *v) {
  char *end;
  uint64_t n = v ? strtoull(v, &end, 10) : 0;
  return !n ? 0 : *end == 'K' || *end == 'k' ? n << 10 : *end == 'M' || *end == 'm' ? n << 20 : n;
}

/* Each active download's rate limit, at once (a transfer not started takes it as an option). */
static void eng_limits(void *ctx) {
  struct dmn_engine *e = ctx;
  size_t n = e->q->active.n;
  uint64_t *lim = calloc(2 * n + 1, sizeof *lim), *out = lim + n;
  if (!lim)
    return;
  for (size_t i = 0; i < n; i++)
    lim[i] = size_of(opt(e, e->q->active.v[i], "max-download-limit"));
  dmn_q_share(size_of(json_string_value(json_object_get(e->global, "max-overall-download-limit"))), n, lim, out);
  for (size_t i = 0; i < n; i++) {
    struct xfer *t = e->q->active.v[i]->xfer;
    char v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)out[i]);
    if (t)
      (void)mhttp_xfer_setopt(t->x, "limit-rate", v); /* a transfer that ended: no-op */
  }
  free(lim);
}

static int eng_start(void *ctx, struct dmn_dl *d, char *err, size_t errlen) {
  struct dmn_engine *e = ctx;
  if (json_array_size(d->uris) == 0) /* changeUri removed every one */
    return snprintf(err, errlen, "No URI available."), -1;
  int resumed = d->path != NULL; /* paused and unpaused: go on in its file */
  int cont = resumed || dmn_opt_true(d->opts, "continue") ||
             (!json_object_get(d->opts, "continue") && dmn_opt_true(e->global, "continue"));
  int code = choose_path(e, d, cont, err, errlen);
  if (code)
    return code;
  char res[PATH_MAX + 8];
  snprintf(res, sizeof res, "%s.mhttp", d->path);
  cont = cont || exists(res);
  struct xfer *t = calloc(1, sizeof *t);
  mhttp_code rc = t ? mhttp_xfer_new(e->s, d->uri, &t->x) : MHTTP_E_NOMEM;
  if (!rc)
    rc = set_options(e, d, t->x, cont);
  if (!rc)
    rc = mhttp_xfer_set_event_cb(t->x, on_event, t);
  if (t) {
    t->e = e;
    t->d = d;
    d->xfer = t;
    eng_limits(e); /* its share, before it starts; the others' shares shrink */
    d->xfer = NULL;
  }
  if (!rc)
    rc = mhttp_xfer_start(t->x);
  if (rc) {
    snprintf(err, errlen, "%s", mhttp_strerror(rc));
    if (t)
      mhttp_xfer_free(t->x);
    free(t);
    return -1;
  }
  d->xfer = t;
  kick(e);
  return 0;
}

static void eng_stop(void *ctx, struct dmn_dl *d) {
  (void)ctx;
  struct xfer *t = d->xfer;
  if (t)
    mhttp_xfer_cancel(t->x); /* its error event follows from the loop: dmn_q_ended then */
}

static void eng_refresh(void *ctx, struct dmn_dl *d) {
  (void)ctx;
  struct xfer *t = d->xfer;
  mhttp_xfer_stats st = {.size = sizeof st};
  if (!t || mhttp_xfer_stats_get(t->x, &st) != MHTTP_OK)
    return;
  if (st.total != UINT64_MAX)
    d->total = st.total;
  d->done = st.done;
  d->rate = st.rate;
  mhttp_path_stats ps[16];
  unsigned n = 0, up = 0;
  ps[0].size = sizeof ps[0];
  if (mhttp_xfer_path_stats(t->x, ps, 16, &n) == MHTTP_OK)
    for (unsigned i = 0; i < n && i < 16; i++)
      up += ps[i].up != 0;
  d->connections = up;
}

static unsigned eng_paths(void *ctx, const struct dmn_dl *d, struct dmn_path *out, unsigned max) {
  (void)ctx;
  const struct xfer *t = d->xfer;
  mhttp_path_stats ps[16];
  unsigned n = 0;
  ps[0].size = sizeof ps[0];
  if (!t || mhttp_xfer_path_stats(t->x, ps, 16, &n) != MHTTP_OK)
    return 0;
  if (n > 16)
    n = 16;
  if (n > max)
    n = max;
  for (unsigned i = 0; i < n; i++) {
    snprintf(out[i].iface, sizeof out[i].iface, "%s", ps[i].iface);
    snprintf(out[i].addr, sizeof out[i].addr, "%s", ps[i].replica);
    out[i].rate = ps[i].rate;
    out[i].bytes = ps[i].bytes;
    out[i].srtt_us = ps[i].srtt_us;
    out[i].up = ps[i].up;
  }
  return n;
}

struct dmn_engine_ops dmn_engine_ops(struct dmn_engine *e) {
  return (struct dmn_engine_ops){eng_start, eng_stop, eng_refresh, eng_paths, e, eng_limits};
}
