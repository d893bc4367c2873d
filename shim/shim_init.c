/* Shim lifecycle: one-time initialisation (symbols, configuration, logging), the exit drain, the fork child reset, and the marker the API library asks. */
#include "shim.h"
#include "mh_conn.h"
#include "mh_api.h"
#include "mh_fdgate.h"
#include "mh_log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Atomic int shim_status = SHIM_UNINIT;
struct mh_config shim_config;
int shim_pid;
static struct mh_engine *shim__engine;
static pthread_once_t shim__once = PTHREAD_ONCE_INIT, shim__engine_once = PTHREAD_ONCE_INIT;
static struct mh_engine_hooks shim__hooks;

#define SHIM_EXIT_DRAIN_MS 1000

/* One line on stderr, then the shim stays out of the way for the whole process. */
static void shim__disable(const char *why) {
  char line[400];
  int n = snprintf(line, sizeof line, "libmhttp: %s; libmhttp disabled\n", why);
  if (n > 0 && shim_real.write)
    (void)!shim_real.write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
  shim_status = SHIM_OFF;
}

/* Reads the config file through the real symbols (our hooks are not ready yet). The owner and
 * mode are checked on the open descriptor, so the file checked is the file read. -EACCES with
 * `err` set: a file others could rewrite (mh_config_check_owner). */
static void shim__own_fd(int fd) { shim_fd_mark_engine(fd); }

static void shim__atfork_child(void) {
  /* first: the child's clean-up closes and makes descriptors inside the gate, and this
   * thread holds it since the prepare handler */
  mh_fdgate_fork_child();
  if (shim_status == SHIM_ACTIVE) {
    int err = errno;
    shim_after_fork_child();
    errno = err;
  }
}

/* shim_config from the defaults, the configuration file (MHTTP_CONFIG, else /etc/mhttp.conf
 * when it exists) and the environment: 0, or -1 with err saying what was wrong. */
/* The configuration, read with the unhooked read and close (the program's own are hooked). */
static int shim__configure(char *err, size_t errlen) {
  const struct mh_config_io io = {.read = shim_real.read, .close = shim_real.close};
  return mh_config_load(&shim_config, &io, err, errlen);
}

