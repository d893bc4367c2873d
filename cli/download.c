/* Runs one download through include/mhttp.h: session and transfer options by name, the body to a file or stdout, events to the display, the session embedded in a poll loop that a signal can interrupt. */
#include "download.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "display.h"
#include "exitcode.h"
#include "progress.h"
#include "statsjson.h"

static volatile sig_atomic_t cli__signal;

static void cli__on_signal(int sig) { cli__signal = sig; }

struct cli__run {
  const struct cli_opts *o;
  struct cli_display display;
};

static void cli__on_event(const mhttp_event *ev, void *arg) {
  struct cli__run *r = arg;
  static const char *names[] = {[MHTTP_EV_START] = "start", [MHTTP_EV_PATH_UP] = "path-up",
                                [MHTTP_EV_PATH_DOWN] = "path-down", [MHTTP_EV_PROGRESS] = "progress",
                                [MHTTP_EV_COMPLETE] = "complete", [MHTTP_EV_ERROR] = "error"};
  const char *name = (unsigned)ev->type < sizeof names / sizeof names[0] && names[ev->type] ? names[ev->type] : "event";
  int force = ev->type != MHTTP_EV_PROGRESS;  /* paths coming and going are shown at once */
  mhttp_xfer_stats xs = {.size = sizeof xs};
  if (ev->type == MHTTP_EV_START && !r->o->quiet && !mhttp_xfer_stats_get(ev->xfer, &xs) && xs.restarted)
    fprintf(stderr, "mhttp: the server does not continue the partial download (the file changed, or it takes no "
            "ranges): fetching it whole\n");
  cli_display_event(&r->display, ev->xfer, name, force);
}

static int cli__fail(const char *url, mhttp_code rc, int status, const char *detail);

/* An option the library refused, in curl's words; 2, or curl's own code for an interface that
 * does not exist (45) and a CA file that cannot be read (77), with the library's reason. */
static int cli__bad_option(const struct cli_apiopt *a, mhttp_code rc, const char *why) {
  if (rc == MHTTP_E_INTERFACE || rc == MHTTP_E_CACERT)
    return cli__fail("", rc, 0, why);
  if (rc == MHTTP_E_OPTION)
    fprintf(stderr, "mhttp: option --%s: the value '%s' is not accepted\n", a->name, a->value);
  else
    fprintf(stderr, "mhttp: option --%s: %s\n", a->name, mhttp_strerror(rc));
  fprintf(stderr, "mhttp: try 'mhttp --help' for more information\n");
  return 2;
}

static int cli__fail(const char *url, mhttp_code rc, int status, const char *detail) {
  char host[256], msg[1024];
  cli_url_host(url, host, sizeof host);
  int code = cli_exit_message(rc, host, status, detail, msg, sizeof msg);
  fprintf(stderr, "%s\n", msg);
  return code;
}

/* A mirror the library refused: curl's words, the mirror, and why when it is the scheme. */
static int cli__bad_mirror(const struct cli_opts *o, const char *mirror, mhttp_code rc) {
  char why[1200];
  if (rc == MHTTP_E_URL && !strncasecmp(o->url, "https://", 8) && !strncasecmp(mirror, "http://", 7))
    snprintf(why, sizeof why, "mirror %.1024s: plain http for an https URL is refused (its bytes would not be "
             "authenticated)", mirror);
  else
    snprintf(why, sizeof why, "mirror %.1024s", mirror);
  return cli__fail(mirror, rc, 0, why);
}

