/* The daemon's process: options, the loop with its server, engine and queue, the session file, signals and shutdown (daemon.h). */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "engine.h"
#include "httpd.h"
#include "log.h"
#include "options.h"
#include "rpc.h"
#include "service.h"
#include "session.h"
#include "xmlrpc.h"

#ifndef MHTTP_DAEMON_VERSION
#error "MHTTP_DAEMON_VERSION comes from daemon/CMakeLists.txt"
#endif

struct daemon {
  uv_loop_t loop;
  json_t *global;
  struct dmn_q q;
  struct dmn_engine eng;
  struct dmn_httpd httpd;
  struct dmn_rpc rpc;
  uv_signal_t sigint, sigterm;
  uv_timer_t save_timer, stop_timer;
  uv_timer_t note_timer; /* sends the notifications raised during a loop turn */
  json_t *notes;         /* their texts, in order */
  char *saved;           /* the session text last written */
  int stopping;
  int closed; /* the last session was written: the engine is closing */
  int loop_made;
};

static uint64_t random64(void) {
  uint64_t v = 0;
  while (getrandom(&v, sizeof v, 0) != sizeof v)
    ;
  return v;
}

static uint64_t new_gid(void *arg) {
  struct daemon *d = arg;
  uint64_t g;
  do
    g = random64();
  while (g == 0 || dmn_q_find(&d->q, g));
  return g;
}

/* writes text to path's neighbour, flushed to the disk, and renames it over path, then flushes
 * the directory: a crash leaves the old file or the new one, never half of one */
static int write_atomic(const char *path, const char *text) {
  char tmp[4096], dir[4096];
  if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
    return errno = ENAMETOOLONG, -1;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  size_t n = strlen(text);
  int ok = fd >= 0 && write(fd, text, n) == (ssize_t)n && fdatasync(fd) == 0;
  if (fd >= 0 && close(fd) < 0)
    ok = 0;
  if (!ok || rename(tmp, path) < 0) {
    int e = errno;
    unlink(tmp);
    return errno = e, -1;
  }
  const char *slash = strrchr(path, '/');
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd); /* the rename itself; a file system that cannot is no reason to fail */
    close(dfd);
  }
  return 0;
}

/* the session file as the queue is now (aria2.saveSession, the timer, exit) */
static int save_session(void *arg) {
  struct daemon *d = arg;
  const char *path = json_string_value(json_object_get(d->global, "save-session"));
  char *text = dmn_session_format(&d->q);
  if (!path || !text) {
    free(text);
    return -1;
  }
  int rc = write_atomic(path, text);
  if (rc < 0)
    dmn_log(LOG_ERR, "cannot save the session to %s: %s", path, strerror(errno));
  free(d->saved);
  d->saved = text; /* also after a failure: the same text is not tried at every call again */
  return rc;
}

/* The session file follows every change of the queue at once (a download added, started,
 * paused, removed, ended, an option changed), not only at the timer: a kill -9 right after
 * addUri answered loses no download, and one that completed is not fetched again. A change of
 * progress alone changes no text, so polling writes nothing, nor does the timer then (as
 * aria2 writes only a changed session). */
static void save_if_changed(struct daemon *d) {
  if (d->closed || !json_object_get(d->global, "save-session"))
    return;
  char *text = dmn_session_format(&d->q);
  int same = text && d->saved && !strcmp(text, d->saved);
  free(text);
  if (!same)
    save_session(d);
}

static void on_note_timer(uv_timer_t *t) {
  struct daemon *d = t->data;
  for (size_t i = 0; i < json_array_size(d->notes); i++)
    dmn_httpd_broadcast(&d->httpd, json_string_value(json_array_get(d->notes, i)));
  json_array_clear(d->notes);
}

/* a download's end in the log (the journal, under systemd): its GID, URI and file or error;
 * the lists' sizes in the service's status */
static void log_event(struct daemon *d, const char *event, uint64_t gid, const char *g) {
  char status[96];
  snprintf(status, sizeof status, "active: %zu, waiting: %zu, stopped: %zu", d->q.active.n, d->q.waiting.n,
           d->q.stopped.n);
  dmn_svc_status(status);
  const struct dmn_dl *dl = dmn_q_find(&d->q, gid);
  if (!dl)
    return;
  if (!strcmp(event, "aria2.onDownloadComplete"))
    dmn_log(LOG_INFO, "%s complete: %s -> %s", g, dl->uri, dl->path ? dl->path : "?");
  else if (!strcmp(event, "aria2.onDownloadError"))
    dmn_log(LOG_WARNING, "%s failed (%d: %s): %s", g, dl->error_code, dl->error_msg ? dl->error_msg : "", dl->uri);
}