static void shim__init_once(void) {
  shim_real_init();
  if (!shim_real.write || !shim_real.connect || !shim_real.close || !shim_real.dup3 || !shim_real.fcntl ||
      !shim_real.getsockopt || !shim_real.epoll_ctl) {
    shim_status = SHIM_OFF; /* cannot even pass calls through safely: stay out of the way */
    return;
  }
  const char *dis = getenv("MHTTP_DISABLE");
  if (dis && mh_config_parse_bool(dis) == 1) {
    shim_status = SHIM_OFF; /* a no-op: no file read, no log, nothing */
    return;
  }
  char err[MH_CONFIG_ERR_MAX];
  if (shim__configure(err, sizeof err) < 0) {
    shim__disable(err);
    return;
  }
  if (shim_config.disabled) {
    shim_status = SHIM_OFF;
    return;
  }
  int logfd = 2;
  if (shim_config.log_file[0]) {
    logfd = open(shim_config.log_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (logfd < 0) {
      snprintf(err, sizeof err, "MHTTP_LOG_FILE: cannot open '%.200s': %s", shim_config.log_file, strerror(errno));
      shim__disable(err);
      return;
    }
  }
  mh_log_setup(shim_config.log_level, logfd, shim_real.write);
  shim__hooks = (struct mh_engine_hooks){.own_fd = shim__own_fd, .cfg = &shim_config, .dns_sock = &shim_dns_sockfns};
  shim_pid = getpid();
  pthread_atfork(NULL, NULL, shim__atfork_child);
  shim_status = SHIM_ACTIVE;
  mh_dbg("active (pid %d)", (int)getpid());
}

void shim_init(void) { pthread_once(&shim__once, shim__init_once); }

static void shim__engine_new(void) {
  struct mh_engine *e = NULL;
  if (mh_engine_new(&shim__hooks, &e) < 0)
    mh_err("no engine (out of memory): connections are left alone");
  /* A fork waits while a thread makes or closes an engine descriptor (mh_fdgate.h), so the
   * child closes every one. Registered now, after the program has run, not from the
   * constructor: prepare handlers run newest first, so ours waits for the gate before an
   * allocator's handler (jemalloc's, say) locks what a thread inside the gate may need. */
  if (e)
    pthread_atfork(mh_fdgate_fork_prepare, mh_fdgate_fork_parent, NULL); /* the child's: shim__atfork_child */
  __atomic_store_n(&shim__engine, e, __ATOMIC_RELEASE);
}

struct mh_engine *shim_engine(void) {
  pthread_once(&shim__engine_once, shim__engine_new);
  return shim__engine;
}

/* The engine when one was made, without making one (exit, fork). */
static struct mh_engine *shim__engine_made(void) { return __atomic_load_n(&shim__engine, __ATOMIC_ACQUIRE); }

__attribute__((constructor)) static void shim__ctor(void) { shim_init(); }

/* exit(): bytes the program wrote must still reach the server, so the engine gets a bounded
 * moment to hand them to the kernel. _exit() and fatal signals skip this (documented). */
__attribute__((destructor)) static void shim__dtor(void) {
  if (shim_status == SHIM_ACTIVE && shim__engine_made() && mh_engine_drain(shim__engine_made(), SHIM_EXIT_DRAIN_MS) < 0)
    mh_info("exit: engine not drained within %d ms", SHIM_EXIT_DRAIN_MS);
}

void shim_after_fork_child(void) {
  shim_pid = getpid();
  /* The parent's engine thread does not exist here. Its descriptors must not stay open in
   * the child (they would keep the parent's connections alive), and TAKEN fds keep working
   * as shared sockets served by the parent's engine, as a forked TCP socket would. */
  int lim = shim_fd_limit();
  for (int fd = 0; fd < lim; fd++) {
    struct shim_fd *e = shim_fd_peek(fd);
    if (!e)
      continue;
    atomic_flag_clear(&e->lock); /* a parent thread may have held it at fork time */
    int st = atomic_load(&e->state);
    if (st == SHIM_FD_ENGINE) {
      shim_real.close(fd);
      atomic_store(&e->state, SHIM_FD_NONE);
    } else if (st == SHIM_FD_SWAPPING) {
      atomic_store(&e->state, SHIM_FD_NONE);
    } else if (st == SHIM_FD_TAKEN && e->conn) {
      /* the parent's record may be locked forever here: a private copy with no upstream */
      struct mh_conn *c = mh_conn_new();
      if (c) {
        struct mh_conn *o = e->conn;
        c->peer = o->peer;
        c->local = o->local;
        c->peer_len = o->peer_len;
        c->local_len = o->local_len;
        c->family = o->family;
        c->app_fd = o->app_fd;
        c->nodelay = o->nodelay;
      }
      e->conn = c;
    }
  }
  struct mh_engine *eng = shim__engine_made();
  if (!eng) /* a parent thread may have been making it: the child makes its own on first use */
    shim__engine_once = (pthread_once_t)PTHREAD_ONCE_INIT;
  else if (mh_engine_fork_child(eng) < 0) { /* out of memory: stop using it */
    __atomic_store_n(&shim__engine, NULL, __ATOMIC_RELEASE);
    mh_err("fork: no engine in this child; its connections are left alone");
  }
}

/* What the API library's mhttp_shim_active() finds (multihttp/base/mh_api.h): the one name this
 * library exports besides the libc calls it wraps. The public API is the API library's alone:
 * any mhttp_* name exported here would interpose that library's own (a preloaded object is
 * searched first), so a preload library of another version would answer for it. */
SHIM_EXPORT int mhttp__shim_active(void) {
  if (shim_status == SHIM_UNINIT)
    shim_init();
  return shim_status == SHIM_ACTIVE;
}

/* The API library's loop threads, and a caller's thread while it runs an embedded session's
 * loop, say so here (multihttp/base/mh_api.h): the hooks then pass that thread's calls straight to
 * libc, as on this library's own loop thread, so the API's connections are never taken over. */
SHIM_EXPORT void mhttp__shim_bypass(int on) { mh_engine_thread_flag = on != 0; }
