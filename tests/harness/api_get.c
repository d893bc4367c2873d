/* A program built only against include/mhttp.h and libmhttp.so.0: downloads one URL (with mirrors and pinned replicas) through the API to a file, an fd or an ordered callback, on the session's thread or in its own epoll loop, optionally cancelled from another thread; prints the outcome for tests/integration/test_api_xfer.sh. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "mhttp.h"

struct run {
  char events[512];
  uint64_t cb_next; /* ordered callback: the next offset expected */
  int cb_disorder;
  uint64_t cancel_after; /* bytes before another thread cancels (0: never) */
  uint64_t pause_at;     /* bytes before the main thread pauses for a second (0: never) */
  long cb_max;           /* the callback takes at most this many bytes per call (0: all) */
  uint64_t paused_delta; /* body bytes delivered while paused */
  mhttp_xfer *x;
  int cancel_started;
  pthread_t canceller;
};

static void note(struct run *r, const char *what) {
  size_t l = strlen(r->events);
  if (l + strlen(what) + 2 < sizeof r->events)
    snprintf(r->events + l, sizeof r->events - l, "%s%s", l ? "," : "", what);
}

static void *cancel_main(void *arg) {
  struct run *r = arg;
  mhttp_code c = mhttp_xfer_cancel(r->x);
  if (c != MHTTP_OK)
    fprintf(stderr, "cancel: %s\n", mhttp_strerror(c));
  return NULL;
}

static void on_event(const mhttp_event *ev, void *arg) {
  struct run *r = arg;
  static const char *const names[] = {"", "start", "up", "down", "progress", "complete", "error"};
  char down[32];
  /* a path down with a cause; a mirror's says which ("down(5@m1)": mirror 1 did not resolve) */
  if (ev->mirror)
    snprintf(down, sizeof down, "down(%d@m%u)", (int)ev->code, ev->mirror);
  else
    snprintf(down, sizeof down, "down(%d)", (int)ev->code);
  if (ev->type == MHTTP_EV_PATH_DOWN && ev->code != MHTTP_OK)
    note(r, down);
  else if (ev->type != MHTTP_EV_PROGRESS || !strstr(r->events, "progress"))
    note(r, names[ev->type]);
  if (r->cancel_after && !r->cancel_started && ev->done >= r->cancel_after) {
    r->cancel_started = 1; /* from another thread, as a UI would */
    pthread_create(&r->canceller, NULL, cancel_main, r);
  }
}

static long on_write(void *arg, uint64_t off, const void *buf, size_t len) {
  struct run *r = arg;
  if (off != r->cb_next)
    r->cb_disorder = 1;
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(1, (const char *)buf + done, len - done);
    if (n <= 0)
      return -1;
    done += (size_t)n;
  }
  r->cb_next = off + len;
  return (long)len;
}

/* A callback that pushes back: it takes at most cb_max bytes, and the main thread offers the
 * rest again with mhttp_xfer_pause(x, 0), as a program whose buffer drained would. */
static long on_write_slow(void *arg, uint64_t off, const void *buf, size_t len) {
  struct run *r = arg;
  return on_write(arg, off, buf, len < (size_t)r->cb_max ? len : (size_t)r->cb_max);
}

static uint64_t done_of(mhttp_xfer *x) {
  mhttp_xfer_stats st = {.size = sizeof st};
  mhttp_xfer_stats_get(x, &st);
  return st.done;
}

/* Threaded session, main thread: pauses once for a second at pause_at bytes (nothing may be
 * delivered meanwhile) and un-pauses a pushing-back callback every millisecond. */
static void run_threaded(mhttp_session *s, mhttp_xfer *x, struct run *r) {
  if (!r->pause_at && !r->cb_max) {
    mhttp_session_wait(s, 120000);
    return;
  }
  for (int i = 0; i < 240000 && mhttp_xfer_result(x) == MHTTP_E_BUSY; i++) {
    if (r->pause_at && done_of(x) >= r->pause_at) {
      r->pause_at = 0;
      if (mhttp_xfer_pause(x, 1) == MHTTP_OK) {
        uint64_t d0 = done_of(x);
        sleep(1);
        r->paused_delta = done_of(x) - d0;
        mhttp_xfer_pause(x, 0);
      }
    }
    if (r->cb_max)
      mhttp_xfer_pause(x, 0);
    usleep(500);
  }
  mhttp_session_wait(s, 120000);
}

/* The caller's own epoll loop around the session's descriptor. */
static int run_embedded(mhttp_session *s, mhttp_xfer *x) {
  int ep = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event e = {.events = EPOLLIN};
  if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, mhttp_get_fd(s), &e) < 0)
    return -1;
  for (int turns = 0; mhttp_xfer_result(x) == MHTTP_E_BUSY && turns < 10000000; turns++) {
    struct epoll_event got;
    int t = mhttp_get_timeout(s);
    (void)epoll_wait(ep, &got, 1, t < 0 || t > 1000 ? 1000 : t);
    mhttp_perform(s);
  }
  close(ep);
  return 0;
}

/* paths= (bytes per interface, as before paths were servers) and servers= (each path:
 * IFACE/ADDRESS/MIRROR:BYTES). */
