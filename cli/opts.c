/* Parses the mhttp command line into a mode, the command's own settings, the URLs paired with their outputs as curl pairs them, and the API options it passes through by name (include/mhttp.h's table). */
#include "opts.h"

#include <stdio.h>
#include <string.h>

#include "url.h"

/* What an option does once its value is known. */
enum cli__kind {
  CLI__API,      /* passed to the API under `api` at `level` */
  CLI__API_FLAG, /* passed to the API as "1" (no value on the command line) */
  CLI__CACERT,   /* passed to the API; the command also checks the file is readable */
  CLI__OUTPUT,   /* -o: the next URL's output */
  CLI__REMOTE,   /* -O */
  CLI__MIRROR,   /* --mirror: another source of the URL before it */
  CLI__CONTINUE, /* -c: passed as "continue" to the URLs written to files */
  CLI__QUIET,
  CLI__SILENT,     /* -s: curl's silent mode */
  CLI__SHOW_ERROR, /* -S: errors shown in silent mode */
  CLI__NOOP,       /* curl options whose behaviour is always on: -L, -f */
  CLI__PROGRESS,
  CLI__PJSON,
  CLI__STATS,
  CLI__HELP,
  CLI__VERSION,
};

struct cli__opt {
  char shortopt; /* 0: long only */
  const char *longopt;
  int takes_value;
  enum cli__kind kind;
  enum cli_level level;
};

/* The long names of API options are the API's names (one concept, one name). */
static const struct cli__opt cli__table[] = {
    {'o', "output", 1, CLI__OUTPUT, 0},
    {'O', "remote-name", 0, CLI__REMOTE, 0},
    {0, "mirror", 1, CLI__MIRROR, 0},
    {'c', "continue", 0, CLI__CONTINUE, 0},
    {'q', "quiet", 0, CLI__QUIET, 0},
    {'s', "silent", 0, CLI__SILENT, 0},
    {'S', "show-error", 0, CLI__SHOW_ERROR, 0},
    {'L', "location", 0, CLI__NOOP, 0},
    {'f', "fail", 0, CLI__NOOP, 0},
    {'i', "interface", 1, CLI__API, CLI_SESSION},
    {0, "dns-server", 1, CLI__API, CLI_SESSION},
    {0, "policy", 1, CLI__API, CLI_SESSION},
    {0, "checksum", 1, CLI__API, CLI_XFER},
    {0, "cacert", 1, CLI__CACERT, CLI_XFER},
    {'k', "insecure", 0, CLI__API_FLAG, CLI_XFER},
    {0, "connect-timeout", 1, CLI__API, CLI_XFER},
    {'m', "max-time", 1, CLI__API, CLI_XFER},
    {0, "max-redirs", 1, CLI__API, CLI_XFER},
    {0, "limit-rate", 1, CLI__API, CLI_XFER},
    {'A', "user-agent", 1, CLI__API, CLI_XFER},
    {'H', "header", 1, CLI__API, CLI_XFER},
    {0, "stats", 1, CLI__STATS, 0},
    {0, "progress", 1, CLI__PROGRESS, 0},
    {0, "progress-json", 0, CLI__PJSON, 0},
    {'h', "help", 0, CLI__HELP, 0},
    {'V', "version", 0, CLI__VERSION, 0},
};
#define CLI__NOPTS (sizeof cli__table / sizeof cli__table[0])

/* The parse's state beyond *o: the outputs in the order given (paired with the URLs at the
 * end), the -s/-S flags, and the first option a sub-command cannot take. */
struct cli__state {
  struct cli_opts *o;
  struct {
    const char *file; /* NULL: -O */
  } outs[CLI_MAX_URLS];
  unsigned nouts, extra_outs, silent, show_error;
  const char *not_for_subcommand;
  char *err;
  size_t errlen;
};

static const struct cli__opt *cli__long(const char *name, size_t len) {
  for (size_t i = 0; i < CLI__NOPTS; i++)
    if (strlen(cli__table[i].longopt) == len && !strncmp(cli__table[i].longopt, name, len))
      return &cli__table[i];
  return NULL;
}

