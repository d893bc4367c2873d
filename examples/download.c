/* Downloads a URL to a file through libmhttp, printing its progress from the event callback: the smallest complete use of the API. */
#include <inttypes.h>
#include <mhttp.h>
#include <stdio.h>

/* usage: download URL FILE [MIRROR...]; exit 0 when every byte arrived, 1 otherwise */

static void on_event(const mhttp_event *ev, void *arg) {
  (void)arg;
  switch (ev->type) {
  case MHTTP_EV_PATH_UP:
    fprintf(stderr, "path up: %s -> %s%s\n", ev->iface, ev->replica, ev->mirror ? " (a mirror)" : "");
    break;
  case MHTTP_EV_PATH_DOWN:
    if (ev->code != MHTTP_OK) /* a mirror that disagreed or did not resolve: the others go on */
      fprintf(stderr, "path down: %s\n", ev->message ? ev->message : mhttp_strerror(ev->code));
    break;
  case MHTTP_EV_PROGRESS:
    if (ev->total != UINT64_MAX)
      fprintf(stderr, "\r%" PRIu64 " / %" PRIu64 " bytes", ev->done, ev->total);
    else
      fprintf(stderr, "\r%" PRIu64 " bytes", ev->done);
    break;
  case MHTTP_EV_COMPLETE: fprintf(stderr, "\rdone: %" PRIu64 " bytes\n", ev->done); break;
  case MHTTP_EV_ERROR:
    /* the message names the cause in full; the code's words when there is none */
    fprintf(stderr, "\nfailed: %s\n", ev->message && *ev->message ? ev->message : mhttp_strerror(ev->code));
    break;
  default: break;
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s URL FILE [MIRROR...]\n", argv[0]);
    return 2;
  }
  mhttp_session *s = NULL;
  mhttp_xfer *x = NULL;
  /* the session runs its loop on its own thread; this thread only waits */
  mhttp_code rc = mhttp_session_new(MHTTP_SESSION_THREAD, &s);
  if (rc == MHTTP_OK)
    rc = mhttp_xfer_new(s, argv[1], &x);
  for (int i = 3; rc == MHTTP_OK && i < argc; i++)
    rc = mhttp_xfer_add_mirror(x, argv[i]);
  if (rc == MHTTP_OK)
    rc = mhttp_xfer_setopt(x, "output", argv[2]);
  if (rc == MHTTP_OK)
    rc = mhttp_xfer_set_event_cb(x, on_event, NULL);
  if (rc == MHTTP_OK)
    rc = mhttp_xfer_start(x);
  if (rc == MHTTP_OK)
    rc = mhttp_session_wait(s, -1);
  if (rc == MHTTP_OK)
    rc = mhttp_xfer_result(x);
  else
    fprintf(stderr, "%s\n", mhttp_strerror(rc));
  mhttp_xfer_free(x);
  mhttp_session_free(s);
  return rc == MHTTP_OK ? 0 : 1;
}