/* A notification goes out on a later loop turn, as aria2's do: after the answer to the call
 * that raised it (addUri's GID comes before its onDownloadStart). */
static void notify(void *arg, const char *event, uint64_t gid) {
  struct daemon *d = arg;
  char g[17];
  dmn_gid_fmt(gid, g);
  json_t *n = json_pack("{s:s, s:s, s:[{s:s}]}", "jsonrpc", "2.0", "method", event, "params", "gid", g);
  char *s = json_dumps(n, JSON_COMPACT);
  log_event(d, event, gid, g);
  if (s && !d->stopping) {
    json_array_append_new(d->notes, json_string(s));
    uv_timer_start(&d->note_timer, on_note_timer, 0, 0);
  }
  free(s);
  json_decref(n);
  save_if_changed(d);
}

static char *on_rpc(void *arg, enum dmn_rpc_kind kind, const char *in, size_t len, int *status, const char **ctype) {
  struct daemon *d = arg;
  int script = 0;
  char *s;
  if (kind == DMN_RPC_XML) {
    s = dmn_xmlrpc_handle(&d->rpc, in, len);
    *status = s ? 200 : 400; /* XML-RPC faults come with 200; a body that does not parse, 400 */
    *ctype = "text/xml";
  } else {
    s = kind == DMN_RPC_JSON_GET ? dmn_rpc_handle_get(&d->rpc, in, status, &script)
                                 : dmn_rpc_handle(&d->rpc, in, len, status);
    *ctype = script ? "text/javascript" : "application/json-rpc";
  }
  save_if_changed(d); /* before the answer goes out: a GID answered is a GID kept */
  return s;
}

static void on_save_timer(uv_timer_t *t) { save_if_changed(t->data); }

static void teardown(struct daemon *d) {
  if (json_object_get(d->global, "save-session"))
    save_session(d);
  d->closed = 1; /* transfers the engine now cancels stay in the session as they were */
  uv_close((uv_handle_t *)&d->sigint, NULL);
  uv_close((uv_handle_t *)&d->sigterm, NULL);
  uv_close((uv_handle_t *)&d->save_timer, NULL);
  uv_close((uv_handle_t *)&d->stop_timer, NULL);
  uv_close((uv_handle_t *)&d->note_timer, NULL);
  dmn_httpd_close(&d->httpd);
  dmn_engine_close(&d->eng);
}

static void on_stop_timer(uv_timer_t *t) { teardown(t->data); }

/* shutdown, forceShutdown and the signals: the answer goes out first, then the loop winds down */
static void request_stop(void *arg, int force) {
  struct daemon *d = arg;
  (void)force; /* transfers are cancelled either way; their resume files stay */
  if (d->stopping++)
    return;
  dmn_svc_stopping("Stopping: saving the session");
  uv_timer_start(&d->stop_timer, on_stop_timer, 0, 0);
}

static void on_signal(uv_signal_t *s, int sig) {
  (void)sig;
  request_stop(s->data, 0);
}

/* queues one download from the command line or a session entry: uris, options (checked like
 * an RPC call's; unknown ones dropped), gid and pause=true as aria2 writes them */
static void add_entry(struct daemon *d, json_t *uris, json_t *opts) {
  json_t *keep = json_object(), *v;
  const char *k;
  uint64_t gid = 0;
  json_object_foreach(opts, k, v) {
    const char *s = json_string_value(v);
    if (dmn_opt_use(k) != DMN_OPT_UNKNOWN && (json_is_array(v) || (s && dmn_opt_valid(k, s) == 0)))
      json_object_set(keep, k, v);
  }
  const char *g = json_string_value(json_object_get(opts, "gid"));
  if (!g || dmn_gid_parse(g, &gid) < 0 || gid == 0 || dmn_q_find(&d->q, gid))
    gid = new_gid(d);
  struct dmn_dl *dl = dmn_dl_new(gid, json_incref(uris), keep);
  if (!dl)
    return;
  if (dmn_opt_true(opts, "pause"))
    dl->status = DMN_PAUSED;
  json_object_del(dl->opts, "pause"); /* a state, written apart in the session */
  dmn_q_add(&d->q, dl, -1);
}

