/* The public API's session (include/mhttp.h): errors, version, sessions and their options, the embedded loop and the threaded one, and running calls on the loop. */
#include "mh_api.h"
#include "mh_api_int.h"
#include "mh_engine.h"
#include "mh_log.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

MHTTP_API const char *mhttp_version(void) { return MHTTP_VERSION_STRING; }

MHTTP_API int mhttp_shim_active(void) {
  /* looked up on every call, never cached: the preload library may be loaded after the first
   * call (dlopen RTLD_GLOBAL), and the lookup costs a hash probe per loaded object */
  int (*active)(void);
  *(void **)&active = dlsym(RTLD_DEFAULT, MH_API_SHIM_SYMBOL);
  return active ? active() != 0 : 0;
}

static const char *const mh__codes[] = {
    [MHTTP_OK] = "no error",
    [MHTTP_E_INVAL] = "invalid argument or call in the wrong state",
    [MHTTP_E_OPTION] = "unknown option or bad option value",
    [MHTTP_E_NOMEM] = "out of memory",
    [MHTTP_E_URL] = "URL not supported or malformed",
    [MHTTP_E_RESOLVE] = "could not resolve host",
    [MHTTP_E_CONNECT] = "could not connect to server",
    [MHTTP_E_PROTOCOL] = "malformed answer from the server",
    [MHTTP_E_PARTIAL] = "transfer closed with data outstanding",
    [MHTTP_E_HTTP] = "the server answered with an HTTP error",
    [MHTTP_E_WRITE] = "failed writing to the destination",
    [MHTTP_E_TIMEOUT] = "operation timed out",
    [MHTTP_E_TLS] = "TLS handshake failed",
    [MHTTP_E_CERT] = "server certificate did not verify",
    [MHTTP_E_CHECKSUM] = "checksum mismatch",
    [MHTTP_E_RESUME] = "resume file unreadable or for another URL",
    [MHTTP_E_CANCELED] = "transfer canceled",
    [MHTTP_E_REDIRECTS] = "too many redirects",
    [MHTTP_E_SYSTEM] = "operating-system error",
    [MHTTP_E_BUSY] = "transfer still running",
    [MHTTP_E_INTERFACE] = "no such interface",
    [MHTTP_E_CACERT] = "CA certificate file unreadable",
};

/* curl's exit status for each code (mhttp.h's table), indexed by mhttp_code; 0: curl's 2. */
static const unsigned char mh__exits[] = {
    [MHTTP_E_NOMEM] = 27,   [MHTTP_E_URL] = 3,       [MHTTP_E_RESOLVE] = 6,    [MHTTP_E_CONNECT] = 7,
    [MHTTP_E_PROTOCOL] = 8, [MHTTP_E_PARTIAL] = 18,  [MHTTP_E_HTTP] = 22,      [MHTTP_E_WRITE] = 23,
    [MHTTP_E_TIMEOUT] = 28, [MHTTP_E_TLS] = 35,      [MHTTP_E_CERT] = 60,      [MHTTP_E_CHECKSUM] = 32,
    [MHTTP_E_RESUME] = 36,  [MHTTP_E_CANCELED] = 42, [MHTTP_E_REDIRECTS] = 47, [MHTTP_E_INTERFACE] = 45,
    [MHTTP_E_CACERT] = 77,
};

MHTTP_API int mhttp_exit_code(mhttp_code code) {
  if (code == MHTTP_OK)
    return 0;
  return (unsigned)code < sizeof mh__exits && mh__exits[code] ? mh__exits[code] : 2;
}

MHTTP_API const char *mhttp_strerror(mhttp_code code) {
  if ((unsigned)code < sizeof mh__codes / sizeof mh__codes[0] && mh__codes[code])
    return mh__codes[code];
  return "unknown error code";
}

/* ---- the shim's hands off our sockets ------------------------------------------------------ */

/* When libmhttp.so is preloaded its connect()/write()... interpose ours too (a preloaded object
 * is searched first). Its hooks pass straight through on a thread it flags as an engine's; this
 * library flags its own loop threads, and the caller's thread while it runs the loop of an
 * embedded session (user callbacks excepted), through that library's private marker. */
static __thread int mh__bypass_depth;

static void mh__shim_flag(int on) {
  void (*fn)(int);
  *(void **)&fn = dlsym(RTLD_DEFAULT, MH_API_SHIM_BYPASS_SYMBOL);
  if (fn)
    fn(on);
}

void mh__api_bypass(int on) {
  if (on ? mh__bypass_depth++ == 0 : --mh__bypass_depth == 0)
    mh__shim_flag(on);
}

/* Around a user callback: the caller's own calls there are the program's again. */
int mh__api_user_begin(void) {
  int d = mh__bypass_depth;
  if (d)
    mh__shim_flag(0);
  return d;
}
void mh__api_user_end(int d) {
  if (d)
    mh__shim_flag(1);
}

static void mh__thread_init(void) { mh__api_bypass(1); }

/* ---- sessions ------------------------------------------------------------------------------ */

