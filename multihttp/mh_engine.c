/* Engine lifecycle: lazy start of the loop thread, the submission queue, the exit drain and the fork reset. */
#include "mh_engine.h"
#include "mh_path.h"
#include "mh_reasm.h"
#include "mh_config.h"
#include "mh_dns.h"
#include "mh_conn.h"
#include "mh_log.h"
#include "mh_metrics.h"
#include "mh_session.h"

#include <errno.h>
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
  int prog_fd, up_fd;        /* -1, -1: a pre-connect request (mh_engine_preconnect) */
  struct mh_conn *conn;
  struct sockaddr_storage dst, local;
};

/* Engine state. mu guards started, the pending queue and the drain handshake; everything
 * else belongs to the loop thread. */
static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int started;
  uv_loop_t loop;
  uv_async_t wake;
  uv_timer_t drain_timer;
  uv_timer_t orphan_timer;   /* notices when the program's threads are all gone */
  int orphan_ticks;
  pthread_t thread;
  struct mh__pending *q_head, *q_tail;
  int drain_req, drain_done;
  struct mh_session *sessions;
  unsigned nsessions;
  unsigned next_id;
  struct mh_engine_hooks hooks;
} E = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

void mh_engine_set_hooks(const struct mh_engine_hooks *hooks) { E.hooks = *hooks; }

int mh_engine_split_one_path(void) { return E.hooks.split_one_path; }

const struct mh_config *mh_engine_config(void) {
  static struct mh_config defaults;
  static int init;
  if (E.hooks.cfg)
    return E.hooks.cfg;
  if (!init) {
    mh_config_defaults(&defaults);
    init = 1;
  }
  return &defaults;
}

int mh_engine_lookup(const char *host, struct sockaddr_storage *out, int max) {
  return E.hooks.lookup ? E.hooks.lookup(host, out, max) : 0;
}

const struct mdns_sockfns *mh_engine_dns_sock(void) { return E.hooks.dns_sock; }

void mh_engine_poke(void) {
  pthread_mutex_lock(&E.mu);
  int started = E.started;
  pthread_mutex_unlock(&E.mu);
  if (started)
    uv_async_send(&E.wake);
}

void mh_engine_own_fd(int fd) {
  if (fd >= 0 && E.hooks.own_fd)
    E.hooks.own_fd(fd);
}

unsigned mh_engine_sessions(void) { return E.nsessions; }

static void mh__session_gone(struct mh_session *s, void *arg) {
  (void)arg;
  mh_session_unlink(&E.sessions, s);
  E.nsessions--;
  if (!E.nsessions)
    mh_metrics_idle();  /* a program between downloads: its metrics so far, once a second */
}

static int mh__all_flushed(void) {
  if (E.q_head)
    return 0;
  for (struct mh_session *s = E.sessions; s; s = mh_session_next(s))
    if (!mh_session_flushed(s))
      return 0;
  return 1;
}

static void mh__drain_check(uv_timer_t *t) {
  (void)t;
  pthread_mutex_lock(&E.mu);
  if (E.drain_req && mh__all_flushed()) {
    mh_metrics_publish();  /* the exit's metrics line (written by the draining thread) */
    mh_metrics_store_flush();
    E.drain_req = 0;
    E.drain_done = 1;
    pthread_cond_broadcast(&E.cv);
    uv_timer_stop(&E.drain_timer);
  }
  pthread_mutex_unlock(&E.mu);
}

static void mh__wake_cb(uv_async_t *a) {
  (void)a;
  pthread_mutex_lock(&E.mu);
  struct mh__pending *p = E.q_head;
  E.q_head = E.q_tail = NULL;
  int drain = E.drain_req;
  pthread_mutex_unlock(&E.mu);
  while (p) {
    struct mh__pending *next = p->next;
    if (p->prog_fd < 0) {
      mh_pool_preconnect(&E.loop, mh_engine_config(), (struct sockaddr *)&p->dst, (struct sockaddr *)&p->local);
      free(p);
      p = next;
      continue;
    }
    struct mh_session *s = mh_session_start(&E.loop, ++E.next_id, p->prog_fd, p->up_fd, p->conn,
                                            mh__session_gone, NULL);
    if (s) {
      mh_session_link(&E.sessions, s);
      E.nsessions++;
    }
    free(p);
    p = next;
  }
  /* the program's lookups after its sessions: their requests go out first (creating the
   * resolvers costs a first object about 2 ms otherwise), and a split needs the harvest
   * only when its probe answers, a round trip later */
  mh_dns_run(&E.loop);
  if (drain) {
    mh__drain_check(NULL);
    /* sessions make progress on their own events; re-check every millisecond meanwhile */
    if (!E.drain_done)
      uv_timer_start(&E.drain_timer, mh__drain_check, 1, 1);
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
  char *p = strrchr(buf, ')');  /* the command name may contain spaces */
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
  (void)t;
  if (!mh__alone()) {
    E.orphan_ticks = 0;
    return;
  }
  pthread_mutex_lock(&E.mu);
  int flushed = mh__all_flushed();
  pthread_mutex_unlock(&E.mu);
  if (flushed || ++E.orphan_ticks > 4) {
    mh_info("engine: the program's threads are gone; exiting");
    exit(0);
  }
}

static void *mh__engine_main(void *arg) {
  (void)arg;
  mh_engine_thread_flag = 1;
  uv_run(&E.loop, UV_RUN_DEFAULT);
  return NULL;
}

/* Called with mu held. */
static int mh__engine_start(void) {
  int rc = uv_loop_init(&E.loop);
  if (rc < 0)
    return rc;
  if ((rc = uv_async_init(&E.loop, &E.wake, mh__wake_cb)) < 0) {
    uv_loop_close(&E.loop);
    return rc;
  }
  if ((rc = mh_metrics_start(&E.loop, mh_engine_config())) < 0)
    mh_info("engine: no metrics (%s); policies decide without them", strerror(-rc));
  uv_timer_init(&E.loop, &E.drain_timer);
  uv_timer_init(&E.loop, &E.orphan_timer);
  uv_timer_start(&E.orphan_timer, mh__orphan_check, 500, 500);
  uv_unref((uv_handle_t *)&E.orphan_timer);
  /* the loop's own descriptors: a forked child must close them, not inherit them silently */
  mh_engine_own_fd(uv_backend_fd(&E.loop));
  mh_engine_own_fd(E.loop.async_io_watcher.fd);
  if (E.loop.async_wfd >= 0)
    mh_engine_own_fd(E.loop.async_wfd);
  /* the loop thread takes no signal: the program's handlers must run on the program's threads */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  rc = -pthread_create(&E.thread, &attr, mh__engine_main, NULL);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc < 0)
    return rc;  /* the loop stays initialised and unused; the next submit retries the thread */
  E.started = 1;
  mh_info("engine started");
  return 0;
}