static int load_input(struct daemon *d, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    int e = errno; /* a first start, before any session was written: no fault */
    dmn_log(e == ENOENT ? LOG_NOTICE : LOG_ERR, "cannot read %s: %s", path, strerror(e));
    return e == ENOENT ? 0 : -1; /* aria2 too starts with a session file yet to be written */
  }
  char *text = NULL;
  size_t cap = 0;
  ssize_t n = getdelim(&text, &cap, '\0', f);
  fclose(f);
  json_t *entries = dmn_session_parse(n > 0 ? text : "");
  free(text);
  for (size_t i = 0; i < json_array_size(entries); i++) {
    json_t *e = json_array_get(entries, i), *o = json_object_get(e, "opts");
    /* a download of the session goes on in its file, also one without a resume file (a
     * one-path transfer writes in order: its file is its progress) */
    if (!json_object_get(o, "continue"))
      json_object_set_new(o, "continue", json_string("true"));
    add_entry(d, json_object_get(e, "uris"), o);
  }
  json_decref(entries);
  return 0;
}

/* the options' warnings, written by options.c one per line, logged as warnings */
static void log_warnings(char *text) {
  char *save = NULL;
  for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
    dmn_log(LOG_WARNING, "%s", strncmp(l, "mhttp daemon: ", 14) ? l : l + 14);
}

/* the global options: defaults, then --conf-path's file, then the command line. 0, 1 for
 * --help, 2 for a bad option. */
static int read_options(struct daemon *d, int argc, char **argv, json_t *uris) {
  char err[256], *warned = NULL;
  size_t warned_len = 0;
  FILE *warn = open_memstream(&warned, &warned_len);
  const char *conf = dmn_opt_conf_path(argc, argv);
  d->global = dmn_opt_defaults();
  int rc = warn ? 0 : -1;
  if (rc == 0 && conf)
    rc = dmn_opt_parse_conf(conf, d->global, warn, err, sizeof err);
  if (rc == 0)
    rc = dmn_opt_parse_args(argc, argv, d->global, uris, warn, err, sizeof err);
  if (warn) {
    fclose(warn);
    log_warnings(warned);
    free(warned);
  } else
    snprintf(err, sizeof err, "out of memory");
  if (rc < 0) {
    dmn_log(LOG_ERR, "%s", err);
    dmn_log(LOG_ERR, "try 'mhttp daemon --help'");
  }
  return rc < 0 ? 2 : rc;
}

static long opt_long(const json_t *o, const char *name, long dflt) {
  const char *v = json_string_value(json_object_get(o, name));
  return v ? strtol(v, NULL, 10) : dflt;
}

/* aria2's sizes: a number with K or M */
static size_t opt_size(const json_t *o, const char *name, size_t dflt) {
  const char *v = json_string_value(json_object_get(o, name));
  char *end;
  if (!v)
    return dflt;
  size_t n = strtoull(v, &end, 10);
  return *end == 'K' || *end == 'k' ? n << 10 : *end == 'M' || *end == 'm' ? n << 20 : n;
}

static int start_server(struct daemon *d) {
  struct dmn_httpd_cfg cfg = {
      .port = (int)opt_long(d->global, "rpc-listen-port", 6800),
      .listen_all = dmn_opt_true(d->global, "rpc-listen-all"),
      .allow_origin_all = dmn_opt_true(d->global, "rpc-allow-origin-all"),
      .max_body = opt_size(d->global, "rpc-max-request-size", 2u << 20),
      .max_conns = 64,
      .idle_ms = 60000,
      .rpc = on_rpc,
      .arg = d,
  };
  char err[256];
  if (dmn_httpd_start(&d->httpd, &d->loop, &cfg, err, sizeof err) < 0) {
    dmn_log(LOG_ERR, "%s", err);
    return -1;
  }
  return 0;
}

