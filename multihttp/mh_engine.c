/* Engine lifecycle: creation and destruction of an instance, lazy start of its loop thread, the submission queue, the exit drain and the fork reset. */
#include "mh_engine_int.h"
#include "mh_fdgate.h"
#include "mh_path.h"
#include "mh_config.h"
#include "mh_dns.h"
#include "mh_conn.h"
#include "mh_log.h"
#include "mh_metrics.h"
#include "mh_mstore.h"
#include "mh_netwatch.h"
#include "mh_netstate.h"
#include "mh_session.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <stdio.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

__thread int mh_engine_thread_flag __attribute__((tls_model("initial-exec")));

struct mh__pending {
  struct mh__pending *next;
  int prog_fd, up_fd; /* -1, -1: a pre-connect request (mh_engine_preconnect) */
  void (*fn)(void *); /* a call (mh_engine_call): fn(arg), nothing else */
  void *arg;
  struct mh_conn *conn;
  struct sockaddr_storage dst, local;
};

const struct mh_config *mh_engine_config(const struct mh_engine *e) { return e->cfg; }

struct mh_metrics *mh_engine_metrics(struct mh_engine *e) {
  return e->paths.metrics;
}

struct mh_paths *mh_engine_paths(struct mh_engine *e) {
  return &e->paths;
}

struct mh_split_env *mh_engine_split_env(struct mh_engine *e) {
  return e ? &e->splits : NULL;
}

struct mh_upstream_env *mh_engine_upstream_env(struct mh_engine *e) {
  return &e->upenv;
}
struct mh_mstore *mh_engine_mstore(struct mh_engine *e) {
  return e->paths.mstore;
}
struct mh_dns *mh_engine_dns(struct mh_engine *e) {
  return e->paths.dns;
}

void mh_engine_own_fd(const struct mh_engine *e, int fd) {
  if (fd >= 0 && e && e->hooks.own_fd)
    e->hooks.own_fd(fd);
}

unsigned mh_engine_sessions(const struct mh_engine *e) { return e->nsessions; }

/* Wakes the loop. eventfd_write is glibc's own write(), never an interposed one. */
static void mh__wake(struct mh_engine *e) { (void)eventfd_write(e->wake_fd, 1); }

void mh_engine_poke(struct mh_engine *e) {
  pthread_mutex_lock(&e->sync.mu);
  int started = e->sync.started || (e->hooks.embedded && e->loop_ok);
  pthread_mutex_unlock(&e->sync.mu);
  if (started)
    mh__wake(e);
}

static void mh__dns_poke(void *arg) { mh_engine_poke(arg); }

/* The parts a fresh engine (and a forked child's) starts with: the read buffers, an empty
 * pool, metrics with nothing published, an empty store copy, no resolvers and no queued
 * lookups. */
static int mh__parts_new(struct mh_engine *e) {
  e->paths.pool = NULL;
  e->paths.metrics = NULL;
  e->paths.mstore = NULL;
  e->paths.netstate = NULL;
  e->paths.dns = NULL;
  /* the read buffers are made here, not when the loop starts: a split an owner starts with
   * this engine's split env on a loop of its own (tests, an embedding) reads into them too */
  if (!(e->scratch = malloc(MH_ENGINE_IO)) || !(e->splits.io = malloc(MH_SPLIT_IO)) ||
      mh_pool_new(&e->paths.pool) < 0 || mh_mstore_new(&e->paths.mstore) < 0 ||
      mh_netstate_new(&e->paths.netstate) < 0 || mh_metrics_new(e->paths.mstore, &e->paths.metrics) < 0 ||
      mh_dns_new(&e->loop, e->cfg, e->hooks.dns_sock, mh__dns_poke, e, &e->paths.dns) < 0)
    return -ENOMEM;
  return 0;
}

static void mh__own_fd(void *arg, int fd) { mh_engine_own_fd(arg, fd); }

