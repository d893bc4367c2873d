/* Embeds a libmhttp session in the program's own epoll loop (mhttp_get_fd, mhttp_get_timeout, mhttp_perform) next to the program's other descriptors: here stdin, where a line "q" cancels. */
#include <mhttp.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* usage: epoll_loop URL FILE; exit 0 when every byte arrived, 1 otherwise */

static int run(mhttp_session *s, mhttp_xfer *x) {
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0)
    return -1;
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = mhttp_get_fd(s)};
  epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev);
  struct epoll_event in = {.events = EPOLLIN, .data.fd = 0};
  int watch_stdin = epoll_ctl(ep, EPOLL_CTL_ADD, 0, &in) == 0; /* fails for a file: fine */
  while (mhttp_xfer_result(x) == MHTTP_E_BUSY) {
    struct epoll_event got[2];
    int n = epoll_wait(ep, got, 2, mhttp_get_timeout(s));
    for (int i = 0; i < n; i++) {
      if (got[i].data.fd != 0 || !watch_stdin)
        continue;
      char line[64];
      ssize_t r = read(0, line, sizeof line - 1);
      if (r <= 0) {
        epoll_ctl(ep, EPOLL_CTL_DEL, 0, NULL); /* end of input: stop watching it */
        watch_stdin = 0;
      } else if (line[0] == 'q') {
        mhttp_xfer_cancel(x);
      }
    }
    mhttp_perform(s); /* on readiness and on timeout alike: it never blocks */
  }
  close(ep);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s URL FILE   (type q and Enter to cancel)\n", argv[0]);
    return 2;
  }
  mhttp_session *s = NULL;
  mhttp_xfer *x = NULL;
  mhttp_code rc = mhttp_session_new(0, &s); /* 0: embedded, the loop is ours */
  if (rc == MHTTP_OK)
    rc = mhttp_xfer_new(s, argv[1], &x);
  if (rc == MHTTP_OK)
    rc = mhttp_xfer_setopt(x, "output", argv[2]);
  if (rc == MHTTP_OK)
    rc = mhttp_xfer_start(x);
  if (rc == MHTTP_OK && run(s, x) < 0)
    rc = MHTTP_E_SYSTEM;
  if (rc == MHTTP_OK)
    rc = mhttp_xfer_result(x);
  if (rc != MHTTP_OK) {
    const char *msg = x ? mhttp_xfer_errmsg(x) : ""; /* the cause in full; the code's words when none */
    fprintf(stderr, "%s: %s\n", argv[1], *msg ? msg : mhttp_strerror(rc));
  }
  mhttp_xfer_free(x);
  mhttp_session_free(s);
  return rc == MHTTP_OK ? 0 : 1;
}