static const char *mh__getenv(const char *name) { return getenv(name); }

/* MHTTP_LOG_FILE, as the preload library reads it: appended to, never inherited by a child.
 * The log is the process's (mh_log), so sessions naming one file share one descriptor; a file
 * once logged to stays open, because another thread may be writing to it. */
static int mh__log_open(const struct mh_config *cfg, char *err, size_t cap) {
  static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  static char path[sizeof cfg->log_file];
  static int fd = 2;
  int rc = 0;
  pthread_mutex_lock(&mu);
  if (!cfg->log_file[0]) {
    fd = 2;
    path[0] = 0;
  } else if (strcmp(path, cfg->log_file)) {
    int nfd = open(cfg->log_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (nfd < 0) {
      snprintf(err, cap, "MHTTP_LOG_FILE: cannot open '%.200s': %s", cfg->log_file, strerror(errno));
      rc = -1;
    } else {
      fd = nfd;
      memcpy(path, cfg->log_file, sizeof path);
    }
  }
  if (!rc)
    mh_log_setup(cfg->log_level, fd, NULL);
  pthread_mutex_unlock(&mu);
  return rc;
}

MHTTP_API mhttp_code mhttp_session_new(unsigned flags, mhttp_session **out) {
  if (out)
    *out = NULL;
  if (!out || (flags & ~MHTTP_SESSION_THREAD))
    return MHTTP_E_INVAL;
  mhttp_session *s = calloc(1, sizeof *s);
  if (!s)
    return MHTTP_E_NOMEM;
  s->flags = flags;
  mh_config_defaults(&s->cfg);
  char err[MH_CONFIG_ERR_MAX];
  if (mh_config_apply_env(&s->cfg, mh__getenv, err, sizeof err) < 0 || mh__log_open(&s->cfg, err, sizeof err) < 0) {
    mh_err("%s", err);
    free(s);
    return MHTTP_E_OPTION;
  }
  mh__opts_defaults(&s->opts);
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  *out = s;
  return MHTTP_OK;
}

static void mh__note_tid(void *arg) {
  mhttp_session *s = arg;
  s->loop_tid = pthread_self();
  atomic_store(&s->have_tid, 1);
}

/* The session's engine, made on first need: from then on the session's options are fixed. */
mhttp_code mh__api_engine(mhttp_session *s) {
  if (s->eng)
    return MHTTP_OK;
  struct mh_engine_hooks h = {
      .cfg = &s->cfg, .embedded = !(s->flags & MHTTP_SESSION_THREAD), .thread_init = mh__thread_init};
  if (mh_engine_new(&h, &s->eng) < 0)
    return MHTTP_E_NOMEM;
  if (!(s->loop = mh_engine_loop(s->eng)) ||
      ((s->flags & MHTTP_SESSION_THREAD) && mh_engine_call(s->eng, mh__note_tid, s) < 0)) {
    mh_engine_free(s->eng);
    s->eng = NULL;
    return MHTTP_E_SYSTEM;
  }
  return MHTTP_OK;
}

int mh__api_on_loop(mhttp_session *s) {
  return !(s->flags & MHTTP_SESSION_THREAD) ||
         (atomic_load(&s->have_tid) && pthread_equal(s->loop_tid, pthread_self()));
}

struct mh__job {
  mhttp_session *s;
  void (*fn)(void *);
  void *arg;
  int done;
};

static void mh__job_run(void *arg) {
  struct mh__job *j = arg;
  j->fn(j->arg);
  pthread_mutex_lock(&j->s->mu);
  j->done = 1;
  pthread_cond_broadcast(&j->s->cv);
  pthread_mutex_unlock(&j->s->mu);
}

/* Runs fn(arg) on the session's loop and returns when it ran: directly on the loop's own thread
 * (an embedded session's caller, or a callback), else through the engine's queue. */
mhttp_code mh__api_sync(mhttp_session *s, void (*fn)(void *), void *arg) {
  mhttp_code c = mh__api_engine(s);
  if (c != MHTTP_OK)
    return c;
  if (mh__api_on_loop(s)) {
    mh__api_bypass(1);
    fn(arg);
    mh__api_bypass(0);
    return MHTTP_OK;
  }
  struct mh__job j = {.s = s, .fn = fn, .arg = arg};
  if (mh_engine_call(s->eng, mh__job_run, &j) < 0)
    return MHTTP_E_SYSTEM;
  pthread_mutex_lock(&s->mu);
  while (!j.done)
    pthread_cond_wait(&s->cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
  return MHTTP_OK;
}

/* A transfer ended (loop thread): mhttp_session_wait may return. */
void mh__api_ended(mhttp_session *s) {
  pthread_mutex_lock(&s->mu);
  s->running--;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

mhttp_code mh__s_refuse(mhttp_session *s, mhttp_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->callmsg, sizeof s->callmsg, fmt, ap);
  va_end(ap);
  return code;
}

MHTTP_API const char *mhttp_session_errmsg(const mhttp_session *s) { return s ? s->callmsg : ""; }

MHTTP_API mhttp_code mhttp_session_setopt(mhttp_session *s, const char *name, const char *value) {
  if (!s)
    return MHTTP_E_INVAL;
  if (!name || !value)
    return mh__s_refuse(s, MHTTP_E_INVAL, "mhttp_session_setopt: %s is NULL", name ? "the value" : "the name");
  if (s->eng)
    return mh__s_refuse(s, MHTTP_E_INVAL, "option %.64s: session options are fixed once a transfer started", name);
  s->callmsg[0] = 0;
  return mh__opt_session(s, name, value, s->callmsg, sizeof s->callmsg);
}

/* On the loop: every transfer is cancelled and released (freed once its handles closed). */
static void mh__free_all(void *arg) {
  mhttp_session *s = arg;
  while (s->xfers) {
    struct mhttp_xfer *x = s->xfers;
    mh__x_cancel(x);
    mh__x_release(x);
  }
}

MHTTP_API void mhttp_session_free(mhttp_session *s) {
  if (!s)
    return;
  if (s->eng) {
    mh__api_sync(s, mh__free_all, s);
    mh__api_bypass(1); /* embedded, the loop's last turns run here */
    mh_engine_free(s->eng);
    mh__api_bypass(0);
  } else {
    mh__free_all(s);
  }
  mh__opts_free(&s->opts);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s);
}

/* ---- running the loop ---------------------------------------------------------------------- */

MHTTP_API int mhttp_get_fd(mhttp_session *s) {
  if (!s || (s->flags & MHTTP_SESSION_THREAD) || mh__api_engine(s) != MHTTP_OK)
    return -1;
  return uv_backend_fd(s->loop);
}

MHTTP_API int mhttp_get_timeout(mhttp_session *s) {
  if (!s || (s->flags & MHTTP_SESSION_THREAD) || !s->eng)
    return -1;
  return uv_backend_timeout(s->loop);
}

MHTTP_API mhttp_code mhttp_perform(mhttp_session *s) {
  if (!s)
    return MHTTP_E_INVAL;
  if (s->flags & MHTTP_SESSION_THREAD)
    return mh__s_refuse(s, MHTTP_E_INVAL, "mhttp_perform: the session runs its own thread");
  mhttp_code c = mh__api_engine(s);
  if (c != MHTTP_OK)
    return c;
  mh__api_bypass(1);
  uv_run(s->loop, UV_RUN_NOWAIT);
  mh__api_bypass(0);
  return MHTTP_OK;
}

static uint64_t mh__ms_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static unsigned mh__running(mhttp_session *s) {
  pthread_mutex_lock(&s->mu);
  unsigned n = s->running;
  pthread_mutex_unlock(&s->mu);
  return n;
}

/* Embedded: the loop runs here, between waits on its descriptor. */
static mhttp_code mh__wait_embedded(mhttp_session *s, int timeout_ms) {
  uint64_t end = mh__ms_now() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms);
  while (mh__running(s)) {
    int t = mhttp_get_timeout(s);
    if (timeout_ms >= 0) {
      uint64_t now = mh__ms_now();
      if (now >= end)
        return MHTTP_E_TIMEOUT;
      if (t < 0 || (uint64_t)t > end - now)
        t = (int)(end - now);
    }
    struct pollfd p = {.fd = mhttp_get_fd(s), .events = POLLIN};
    (void)poll(&p, 1, t);
    mhttp_perform(s);
  }
  return MHTTP_OK;
}

