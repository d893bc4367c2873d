/* Runs the downloads through include/mhttp.h, one URL after another as curl does: session and transfer options by name, each body to its file or stdout, events to the display, the session embedded in a poll loop that a signal can interrupt. */
#include "download.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "display.h"
#include "exitcode.h"
#include "preflight.h"
#include "progress.h"
#include "url.h"

static volatile sig_atomic_t cli__signal;

static void cli__on_signal(int sig) { cli__signal = sig; }

static unsigned cli__stats_lines; /* --stats lines written by this call */

struct cli__run {
  const struct cli_opts *o;
  const struct cli_url *u;
  struct cli_display display;
  int guard;          /* stdout is a terminal nobody asked for: refuse a binary body */
  int refused_binary; /* the guard refused it */
  unsigned warned;    /* bit k: mirror k's drop was told (bit 0: the URL's own replicas) */
};

/* The library's message for a cause, or its name when it gave none. */
static void cli__cause_of(const mhttp_event *ev, struct cli_cause *c) {
  memset(c, 0, sizeof *c);
  snprintf(c->iface, sizeof c->iface, "%s", ev->iface ? ev->iface : "");
  snprintf(c->replica, sizeof c->replica, "%s", ev->replica ? ev->replica : "");
  c->mirror = ev->mirror;
  c->exit = cli_exit_code(ev->code);
  snprintf(c->message, sizeof c->message, "%s", ev->message && *ev->message ? ev->message : mhttp_strerror(ev->code));
}

/* A mirror or replica (or path) left the running transfer for a cause: recorded for --stats and
 * told on stderr once per mirror (once for all of the URL's replicas) unless -q/-s. */
static void cli__dropped(struct cli__run *r, const struct cli_cause *c) {
  struct cli_display *d = &r->display;
  if (d->ndropped < CLI_MAX_CAUSES)
    d->dropped[d->ndropped++] = *c;
  unsigned bit = c->mirror < 32 ? 1u << c->mirror : 0;
  if (r->o->quiet || (r->warned & bit))
    return;
  r->warned |= bit;
  char line[2048], on[64] = "";
  if (c->iface[0])
    snprintf(on, sizeof on, " (over %s)", c->iface);
  if (c->mirror && c->mirror <= r->u->nmirrors)
    snprintf(line, sizeof line, "mhttp: warning: mirror %.1024s dropped%s: %s", r->u->mirrors[c->mirror - 1], on,
             c->message);
  else
    snprintf(line, sizeof line, "mhttp: warning: server %s dropped%s: %s", c->replica[0] ? c->replica : "-", on,
             c->message);
  cli_display_note(d, line);
}

static void cli__on_event(const mhttp_event *ev, void *arg) {
  struct cli__run *r = arg;
  static const char *names[] = {
      [MHTTP_EV_START] = "start",       [MHTTP_EV_PATH_UP] = "path-up",   [MHTTP_EV_PATH_DOWN] = "path-down",
      [MHTTP_EV_PROGRESS] = "progress", [MHTTP_EV_COMPLETE] = "complete", [MHTTP_EV_ERROR] = "error"};
  const char *name = (unsigned)ev->type < sizeof names / sizeof names[0] && names[ev->type] ? names[ev->type] : "event";
  struct cli_cause cause;
  /* a path-down with the transfer's own failure is told by the error that follows */
  int has_cause = ev->type == MHTTP_EV_PATH_DOWN && ev->code != MHTTP_OK && mhttp_xfer_result(ev->xfer) == MHTTP_E_BUSY;
  if (has_cause) {
    cli__cause_of(ev, &cause);
    cli__dropped(r, &cause);
  }
  int force = ev->type != MHTTP_EV_PROGRESS; /* paths coming and going are shown at once */
  mhttp_xfer_stats xs = {.size = sizeof xs};
  if (ev->type == MHTTP_EV_START && !r->o->quiet && !mhttp_xfer_stats_get(ev->xfer, &xs) && xs.restarted)
    fprintf(stderr, "mhttp: the server does not continue the partial download (the file changed, or it takes no "
                    "ranges): fetching it whole\n");
  cli_display_event(&r->display, ev->xfer, name, has_cause ? &cause : NULL, force);
}

/* stdout is a terminal: the body goes through here so a binary one is refused, as curl does. */
static long cli__to_terminal(void *arg, uint64_t off, const void *buf, size_t len) {
  struct cli__run *r = arg;
  if (off == 0 && len && memchr(buf, 0, len)) {
    r->refused_binary = 1;
    return -1;
  }
  for (size_t done = 0; done < len;) {
    ssize_t n = write(1, (const char *)buf + done, len - done);
    if (n < 0 && errno != EINTR)
      return -1;
    done += n > 0 ? (size_t)n : 0;
  }
  return (long)len;
}

static int cli__fail_code(const struct cli_opts *o, const char *url, mhttp_code rc, const char *detail);