/* The state of an engine whose loop never ran (constructor and fork child). */
static int mh__state_init(struct mh_engine *e) {
  pthread_mutex_init(&e->sync.mu, NULL);
  pthread_cond_init(&e->sync.cv, NULL);
  e->sync.started = e->sync.stopping = 0;
  e->sync.q_head = e->sync.q_tail = NULL;
  e->sync.drain_req = e->sync.drain_done = 0;
  e->wake_fd = -1;
  memset(&e->loop, 0, sizeof e->loop);
  e->loop_ok = 0;
  e->watch.orphan_ticks = 0;
  e->sessions = NULL;
  e->nsessions = 0;
  e->paths.netwatch = NULL; /* a forked child's is the parent's: abandoned, its descriptor announced */
  e->splits.budget.used = 0;
  e->scratch = e->splits.io = NULL;
  int rc = mh__parts_new(e);
  mh_metrics_observer(e->paths.metrics, &e->upobs); /* (a NULL metrics counts nothing) */
  e->upenv = (struct mh_upstream_env){mh__own_fd, e, &e->upobs, NULL};
  e->paths.cfg = e->cfg;
  e->paths.loop = &e->loop;
  e->paths.env = &e->upenv;
  e->splits.paths = &e->paths;
  e->splits.one_path = e->hooks.split_one_path;
  return rc;
}

static void mh__parts_free(struct mh_engine *e) {
  mh_dns_free(e->paths.dns);
  mh_metrics_free(e->paths.metrics);
  mh_mstore_free(e->paths.mstore);
  mh_netstate_free(e->paths.netstate);
  mh_pool_free(e->paths.pool);
  free(e->scratch);
  free(e->splits.io);
}

int mh_engine_new(const struct mh_engine_hooks *hooks, struct mh_engine **out) {
  struct mh_engine *e = calloc(1, sizeof *e);
  if (!e)
    return -ENOMEM;
  if (hooks)
    e->hooks = *hooks;
  mh_config_defaults(&e->cfg_default);
  e->cfg = e->hooks.cfg ? e->hooks.cfg : &e->cfg_default;
  if (pol_init(&e->paths.pol, &e->cfg->pol) < 0) {
    /* a config pol_init refuses cannot come out of mh_config: the default eaf then */
    struct pol_config d;
    pol_config_default(&d);
    pol_init(&e->paths.pol, &d);
  }
  e->splits.budget.max = e->cfg->window;
  if (mh__state_init(e) < 0) {
    mh__parts_free(e);
    free(e);
    return -ENOMEM;
  }
  *out = e;
  return 0;
}

static void mh__session_gone(struct mh_session *s, void *arg) {
  struct mh_engine *e = arg;
  mh_session_unlink(&e->sessions, s);
  e->nsessions--;
  if (!e->nsessions)
    mh_metrics_idle(e->paths.metrics); /* a program between downloads: its metrics so far, once a second */
}

static int mh__all_flushed(struct mh_engine *e) {
  if (e->sync.q_head)
    return 0;
  for (struct mh_session *s = e->sessions; s; s = mh_session_next(s))
    if (!mh_session_flushed(s))
      return 0;
  return 1;
}

static void mh__drain_check(uv_timer_t *t) {
  struct mh_engine *e = mh_engine_of(t->loop);
  pthread_mutex_lock(&e->sync.mu);
  if (e->sync.drain_req && mh__all_flushed(e)) {
    mh_metrics_publish(e->paths.metrics); /* the exit's metrics line (written by the draining thread) */
    mh_metrics_store_flush(e->paths.metrics);
    e->sync.drain_req = 0;
    e->sync.drain_done = 1;
    pthread_cond_broadcast(&e->sync.cv);
    uv_timer_stop(&e->watch.drain_timer);
  }
  pthread_mutex_unlock(&e->sync.mu);
}

/* A submission the engine will not serve (it is stopping): what it owned is released. */
static void mh__pending_drop(struct mh__pending *p) {
  if (!p->fn && p->prog_fd >= 0) {
    close(p->prog_fd);
    close(p->up_fd);
    mh_conn_unref(p->conn);
  }
  free(p);
}

/* mh_engine_free on the loop thread: every session is reset, every pooled connection, resolver
 * and handle closed; uv_run returns once their close callbacks ran. */
static void mh__shutdown(struct mh_engine *e) {
  for (struct mh_session *s = e->sessions, *next; s; s = next) {
    next = mh_session_next(s);
    mh_session_close(s);
  }
  mh_pool_close_all(e->paths.pool);
  mh_netwatch_close(e->paths.netwatch);
  e->paths.netwatch = NULL;
  mh_dns_close(e->paths.dns);
  mh_metrics_stop(e->paths.metrics);
  uv_close((uv_handle_t *)&e->watch.drain_timer, NULL);
  uv_close((uv_handle_t *)&e->watch.orphan_timer, NULL);
  uv_close((uv_handle_t *)&e->watch.wake, NULL);
}