static void report(mhttp_xfer *x, struct run *r) {
  mhttp_xfer_stats st = {.size = sizeof st};
  mhttp_xfer_stats_get(x, &st);
  mhttp_path_stats ps[16];
  for (int i = 0; i < 16; i++)
    ps[i].size = sizeof ps[i];
  unsigned n = 0;
  mhttp_xfer_path_stats(x, ps, 16, &n);
  if (n > 16)
    n = 16;
  fprintf(stderr,
          "code=%d msg=\"%s\" status=%d total=%" PRIu64 " done=%" PRIu64 " fetched=%" PRIu64 " resumed=%" PRIu64
          " split=%d disorder=%d paused_delta=%" PRIu64 " events=%s paths=",
          (int)mhttp_xfer_result(x), mhttp_xfer_errmsg(x), st.http_status, st.total, st.done, st.fetched, st.resumed,
          st.split, r->cb_disorder, r->paused_delta, r->events);
  char ifs[16][16];
  uint64_t sum[16];
  unsigned nif = 0;
  for (unsigned i = 0; i < n; i++) {
    unsigned k = 0;
    while (k < nif && strcmp(ifs[k], ps[i].iface))
      k++;
    if (k == nif)
      snprintf(ifs[nif], sizeof ifs[0], "%s", ps[i].iface), sum[nif++] = 0;
    sum[k] += ps[i].bytes;
  }
  for (unsigned k = 0; k < nif; k++)
    fprintf(stderr, "%s%s:%" PRIu64, k ? "," : "", ifs[k], sum[k]);
  fprintf(stderr, " servers=");
  for (unsigned i = 0; i < n; i++)
    fprintf(stderr, "%s%s/%s/%u:%" PRIu64, i ? "," : "", ps[i].iface, ps[i].replica, ps[i].mirror, ps[i].bytes);
  fprintf(stderr, "\n");
}

/* api_get thread|embed file:PATH|fd|fdnb|cb URL [cancel=BYTES] [pause=BYTES] [cbmax=BYTES] [mirror=URL]
 *         [replica=ADDR[@IFACE]] [OPT=VALUE...] */
int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: api_get thread|embed file:PATH|fd|fdnb|cb URL [checksum=HEX] [cancel=BYTES]\n");
    return 2;
  }
  struct run r = {0};
  mhttp_session *s;
  mhttp_xfer *x;
  int embed = !strcmp(argv[1], "embed");
  if (mhttp_session_new(embed ? 0 : MHTTP_SESSION_THREAD, &s) != MHTTP_OK)
    return 3;
  mhttp_code c = mhttp_xfer_new(s, argv[3], &x);
  if (c != MHTTP_OK) {
    fprintf(stderr, "code=%d msg=\"%s\"\n", (int)c, mhttp_strerror(c));
    return 1;
  }
  r.x = x;
  for (int i = 4; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (!strncmp(argv[i], "cancel=", 7))
      r.cancel_after = strtoull(argv[i] + 7, NULL, 10);
    else if (!strncmp(argv[i], "pause=", 6))
      r.pause_at = strtoull(argv[i] + 6, NULL, 10);
    else if (!strncmp(argv[i], "cbmax=", 6))
      r.cb_max = strtol(argv[i] + 6, NULL, 10);
    else if (!strncmp(argv[i], "mirror=", 7) && (c = mhttp_xfer_add_mirror(x, argv[i] + 7)) != MHTTP_OK)
      return fprintf(stderr, "mirror %s refused: %s\n", argv[i] + 7, mhttp_strerror(c)), 2;
    else if (!strncmp(argv[i], "mirror=", 7))
      continue;
    else if (!strncmp(argv[i], "replica=", 8)) {
      char *at = strchr(argv[i] + 8, '@');
      if (at)
        *at = 0;
      if ((c = mhttp_xfer_add_replica(x, argv[i] + 8, at ? at + 1 : NULL)) != MHTTP_OK)
        return fprintf(stderr, "replica %s refused: %s\n", argv[i] + 8, mhttp_strerror(c)), 2;
    } else if (eq && (*eq = 0, mhttp_xfer_setopt(x, argv[i], eq + 1)) != MHTTP_OK)
      return fprintf(stderr, "option %s refused\n", argv[i]), 2;
  }
  if (!strncmp(argv[2], "file:", 5))
    c = mhttp_xfer_setopt(x, "output", argv[2] + 5);
  else if (!strcmp(argv[2], "fd"))
    c = mhttp_xfer_set_fd(x, 1);
  else if (!strcmp(argv[2], "fdnb")) /* a non-blocking fd: a full pipe pushes back (EAGAIN) */
    c = fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK) < 0 ? MHTTP_E_SYSTEM : mhttp_xfer_set_fd(x, 1);
  else
    c = mhttp_xfer_set_write_cb(x, r.cb_max ? on_write_slow : on_write, 1, &r);
  mhttp_xfer_setopt(x, "progress-interval", "50");
  mhttp_xfer_set_event_cb(x, on_event, &r);
  if (c != MHTTP_OK || (c = mhttp_xfer_start(x)) != MHTTP_OK) {
    fprintf(stderr, "start: %s\n", mhttp_strerror(c));
    return 1;
  }
  if (embed)
    run_embedded(s, x);
  else
    run_threaded(s, x, &r);
  if (r.cancel_started)
    pthread_join(r.canceller, NULL);
  report(x, &r);
  int rc = (int)mhttp_xfer_result(x);
  mhttp_xfer_free(x);
  mhttp_session_free(s);
  return rc;
}