/* An option the library refused, in curl's words; 2, or curl's own code for an interface that
 * does not exist (45) and a CA file that cannot be read (77), with the library's reason (why). */
static int cli__bad_option(const struct cli_opts *o, const char *name, const char *value, mhttp_code rc,
                           const char *why) {
  if (rc == MHTTP_E_INTERFACE || rc == MHTTP_E_CACERT)
    return cli__fail_code(o, "", rc, why);
  if (o->silent)
    return 2;
  if (rc == MHTTP_E_OPTION)
    fprintf(stderr, "mhttp: option --%s: the value '%s' is not accepted\n", name, value);
  else
    fprintf(stderr, "mhttp: option --%s: %s\n", name, mhttp_strerror(rc));
  fprintf(stderr, "mhttp: try 'mhttp --help' for more information\n");
  return 2;
}

/* curl's message for a failure of url (unless -s); its exit code. */
static int cli__fail(const struct cli_opts *o, const char *url, struct cli_failure *f) {
  char host[256], msg[1024];
  cli_url_host(url, host, sizeof host);
  f->host = host;
  f->port = cli_url_port(url);
  int code = cli_exit_message(f, msg, sizeof msg);
  if (!o->silent)
    fprintf(stderr, "%s\n", msg);
  return code;
}

static int cli__fail_code(const struct cli_opts *o, const char *url, mhttp_code rc, const char *detail) {
  struct cli_failure f = {.code = rc, .detail = detail, .total = UINT64_MAX};
  return cli__fail(o, url, &f);
}

/* A mirror the library refused: curl's words, the mirror, and why when it is the scheme. */
static int cli__bad_mirror(const struct cli_opts *o, const struct cli_url *u, const char *mirror, mhttp_code rc) {
  char why[1200];
  if (rc == MHTTP_E_URL && cli_url_scheme_is(u->url, "https") && cli_url_scheme_is(mirror, "http"))
    snprintf(why, sizeof why,
             "mirror %.1024s: plain http for an https URL is refused (its bytes would not be "
             "authenticated)",
             mirror);
  else
    snprintf(why, sizeof why, "mirror %.1024s", mirror);
  return cli__fail_code(o, mirror, rc, why);
}

/* The API options at one level, in argv order; 0 or the exit code (the message printed). */
static int cli__setopts(const struct cli_opts *o, mhttp_session *s, mhttp_xfer *x) {
  for (unsigned i = 0; i < o->napi; i++) {
    const struct cli_apiopt *a = &o->api[i];
    if ((a->level == CLI_SESSION) != (x == NULL))
      continue;
    mhttp_code rc = x ? mhttp_xfer_setopt(x, a->name, a->value) : mhttp_session_setopt(s, a->name, a->value);
    if (rc)
      return cli__bad_option(o, a->name, a->value, rc, x ? mhttp_xfer_errmsg(x) : mhttp_session_errmsg(s));
  }
  return 0;
}

/* Where the body goes: its file (resumed with -c), stdout, or stdout through the guard. */
static mhttp_code cli__destination(struct cli__run *r, mhttp_xfer *x) {
  const struct cli_url *u = r->u;
  mhttp_code rc;
  if (u->output) {
    if ((rc = mhttp_xfer_setopt(x, "output", u->output)))
      return rc;
    return r->o->resume ? mhttp_xfer_setopt(x, "continue", "1") : MHTTP_OK;
  }
  r->guard = !u->to_stdout && isatty(1);
  return r->guard ? mhttp_xfer_set_write_cb(x, cli__to_terminal, 1, r) : mhttp_xfer_set_fd(x, 1);
}

/* Makes the transfer of r->u with every option and starts it; 0 or an exit code (the message
 * printed). */
static int cli__setup(mhttp_session *s, struct cli__run *r, mhttp_xfer **out) {
  const struct cli_opts *o = r->o;
  const struct cli_url *u = r->u;
  mhttp_code rc;
  if ((rc = mhttp_xfer_new(s, u->url, out)))
    return cli__fail_code(o, u->url, rc, u->url);
  for (unsigned i = 0; i < u->nmirrors; i++)
    if ((rc = mhttp_xfer_add_mirror(*out, u->mirrors[i])))
      return cli__bad_mirror(o, u, u->mirrors[i], rc);
  int code = cli__setopts(o, s, *out);
  if (code)
    return code;
  if ((rc = cli__destination(r, *out)))
    return cli__bad_option(o, "output", u->output ? u->output : "-", rc, mhttp_xfer_errmsg(*out));
  if ((rc = mhttp_xfer_setopt(*out, "progress-interval", "200")) ||
      (rc = mhttp_xfer_set_event_cb(*out, cli__on_event, r)) || (rc = mhttp_xfer_start(*out)))
    return cli__fail_code(o, u->url, rc, NULL);
  return 0;
}