static const struct cli__opt *cli__short(char c) {
  for (size_t i = 0; i < CLI__NOPTS; i++)
    if (cli__table[i].shortopt == c)
      return &cli__table[i];
  return NULL;
}

static int cli__usage(struct cli__state *st, const char *fmt, const char *what) {
  snprintf(st->err, st->errlen, fmt, what);
  return 2;
}

static int cli__api(struct cli__state *st, enum cli_level level, const char *name, const char *value) {
  struct cli_opts *o = st->o;
  if (o->napi == CLI_MAX_APIOPTS)
    return cli__usage(st, "option --%s: given too many times", name);
  o->api[o->napi++] = (struct cli_apiopt){level, name, value};
  return 0;
}

/* How the command reads the URLs it is given: a scheme it does not fetch is read (and refused
 * later in curl's words, with the URL as typed), and a space too (the library refuses it). */
#define CLI__URL_READ (CURLU_NON_SUPPORT_SCHEME | CURLU_ALLOW_SPACE)

int cli_opts_lacks_scheme(const char *url) {
  /* Guessing, libcurl reads "a.test:8080/f" as a host and port, where without it "a.test:" would
   * be a scheme; a URL that reads only when guessing names none. */
  char *guessed = cli_url_part(url, CLI__URL_READ | CURLU_GUESS_SCHEME, CURLUPART_SCHEME, 0);
  char *named = cli_url_part(url, CLI__URL_READ, CURLUPART_SCHEME, 0);
  int lacks = guessed && !named;
  curl_free(guessed);
  curl_free(named);
  return lacks;
}

/* url as given, or with curl's default scheme put before it (in o->arena); NULL when it does
 * not fit. */
static const char *cli__with_scheme(struct cli_opts *o, const char *url) {
  if (!cli_opts_lacks_scheme(url))
    return url;
  int n = snprintf(o->arena + o->arena_len, sizeof o->arena - o->arena_len, "http://%s", url);
  if (n < 0 || (size_t)n >= sizeof o->arena - o->arena_len)
    return NULL;
  const char *p = o->arena + o->arena_len;
  o->arena_len += (size_t)n + 1;
  return p;
}

/* --mirror: for the URL given before it; before any URL, for the first one. */
static int cli__mirror(struct cli__state *st, const char *value) {
  struct cli_opts *o = st->o;
  struct cli_url *u = &o->urls[o->nurls ? o->nurls - 1 : 0];
  if (u->nmirrors == CLI_MAX_MIRRORS)
    return cli__usage(st, "too many mirrors for one URL (at most %s)", "16");
  const char *m = cli__with_scheme(o, value);
  if (!m)
    return cli__usage(st, "option --mirror: the URLs are too long (%s)", "16 KiB in all");
  u->mirrors[u->nmirrors++] = m;
  return 0;
}

static int cli__output(struct cli__state *st, const char *file) {
  if (st->nouts == CLI_MAX_URLS) {
    st->extra_outs++;
    return 0;
  }
  st->outs[st->nouts++].file = file;
  return 0;
}

static int cli__progress(struct cli__state *st, const char *value) {
  if (!strcmp(value, "bar"))
    st->o->progress = CLI_PROGRESS_BAR;
  else if (!strcmp(value, "none"))
    st->o->progress = CLI_PROGRESS_NONE;
  else
    return cli__usage(st, "option --progress: expected bar or none, not '%.60s'", value);
  return 0;
}