/* Queues p (prog_fd < 0: a pre-connect) and wakes the loop, starting it on first use. */
static int mh__enqueue(struct mh__pending *p) {
  int rc = 0;
  pthread_mutex_lock(&E.mu);
  if (!p)
    rc = -ENOMEM;
  else if (!E.started)
    rc = mh__engine_start();
  if (rc == 0) {
    p->next = NULL;
    if (E.q_tail)
      E.q_tail->next = p;
    else
      E.q_head = p;
    E.q_tail = p;
  }
  pthread_mutex_unlock(&E.mu);
  if (rc < 0) {
    free(p);
    mh_err("engine: cannot start: %s", strerror(-rc));
    return rc;
  }
  uv_async_send(&E.wake);
  return 0;
}

int mh_engine_submit(int prog_fd, int up_fd, struct mh_conn *conn) {
  struct mh__pending *p = malloc(sizeof *p);
  if (p) {
    p->prog_fd = prog_fd;
    p->up_fd = up_fd;
    p->conn = conn;
  }
  return mh__enqueue(p);
}

int mh_engine_preconnect(const struct sockaddr *dst, unsigned dst_len, const struct sockaddr *local,
                         unsigned local_len) {
  if (dst_len > sizeof(struct sockaddr_storage) || local_len > sizeof(struct sockaddr_storage))
    return -EINVAL;
  struct mh__pending *p = calloc(1, sizeof *p);
  if (p) {
    p->prog_fd = p->up_fd = -1;
    memcpy(&p->dst, dst, dst_len);
    memcpy(&p->local, local, local_len);
  }
  return mh__enqueue(p);
}

int mh_engine_drain(unsigned timeout_ms) {
  if (mh_engine_thread_flag)
    return 0;
  pthread_mutex_lock(&E.mu);
  if (!E.started) {
    pthread_mutex_unlock(&E.mu);
    return 0;
  }
  E.drain_req = 1;
  E.drain_done = 0;
  pthread_mutex_unlock(&E.mu);
  uv_async_send(&E.wake);
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += timeout_ms / 1000;
  dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (dl.tv_nsec >= 1000000000L) {
    dl.tv_sec++;
    dl.tv_nsec -= 1000000000L;
  }
  int rc = 0;
  pthread_mutex_lock(&E.mu);
  while (!E.drain_done && rc == 0)
    rc = pthread_cond_timedwait(&E.cv, &E.mu, &dl);
  int done = E.drain_done;
  E.drain_req = 0;
  pthread_mutex_unlock(&E.mu);
  mh_metrics_dump();
  return done ? 0 : -ETIMEDOUT;
}

void mh_engine_forget_after_fork(void) {
  /* The parent's loop thread does not exist here and its locks may be held forever: start
   * over. The old loop's memory is abandoned on purpose (touching it could deadlock). */
  pthread_mutex_init(&E.mu, NULL);
  pthread_cond_init(&E.cv, NULL);
  E.started = 0;
  E.q_head = E.q_tail = NULL;
  E.sessions = NULL;
  E.nsessions = 0;
  E.drain_req = E.drain_done = 0;
  memset(&E.loop, 0, sizeof E.loop);
  /* Split state that outlives a session: the parent's pooled connections and the bytes its
   * objects held in the reassembly window are not the child's. */
  mh_pool_forget_after_fork();
  mh_metrics_forget_after_fork();
  mh_reasm_budget_used = 0;
  mh_dns_forget_after_fork();
}