static void mh__start_one(struct mh_engine *e, struct mh__pending *p) {
  if (p->fn) {
    p->fn(p->arg);
    return;
  }
  if (p->prog_fd < 0) {
    mh_pool_preconnect(e->paths.pool, &e->loop, &e->upenv, e->cfg, (struct sockaddr *)&p->dst,
                       (struct sockaddr *)&p->local);
    return;
  }
  struct mh_session *s = mh_session_start(e, ++e->next_session_id, p->prog_fd, p->up_fd, p->conn, mh__session_gone, e);
  if (s) {
    mh_session_link(&e->sessions, s);
    e->nsessions++;
  }
}

static void mh__wake_cb(uv_poll_t *h, int status, int events) {
  (void)status;
  (void)events;
  struct mh_engine *e = mh_engine_of(h->loop);
  eventfd_t v;
  (void)eventfd_read(e->wake_fd, &v);
  pthread_mutex_lock(&e->sync.mu);
  struct mh__pending *p = e->sync.q_head;
  e->sync.q_head = e->sync.q_tail = NULL;
  int drain = e->sync.drain_req, stopping = e->sync.stopping;
  pthread_mutex_unlock(&e->sync.mu);
  while (p) {
    struct mh__pending *next = p->next;
    if (stopping) {
      mh__pending_drop(p);
    } else {
      mh__start_one(e, p);
      free(p);
    }
    p = next;
  }
  if (stopping) {
    mh__shutdown(e);
    return;
  }
  /* the program's lookups after its sessions: their requests go out first (creating the
   * resolvers costs a first object about 2 ms otherwise), and a split needs the harvest
   * only when its probe answers, a round trip later */
  mh_dns_run(e->paths.dns);
  if (drain) {
    mh__drain_check(&e->watch.drain_timer);
    /* sessions make progress on their own events; re-check every millisecond meanwhile */
    if (!e->sync.drain_done)
      uv_timer_start(&e->watch.drain_timer, mh__drain_check, 1, 1);
  }
}

/* Field 20 (num_threads) and field 3 (state) of a /proc stat file; -1 when unreadable. */
static int mh__proc_stat(const char *path, char *state) {
  char buf[1024];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return -1;
  buf[n] = 0;
  char *p = strrchr(buf, ')'); /* the command name may contain spaces */
  if (!p || p[1] != ' ')
    return -1;
  *state = p[2];
  int field = 2;
  for (; *p && field < 20; p++)
    if (*p == ' ')
      field++;
  return atoi(p);
}

/* 1 when the loop thread is the only live thread: after main's pthread_exit the leader
 * stays as a zombie and still counts in num_threads until the process ends. */
static int mh__alone(void) {
  char st, leader_st;
  int n = mh__proc_stat("/proc/self/stat", &st);
  if (n == 1)
    return 1;
  if (n != 2)
    return 0;
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)getpid());
  return mh__proc_stat(path, &leader_st) >= 0 && leader_st == 'Z';
}

/* A program whose main thread called pthread_exit ends when its last thread does; our loop
 * thread must not keep it alive. When it is the only thread left, it finishes what the
 * program wrote (bounded) and ends the process as glibc would have: exit(0). */
static void mh__orphan_check(uv_timer_t *t) {
  struct mh_engine *e = mh_engine_of(t->loop);
  if (!mh__alone()) {
    e->watch.orphan_ticks = 0;
    return;
  }
  pthread_mutex_lock(&e->sync.mu);
  int flushed = mh__all_flushed(e);
  pthread_mutex_unlock(&e->sync.mu);
  if (flushed || ++e->watch.orphan_ticks > 4) {
    mh_info("engine: the program's threads are gone; exiting");
    exit(0);
  }
}

/* The interface table changed (mh_netwatch): pooled connections whose interface or address is
 * gone are closed now, the resolvers follow the new set (mh_dns_net_changed), and every split
 * refreshes its copy at its next tick (net_gen). */
static void mh__net_changed(void *arg, const struct mh_netwatch_table *now) {
  struct mh_engine *e = arg;
  e->paths.net_gen++;
  int dropped = mh_pool_prune(e->paths.pool, now->v, now->n);
  mh_dns_net_changed(e->paths.dns);
  mh_info("engine: the network changed (%d usable interface addresses); %d pooled connections dropped", now->n,
          dropped);
}