static void init_rpc(struct daemon *d) {
  struct dmn_rpc *r = &d->rpc;
  r->q = &d->q;
  r->global = d->global;
  r->secret = json_string_value(json_object_get(d->global, "rpc-secret"));
  r->version = MHTTP_DAEMON_VERSION;
  uint8_t id[20];
  for (size_t i = 0; i < sizeof id; i += 8) {
    uint64_t v = random64();
    memcpy(id + i, &v, sizeof id - i < 8 ? sizeof id - i : 8);
  }
  for (size_t i = 0; i < sizeof id; i++)
    snprintf(r->session_id + 2 * i, 3, "%02x", id[i]);
  r->new_gid = new_gid;
  r->shutdown = request_stop;
  r->save = save_session;
  r->arg = d;
}

static void init_handles(struct daemon *d) {
  uv_signal_init(&d->loop, &d->sigint);
  uv_signal_init(&d->loop, &d->sigterm);
  d->sigint.data = d->sigterm.data = d;
  uv_signal_start(&d->sigint, on_signal, SIGINT);
  uv_signal_start(&d->sigterm, on_signal, SIGTERM);
  uv_timer_init(&d->loop, &d->save_timer);
  uv_timer_init(&d->loop, &d->stop_timer);
  uv_timer_init(&d->loop, &d->note_timer);
  d->save_timer.data = d->stop_timer.data = d->note_timer.data = d;
  d->notes = json_array();
  long every = opt_long(d->global, "save-session-interval", 0);
  if (every > 0 && json_object_get(d->global, "save-session"))
    uv_timer_start(&d->save_timer, on_save_timer, (uint64_t)every * 1000, (uint64_t)every * 1000);
}

/* READY=1 once the port listens and the session is queued: a unit ordered after this one (or
 * `systemctl start`, which waits for it) finds the RPC answering */
static void announce_ready(struct daemon *d) {
  char status[160];
  snprintf(status, sizeof status, "aria2 RPC on %s port %ld; queued: %zu",
           dmn_opt_true(d->global, "rpc-listen-all") ? "every address," : "localhost",
           opt_long(d->global, "rpc-listen-port", 6800), d->q.active.n + d->q.waiting.n);
  dmn_log(LOG_INFO, "%s", status);
  dmn_svc_ready(status);
}

/* everything made before the loop runs: 0, or the exit status */
static int setup(struct daemon *d, json_t *uris) {
  char err[256];
  if (dmn_opt_true(d->global, "daemon") && daemon(1, 0) < 0) {
    dmn_log(LOG_ERR, "cannot go to the background: %s", strerror(errno));
    return 1;
  }
  uv_loop_init(&d->loop);
  d->loop_made = 1;
  if (dmn_engine_init(&d->eng, &d->loop, d->global, err, sizeof err) < 0) {
    dmn_log(LOG_ERR, "%s", err);
    return 1;
  }
  struct dmn_engine_ops ops = dmn_engine_ops(&d->eng);
  dmn_q_init(&d->q, &ops, notify, d);
  d->eng.q = &d->q;
  d->q.max_active = (unsigned)opt_long(d->global, "max-concurrent-downloads", 5);
  d->q.max_results = (unsigned)opt_long(d->global, "max-download-result", 1000);
  init_rpc(d);
  init_handles(d);
  if (start_server(d) < 0) {
    request_stop(d, 1);
    return 1;
  }
  const char *input = json_string_value(json_object_get(d->global, "input-file"));
  if (input && load_input(d, input) < 0) {
    request_stop(d, 1);
    return 1;
  }
  if (json_array_size(uris)) {
    json_t *none = json_object(); /* the global options apply to it */
    add_entry(d, uris, none);
    json_decref(none);
  }
  save_if_changed(d);
  announce_ready(d);
  return 0;
}

int dmn_main(int argc, char **argv) {
  static struct daemon d;
  json_t *uris = json_array();
  signal(SIGPIPE, SIG_IGN);
  dmn_log_init();
  int rc = read_options(&d, argc, argv, uris);
  if (rc == 1) {
    fputs(dmn_opt_help(), stdout);
    rc = 0;
  } else if (rc == 0) {
    rc = setup(&d, uris);
    if (d.loop_made) {
      uv_run(&d.loop, UV_RUN_DEFAULT);
      dmn_q_free(&d.q);
      uv_loop_close(&d.loop);
    }
  }
  json_decref(uris);
  json_decref(d.global);
  json_decref(d.notes);
  free(d.saved);
  return rc;
}