/* Applies one option with its value (NULL for a flag). */
static int cli__apply(struct cli__state *st, const struct cli__opt *d, const char *value) {
  struct cli_opts *o = st->o;
  if (!st->not_for_subcommand && strcmp(d->longopt, "interface"))
    st->not_for_subcommand = d->longopt;
  switch (d->kind) {
  case CLI__API: return cli__api(st, d->level, d->longopt, value);
  case CLI__API_FLAG: return cli__api(st, d->level, d->longopt, "1");
  case CLI__CACERT: o->cacert = value; return cli__api(st, d->level, d->longopt, value);
  case CLI__OUTPUT: return cli__output(st, value);
  case CLI__REMOTE: return cli__output(st, NULL);
  case CLI__MIRROR: return cli__mirror(st, value);
  case CLI__CONTINUE: o->resume = 1; return 0;
  case CLI__QUIET: o->quiet = 1; return 0;
  case CLI__SILENT: st->silent = 1; return 0;
  case CLI__SHOW_ERROR: st->show_error = 1; return 0;
  case CLI__NOOP: return 0;
  case CLI__PJSON: o->progress_json = 1; return 0;
  case CLI__STATS: o->stats = value; return 0;
  case CLI__HELP: o->mode = CLI_HELP; return 0;
  case CLI__VERSION: o->mode = CLI_VERSION; return 0;
  case CLI__PROGRESS: return cli__progress(st, value);
  }
  return 0;
}

/* "--name", "--name=value" or "--name value"; *i advances past a separate value. */
static int cli__long_arg(struct cli__state *st, int argc, char **argv, int *i) {
  const char *name = argv[*i] + 2, *eq = strchr(name, '=');
  size_t len = eq ? (size_t)(eq - name) : strlen(name);
  const struct cli__opt *d = cli__long(name, len);
  if (!d)
    return cli__usage(st, "option %.100s: is unknown", argv[*i]);
  if (!d->takes_value) {
    if (eq)
      return cli__usage(st, "option --%s: takes no value", d->longopt);
    return cli__apply(st, d, NULL);
  }
  const char *value = eq ? eq + 1 : NULL;
  if (!value) {
    if (*i + 1 >= argc)
      return cli__usage(st, "option --%s: requires parameter", d->longopt);
    value = argv[++*i];
  }
  return cli__apply(st, d, value);
}

/* "-kq", "-oFILE", "-o FILE": flags cluster; an option with a value ends the cluster. */
static int cli__short_arg(struct cli__state *st, int argc, char **argv, int *i) {
  for (const char *p = argv[*i] + 1; *p; p++) {
    const struct cli__opt *d = cli__short(*p);
    if (!d)
      return cli__usage(st, "option -%s: is unknown", (char[2]){*p, 0});
    if (!d->takes_value) {
      int rc = cli__apply(st, d, NULL);
      if (rc)
        return rc;
      continue;
    }
    const char *value = p[1] ? p + 1 : NULL;
    if (!value) {
      if (*i + 1 >= argc)
        return cli__usage(st, "option -%s: requires parameter", (char[2]){*p, 0});
      value = argv[++*i];
    }
    return cli__apply(st, d, value);
  }
  return 0;
}

static int cli__positional(struct cli__state *st, const char *arg) {
  struct cli_opts *o = st->o;
  if (o->nurls == CLI_MAX_URLS)
    return cli__usage(st, "too many URLs (at most %s in one call)", "32");
  const char *url = cli__with_scheme(o, arg);
  if (!url) {
    snprintf(st->err, st->errlen, "URL using bad/illegal format or missing URL: too long");
    return 3;
  }
  o->urls[o->nurls++].url = url;
  return 0;
}

/* `mhttp [-i IF]... run [--] CMD ...` and `mhttp [-i IF]... ifaces`: argv[at] is the word. */
static int cli__subcommand(struct cli__state *st, int argc, char **argv, int at) {
  struct cli_opts *o = st->o;
  if (st->not_for_subcommand) {
    snprintf(st->err, st->errlen, "option --%s: not for the '%s' sub-command (only -i is)", st->not_for_subcommand,
             argv[at]);
    return 2;
  }
  if (!strcmp(argv[at], "ifaces")) {
    o->mode = CLI_IFACES;
    if (argc > at + 1)
      return cli__usage(st, "ifaces: unexpected argument '%.100s'", argv[at + 1]);
    return 0;
  }
  o->mode = CLI_RUN;
  int first = at + 1;
  if (first < argc && !strcmp(argv[first], "--"))
    first++;
  if (first >= argc)
    return cli__usage(st, "%s: no command given (mhttp run [--] CMD [ARG...])", "run");
  o->run_argv = argv + first;
  return 0;
}