static void *mh__engine_main(void *arg) {
  struct mh_engine *e = arg;
  mh_engine_thread_flag = 1;
  if (e->hooks.thread_init)
    e->hooks.thread_init();
  uv_run(&e->loop, UV_RUN_DEFAULT);
  return NULL;
}

/* The loop, its wake-up and its timers; nothing runs yet. Called with mu held. The wake-up is
 * an eventfd of our own under a uv_poll_t rather than a uv_async_t: libuv keeps the async
 * descriptor in private fields, and the embedding must learn every descriptor the engine owns
 * (own_fd) so a forked child closes it. The loop's other descriptor is uv_backend_fd; libuv
 * 1.44 opens no more at uv_loop_init (its signal pipe is process-wide and re-made by its own
 * fork handler). */
static int mh__loop_init(struct mh_engine *e) {
  mh_fdgate(1); /* made and announced (or closed) before a fork can copy them */
  e->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  int rc = e->wake_fd < 0 ? -errno : uv_loop_init(&e->loop);
  if (rc == 0 && (rc = uv_poll_init(&e->loop, &e->watch.wake, e->wake_fd)) < 0)
    uv_loop_close(&e->loop);
  if (rc == 0) {
    mh_engine_own_fd(e, e->wake_fd);
    mh_engine_own_fd(e, uv_backend_fd(&e->loop));
  } else if (e->wake_fd >= 0) {
    close(e->wake_fd);
  }
  mh_fdgate(0);
  if (rc < 0) {
    e->wake_fd = -1;
    return rc;
  }
  e->loop.data = e;
  uv_poll_start(&e->watch.wake, UV_READABLE, mh__wake_cb);
  if ((rc = mh_metrics_start(e->paths.metrics, &e->loop, e->cfg)) < 0)
    mh_info("engine: no metrics (%s); policies decide without them", strerror(-rc));
  if ((rc = mh_netwatch_start(&e->loop, &e->upenv, e->cfg, mh__net_changed, e, &e->paths.netwatch)) < 0)
    mh_info("engine: no network events (%s): a lost path comes back by re-probing only", strerror(-rc));
  uv_timer_init(&e->loop, &e->watch.drain_timer);
  uv_timer_init(&e->loop, &e->watch.orphan_timer);
  if (!e->hooks.embedded) /* embedded, the caller's thread is the loop's: never alone */
    uv_timer_start(&e->watch.orphan_timer, mh__orphan_check, 500, 500);
  uv_unref((uv_handle_t *)&e->watch.orphan_timer);
  e->loop_ok = 1;
  return 0;
}

/* Called with mu held. */
static int mh__engine_start(struct mh_engine *e) {
  int rc;
  if (!e->loop_ok && (rc = mh__loop_init(e)) < 0)
    return rc;
  /* the loop thread takes no signal: the program's handlers must run on the program's threads */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  rc = -pthread_create(&e->thread, &attr, mh__engine_main, e);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc < 0)
    return rc; /* the loop stays initialised and unused; the next submit retries the thread */
  e->sync.started = 1;
  mh_info("engine started");
  return 0;
}

/* Queues p (prog_fd < 0: a pre-connect) and wakes the loop, starting it on first use. */
static int mh__enqueue(struct mh_engine *e, struct mh__pending *p) {
  int rc = 0;
  pthread_mutex_lock(&e->sync.mu);
  if (!p)
    rc = -ENOMEM;
  else if (!e->paths.metrics || e->sync.stopping)
    rc = -ESHUTDOWN; /* a fork child whose fresh parts could not be made, or being freed */
  else if (e->hooks.embedded)
    rc = e->loop_ok ? 0 : mh__loop_init(e);
  else if (!e->sync.started)
    rc = mh__engine_start(e);
  if (rc == 0) {
    p->next = NULL;
    if (e->sync.q_tail)
      e->sync.q_tail->next = p;
    else
      e->sync.q_head = p;
    e->sync.q_tail = p;
  }
  pthread_mutex_unlock(&e->sync.mu);
  if (rc < 0) {
    free(p);
    mh_err("engine: cannot start: %s", strerror(-rc));
    return rc;
  }
  mh__wake(e);
  return 0;
}

int mh_engine_submit(struct mh_engine *e, int prog_fd, int up_fd, struct mh_conn *conn) {
  struct mh__pending *p = calloc(1, sizeof *p);
  if (p) {
    p->prog_fd = prog_fd;
    p->up_fd = up_fd;
    p->conn = conn;
  }
  return mh__enqueue(e, p);
}