/* Makes the transfer with every option; 0 or an exit code (the message printed). */
static int cli__setup(mhttp_session *s, struct cli__run *r, mhttp_xfer **out) {
  const struct cli_opts *o = r->o;
  mhttp_code rc;
  for (unsigned i = 0; i < o->napi; i++)
    if (o->api[i].level == CLI_SESSION && (rc = mhttp_session_setopt(s, o->api[i].name, o->api[i].value)))
      return cli__bad_option(&o->api[i], rc, mhttp_session_errmsg(s));
  if ((rc = mhttp_xfer_new(s, o->url, out)))
    return cli__fail(o->url, rc, 0, o->url);
  for (unsigned i = 0; i < o->nmirrors; i++)
    if ((rc = mhttp_xfer_add_mirror(*out, o->mirrors[i])))
      return cli__bad_mirror(o, o->mirrors[i], rc);
  for (unsigned i = 0; i < o->napi; i++)
    if (o->api[i].level == CLI_XFER && (rc = mhttp_xfer_setopt(*out, o->api[i].name, o->api[i].value)))
      return cli__bad_option(&o->api[i], rc, mhttp_xfer_errmsg(*out));
  if ((rc = mhttp_xfer_setopt(*out, "progress-interval", "200")) ||
      (!o->output && (rc = mhttp_xfer_set_fd(*out, 1))) ||
      (rc = mhttp_xfer_set_event_cb(*out, cli__on_event, r)) || (rc = mhttp_xfer_start(*out)))
    return cli__fail(o->url, rc, 0, NULL);
  return 0;
}

/* Runs the session's loop until x ends; a SIGINT or SIGTERM cancels it (the resume file stays). */
static void cli__loop(mhttp_session *s, mhttp_xfer *x) {
  int fd = mhttp_get_fd(s);
  while (mhttp_xfer_result(x) == MHTTP_E_BUSY) {
    if (cli__signal) {
      mhttp_xfer_cancel(x);
      cli__signal = cli__signal < 0 ? cli__signal : -cli__signal;  /* cancel once, keep which */
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int t = mhttp_get_timeout(s);
    if (t < 0 || t > (int)CLI_PROGRESS_MIN_MS)
      t = CLI_PROGRESS_MIN_MS;  /* bounded: a signal between the check and poll waits no longer */
    if (poll(&p, 1, t) < 0 && errno != EINTR)
      break;
    mhttp_perform(s);
  }
}

static int cli__write_stats(const char *path, const mhttp_xfer *x, const char *event) {
  mhttp_xfer_stats xs;
  mhttp_path_stats ps[16];
  unsigned np = cli_display_snapshot(x, &xs, ps);
  char json[8192];
  size_t len = cli_stats_json(event, &xs, ps, np, json, sizeof json);
  FILE *f = fopen(path, "w");
  if (!f || len >= sizeof json || fprintf(f, "%s\n", json) < 0 || fclose(f) != 0) {
    fprintf(stderr, "mhttp: --stats %s: %s\n", path, strerror(errno));
    return -1;
  }
  return 0;
}

/* The transfer's outcome: the message and the exit code. */
static int cli__finish(struct cli__run *r, mhttp_xfer *x) {
  mhttp_code rc = mhttp_xfer_result(x);
  cli_display_end(&r->display, x, rc == MHTTP_OK);
  if (r->o->stats && cli__write_stats(r->o->stats, x, rc == MHTTP_OK ? "complete" : "error") < 0 && rc == MHTTP_OK)
    return 23;
  if (rc == MHTTP_OK)
    return 0;
  mhttp_xfer_stats xs = {.size = sizeof xs};
  mhttp_xfer_stats_get(x, &xs);
  return cli__fail(r->o->url, rc, xs.http_status, mhttp_xfer_errmsg(x));
}

int cli_download(const struct cli_opts *o) {
  struct cli__run r = {.o = o};
  cli_display_init(&r.display, !o->quiet && o->progress == CLI_PROGRESS_BAR, o->progress_json);
  mhttp_session *s = NULL;
  mhttp_xfer *x = NULL;
  mhttp_code rc = mhttp_session_new(0, &s);
  if (rc)
    return cli__fail(o->url, rc, 0, NULL);
  struct sigaction sa = {.sa_handler = cli__on_signal}, old_int, old_term;  /* no SA_RESTART */
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  int code = cli__setup(s, &r, &x);
  if (!code) {
    cli__loop(s, x);
    code = cli__finish(&r, x);
  }
  mhttp_xfer_free(x);
  mhttp_session_free(s);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  if (cli__signal)
    raise(cli__signal < 0 ? -cli__signal : cli__signal);  /* die of it, as the caller expects */
  return code;
}