static mhttp_code mh__wait_thread(mhttp_session *s, int timeout_ms) {
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += timeout_ms / 1000;
  dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (dl.tv_nsec >= 1000000000L)
    dl.tv_sec++, dl.tv_nsec -= 1000000000L;
  int rc = 0;
  pthread_mutex_lock(&s->mu);
  while (s->running && rc != ETIMEDOUT)
    rc = timeout_ms < 0 ? pthread_cond_wait(&s->cv, &s->mu) : pthread_cond_timedwait(&s->cv, &s->mu, &dl);
  unsigned left = s->running;
  pthread_mutex_unlock(&s->mu);
  return left ? MHTTP_E_TIMEOUT : MHTTP_OK;
}

MHTTP_API mhttp_code mhttp_session_wait(mhttp_session *s, int timeout_ms) {
  if (!s || (s->eng && (s->flags & MHTTP_SESSION_THREAD) && mh__api_on_loop(s)))
    return MHTTP_E_INVAL;
  if (!s->eng)
    return MHTTP_OK; /* nothing ever started */
  return (s->flags & MHTTP_SESSION_THREAD) ? mh__wait_thread(s, timeout_ms) : mh__wait_embedded(s, timeout_ms);
}

MHTTP_API mhttp_code mhttp_wakeup(mhttp_session *s) {
  if (!s)
    return MHTTP_E_INVAL;
  if (s->eng)
    mh_engine_poke(s->eng);
  pthread_mutex_lock(&s->mu);
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return MHTTP_OK;
}