/* Runs the session's loop until x ends; a SIGINT or SIGTERM cancels it (the resume file stays). */
static void cli__loop(mhttp_session *s, mhttp_xfer *x) {
  int fd = mhttp_get_fd(s);
  while (mhttp_xfer_result(x) == MHTTP_E_BUSY) {
    if (cli__signal) {
      mhttp_xfer_cancel(x);
      cli__signal = cli__signal < 0 ? cli__signal : -cli__signal; /* cancel once, keep which */
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int t = mhttp_get_timeout(s);
    if (t < 0 || t > (int)CLI_PROGRESS_MIN_MS)
      t = CLI_PROGRESS_MIN_MS; /* bounded: a signal between the check and poll waits no longer */
    if (poll(&p, 1, t) < 0 && errno != EINTR)
      break;
    mhttp_perform(s);
  }
}

/* --stats: one JSON line per URL (the file truncated by the first line). */
static int cli__write_stats(const struct cli__run *r, const mhttp_xfer *x, const char *event) {
  static char json[16384];
  size_t len = cli_display_json(&r->display, x, event, NULL, json, sizeof json);
  FILE *f = fopen(r->o->stats, cli__stats_lines++ ? "a" : "w");
  if (!f || len >= sizeof json || fprintf(f, "%s\n", json) < 0 || fclose(f) != 0) {
    if (!r->o->silent)
      fprintf(stderr, "mhttp: --stats %s: %s\n", r->o->stats, strerror(errno));
    return -1;
  }
  return 0;
}

/* curl's refusal of a binary body on a terminal. */
static void cli__binary_warning(void) {
  fputs("mhttp: warning: Binary output can mess up your terminal. Use \"--output -\" to tell\n"
        "mhttp: warning: mhttp to output it to your terminal anyway, or consider \"--output\n"
        "mhttp: warning: <FILE>\" to save to a file.\n",
        stderr);
}

/* The transfer's outcome: the message and the exit code; silent when a signal ended it. */
static int cli__finish(struct cli__run *r, mhttp_xfer *x) {
  mhttp_code rc = mhttp_xfer_result(x);
  cli_display_end(&r->display, x, rc == MHTTP_OK);
  if (r->o->stats && cli__write_stats(r, x, rc == MHTTP_OK ? "complete" : "error") < 0 && rc == MHTTP_OK)
    return 23;
  if (rc == MHTTP_OK || cli__signal)
    return 0;
  if (r->refused_binary) {
    if (!r->o->silent)
      cli__binary_warning();
    return 23;
  }
  mhttp_xfer_stats xs = {.size = sizeof xs};
  mhttp_xfer_stats_get(x, &xs);
  struct cli_failure f = {.code = rc,
                          .http_status = xs.http_status,
                          .detail = mhttp_xfer_errmsg(x),
                          .elapsed = xs.elapsed,
                          .received = xs.done - xs.resumed,
                          .total = xs.total};
  return cli__fail(r->o, r->u->url, &f);
}

/* One URL from start to end; its exit code. */
static int cli__one(const struct cli_opts *o, const struct cli_url *u, mhttp_session *s) {
  struct cli__run r = {.o = o, .u = u};
  cli_display_init(&r.display, !o->quiet && o->progress == CLI_PROGRESS_BAR, o->progress_json);
  mhttp_xfer *x = NULL;
  int code = cli__setup(s, &r, &x);
  if (!code) {
    cli__loop(s, x);
    code = cli__finish(&r, x);
  }
  mhttp_xfer_free(x);
  return code;
}

/* Every URL in turn; the exit code is the last one's (curl's); a bad option stops at once. */
static int cli__all(const struct cli_opts *o) {
  mhttp_session *s = NULL;
  mhttp_code rc = mhttp_session_new(0, &s);
  if (rc)
    return cli__fail_code(o, o->urls[0].url, rc, NULL);
  int code = cli__setopts(o, s, NULL);
  if (!code)
    for (unsigned i = 0; i < o->nurls && !cli__signal; i++)
      if ((code = cli__one(o, &o->urls[i], s)) == 2)
        break;
  mhttp_session_free(s);
  return code;
}

int cli_download(const struct cli_opts *o) {
  cli__stats_lines = 0;
  int code = cli_preflight(o);
  if (code)
    return code;
  struct sigaction sa = {.sa_handler = cli__on_signal}, old_int, old_term, ign = {.sa_handler = SIG_IGN}, old_pipe;
  sigaction(SIGINT, &sa, &old_int); /* no SA_RESTART */
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGPIPE, &ign, &old_pipe); /* a closed stdout is a write error (23), as in curl */
  code = cli__all(o);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  sigaction(SIGPIPE, &old_pipe, NULL);
  if (cli__signal) { /* silent, as curl: die of it, as the caller expects */
    int sig = cli__signal < 0 ? -cli__signal : cli__signal;
    raise(sig);
    return 128 + sig; /* the signal was ignored when we started (a background job's SIGINT) */
  }
  return code;
}