/* The n-th output goes to the n-th URL (curl's pairing); -O's name from its URL. */
static int cli__pair_outputs(struct cli__state *st) {
  struct cli_opts *o = st->o;
  for (unsigned i = 0; i < o->nurls && i < st->nouts; i++) {
    struct cli_url *u = &o->urls[i];
    const char *file = st->outs[i].file;
    if (file && !strcmp(file, "-")) {
      u->to_stdout = 1; /* curl's "-o -": stdout, even a terminal */
      continue;
    }
    int named = file ? 0 : cli_opts_remote_name(u->url, u->remote_buf, sizeof u->remote_buf);
    if (named == -2) { /* curl: "Failed to extract a sensible file name", then this */
      snprintf(st->err, st->errlen, "URL using bad/illegal format or missing URL: %.256s", u->url);
      return 3;
    }
    if (named < 0) {
      snprintf(st->err, st->errlen, "Remote file name has no length!");
      return 23;
    }
    u->output = file ? file : u->remote_buf;
  }
  o->extra_outputs = st->extra_outs + (st->nouts > o->nurls ? st->nouts - o->nurls : 0);
  return 0;
}

/* What the whole line says once read: a URL, outputs paired, -s/-S, -c with a file. */
static int cli__finish(struct cli__state *st) {
  struct cli_opts *o = st->o;
  o->silent = st->silent && !st->show_error;
  o->quiet |= st->silent;
  if (o->mode != CLI_GET)
    return 0;
  if (!o->nurls)
    return cli__usage(st, "%s", "no URL specified!");
  int rc = cli__pair_outputs(st);
  if (rc)
    return rc;
  unsigned files = 0;
  for (unsigned i = 0; i < o->nurls; i++)
    files += o->urls[i].output != NULL;
  if (o->resume && !files) /* resuming needs a file to resume */
    return cli__usage(st, "option --%s: needs -o FILE or -O", "continue");
  return 0;
}

int cli_opts_parse(int argc, char **argv, struct cli_opts *o, char *err, size_t errlen) {
  memset(o, 0, sizeof *o);
  err[0] = 0;
  struct cli__state st = {.o = o, .err = err, .errlen = errlen};
  int only_positional = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int rc;
    if (!only_positional && !o->nurls && (!strcmp(a, "run") || !strcmp(a, "ifaces")))
      return cli__subcommand(&st, argc, argv, i);
    if (only_positional || a[0] != '-' || !a[1])
      rc = cli__positional(&st, a);
    else if (!strcmp(a, "--"))
      only_positional = 1, rc = 0;
    else if (a[1] == '-')
      rc = cli__long_arg(&st, argc, argv, &i);
    else
      rc = cli__short_arg(&st, argc, argv, &i);
    if (rc)
      return rc;
  }
  return cli__finish(&st);
}

int cli_opts_ifaces(const struct cli_opts *o, char *out, size_t cap) {
  size_t len = 0;
  for (unsigned i = 0; i < o->napi; i++) {
    if (strcmp(o->api[i].name, "interface"))
      continue;
    int n = snprintf(out + len, cap - len, "%s%s", len ? "," : "", o->api[i].value);
    if (n < 0 || (size_t)n >= cap - len)
      return -1;
    len += (size_t)n;
  }
  return len ? 0 : -1;
}

int cli_opts_remote_name(const char *url, char *out, size_t cap) {
  /* read as curl's tool reads it for -O (a space refused), but with any scheme: whether mhttp
   * fetches that is the library's to say */
  char *path = cli_url_part(url, CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME, CURLUPART_PATH, 0);
  if (!path)
    return -2;
  /* then takes what follows the path's last '/', and what follows a backslash in that */
  const char *seg = strrchr(path, '/');
  seg = seg ? seg + 1 : path;
  const char *bs = strrchr(seg, '\\');
  seg = bs ? bs + 1 : seg;
  size_t len = strlen(seg);
  /* libcurl removed the dot segments between slashes, not one after a backslash ("a\..") */
  int rc = len == 0 || len >= cap || !strcmp(seg, ".") || !strcmp(seg, "..") ? -1 : 0;
  if (!rc)
    memcpy(out, seg, len + 1);
  curl_free(path);
  return rc;
}