int mh_engine_call(struct mh_engine *e, void (*fn)(void *), void *arg) {
  struct mh__pending *p = calloc(1, sizeof *p);
  if (p) {
    p->fn = fn;
    p->arg = arg;
  }
  return mh__enqueue(e, p);
}

uv_loop_t *mh_engine_loop(struct mh_engine *e) {
  pthread_mutex_lock(&e->sync.mu);
  int rc = e->loop_ok ? 0 : e->paths.metrics && !e->sync.stopping ? mh__loop_init(e) : -ESHUTDOWN;
  pthread_mutex_unlock(&e->sync.mu);
  return rc < 0 ? NULL : &e->loop;
}

int mh_engine_preconnect(struct mh_engine *e, const struct sockaddr *dst, unsigned dst_len,
                         const struct sockaddr *local, unsigned local_len) {
  if (dst_len > sizeof(struct sockaddr_storage) || local_len > sizeof(struct sockaddr_storage))
    return -EINVAL;
  struct mh__pending *p = calloc(1, sizeof *p);
  if (p) {
    p->prog_fd = p->up_fd = -1;
    memcpy(&p->dst, dst, dst_len);
    memcpy(&p->local, local, local_len);
  }
  return mh__enqueue(e, p);
}

int mh_engine_drain(struct mh_engine *e, unsigned timeout_ms) {
  if (mh_engine_thread_flag)
    return 0;
  pthread_mutex_lock(&e->sync.mu);
  if (!e->sync.started) {
    pthread_mutex_unlock(&e->sync.mu);
    return 0;
  }
  e->sync.drain_req = 1;
  e->sync.drain_done = 0;
  pthread_mutex_unlock(&e->sync.mu);
  mh__wake(e);
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += timeout_ms / 1000;
  dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (dl.tv_nsec >= 1000000000L) {
    dl.tv_sec++;
    dl.tv_nsec -= 1000000000L;
  }
  int rc = 0;
  pthread_mutex_lock(&e->sync.mu);
  while (!e->sync.drain_done && rc == 0)
    rc = pthread_cond_timedwait(&e->sync.cv, &e->sync.mu, &dl);
  int done = e->sync.drain_done;
  e->sync.drain_req = 0;
  pthread_mutex_unlock(&e->sync.mu);
  mh_metrics_dump(e->paths.metrics);
  return done ? 0 : -ETIMEDOUT;
}

int mh_engine_fork_child(struct mh_engine *e) {
  /* Nothing of the old parts is freed or closed: see mh_engine.h. The configuration, the
   * hooks and the policy (plain values, no lock) are kept. */
  return mh__state_init(e);
}

/* Names a handle left open at the end (a leak to fix: whoever made it never closed it). */
static void mh__name_leftover(uv_handle_t *h, void *arg) {
  (void)arg;
  uv_os_fd_t fd = -1;
  int type = 0;
  socklen_t tl = sizeof type;
  uv_fileno(h, &fd);
  getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl);
  mh_err("engine: left open: %s (active %d, closing %d, data %p, fd %d type %d)", uv_handle_type_name(h->type),
         uv_is_active(h), uv_is_closing(h), h->data, fd, type);
}

void mh_engine_free(struct mh_engine *e) {
  if (!e)
    return;
  pthread_mutex_lock(&e->sync.mu);
  int started = e->sync.started;
  e->sync.stopping = 1;
  pthread_mutex_unlock(&e->sync.mu);
  if (started) {
    mh__wake(e);
    pthread_join(e->thread, NULL);
  } else if (e->loop_ok) {
    mh__shutdown(e); /* the thread never started: nothing else runs this loop */
    uv_run(&e->loop, UV_RUN_DEFAULT);
  }
  if (e->loop_ok && uv_loop_close(&e->loop) < 0) {
    mh_err("engine: a handle outlived the engine's loop");
    uv_walk(&e->loop, mh__name_leftover, NULL);
  }
  for (struct mh__pending *p = e->sync.q_head, *next; p; p = next) {
    next = p->next;
    mh__pending_drop(p);
  }
  if (e->wake_fd >= 0)
    close(e->wake_fd);
  mh__parts_free(e);
  pthread_mutex_destroy(&e->sync.mu);
  pthread_cond_destroy(&e->sync.cv);
  free(e);
}
