/* Parses the mhttp command line into a mode, the command's own settings and the API options it passes through by name (include/mhttp.h's table). */
#include "opts.h"

#include <stdio.h>
#include <string.h>

/* What an option does once its value is known. */
enum cli__kind {
  CLI__API,       /* passed to the API under `api` at `level` */
  CLI__API_FLAG,  /* passed to the API as "1" (no value on the command line) */
  CLI__OUTPUT,    /* -o: the command keeps it and passes it as "output" */
  CLI__REMOTE,    /* -O */
  CLI__QUIET,
  CLI__PROGRESS,
  CLI__PJSON,
  CLI__STATS,
  CLI__HELP,
  CLI__VERSION,
};

struct cli__opt {
  char shortopt;      /* 0: long only */
  const char *longopt;
  int takes_value;
  enum cli__kind kind;
  enum cli_level level;
};

/* The long names of API options are the API's names (one concept, one name). */
static const struct cli__opt cli__table[] = {
    {'o', "output", 1, CLI__OUTPUT, CLI_XFER},
    {'O', "remote-name", 0, CLI__REMOTE, 0},
    {'c', "continue", 0, CLI__API_FLAG, CLI_XFER},
    {'q', "quiet", 0, CLI__QUIET, 0},
    {'i', "interface", 1, CLI__API, CLI_SESSION},
    {0, "dns-server", 1, CLI__API, CLI_SESSION},
    {0, "policy", 1, CLI__API, CLI_SESSION},
    {0, "checksum", 1, CLI__API, CLI_XFER},
    {0, "cacert", 1, CLI__API, CLI_XFER},
    {'k', "insecure", 0, CLI__API_FLAG, CLI_XFER},
    {0, "connect-timeout", 1, CLI__API, CLI_XFER},
    {'m', "max-time", 1, CLI__API, CLI_XFER},
    {0, "max-redirs", 1, CLI__API, CLI_XFER},
    {'A', "user-agent", 1, CLI__API, CLI_XFER},
    {'H', "header", 1, CLI__API, CLI_XFER},
    {0, "stats", 1, CLI__STATS, 0},
    {0, "progress", 1, CLI__PROGRESS, 0},
    {0, "progress-json", 0, CLI__PJSON, 0},
    {'h', "help", 0, CLI__HELP, 0},
    {'V', "version", 0, CLI__VERSION, 0},
};
#define CLI__NOPTS (sizeof cli__table / sizeof cli__table[0])

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

static int cli__usage(char *err, size_t errlen, const char *fmt, const char *what) {
  snprintf(err, errlen, fmt, what);
  return 2;
}

static int cli__api(struct cli_opts *o, enum cli_level level, const char *name, const char *value,
                    char *err, size_t errlen) {
  if (o->napi == CLI_MAX_APIOPTS)
    return cli__usage(err, errlen, "option --%s: given too many times", name);
  o->api[o->napi++] = (struct cli_apiopt){level, name, value};
  return 0;
}

/* Applies one option with its value (NULL for a flag). */
static int cli__apply(struct cli_opts *o, const struct cli__opt *d, const char *value, char *err,
                      size_t errlen) {
  switch (d->kind) {
  case CLI__API: return cli__api(o, d->level, d->longopt, value, err, errlen);
  case CLI__API_FLAG: return cli__api(o, d->level, d->longopt, "1", err, errlen);
  case CLI__OUTPUT: o->output = value; o->remote_name = 0; return 0;
  case CLI__REMOTE: o->remote_name = 1; o->output = NULL; return 0;
  case CLI__QUIET: o->quiet = 1; return 0;
  case CLI__PJSON: o->progress_json = 1; return 0;
  case CLI__STATS: o->stats = value; return 0;
  case CLI__HELP: o->mode = CLI_HELP; return 0;
  case CLI__VERSION: o->mode = CLI_VERSION; return 0;
  case CLI__PROGRESS:
    if (!strcmp(value, "bar"))
      o->progress = CLI_PROGRESS_BAR;
    else if (!strcmp(value, "none"))
      o->progress = CLI_PROGRESS_NONE;
    else
      return cli__usage(err, errlen, "option --progress: expected bar or none, not '%.60s'", value);
    return 0;
  }
  return 0;
}

/* "--name", "--name=value" or "--name value"; *i advances past a separate value. */
static int cli__long_arg(struct cli_opts *o, int argc, char **argv, int *i, char *err, size_t errlen) {
  const char *name = argv[*i] + 2, *eq = strchr(name, '=');
  size_t len = eq ? (size_t)(eq - name) : strlen(name);
  const struct cli__opt *d = cli__long(name, len);
  if (!d)
    return cli__usage(err, errlen, "option %.100s: is unknown", argv[*i]);
  if (!d->takes_value) {
    if (eq)
      return cli__usage(err, errlen, "option --%s: takes no value", d->longopt);
    return cli__apply(o, d, NULL, err, errlen);
  }
  const char *value = eq ? eq + 1 : NULL;
  if (!value) {
    if (*i + 1 >= argc)
      return cli__usage(err, errlen, "option --%s: requires parameter", d->longopt);
    value = argv[++*i];
  }
  return cli__apply(o, d, value, err, errlen);
}

/* "-kq", "-oFILE", "-o FILE": flags cluster; an option with a value ends the cluster. */
static int cli__short_arg(struct cli_opts *o, int argc, char **argv, int *i, char *err, size_t errlen) {
  for (const char *p = argv[*i] + 1; *p; p++) {
    const struct cli__opt *d = cli__short(*p);
    if (!d) {
      char opt[3] = {'-', *p, 0};
      return cli__usage(err, errlen, "option %s: is unknown", opt);
    }
    if (!d->takes_value) {
      int rc = cli__apply(o, d, NULL, err, errlen);
      if (rc)
        return rc;
      continue;
    }
    const char *value = p[1] ? p + 1 : NULL;
    if (!value) {
      if (*i + 1 >= argc)
        return cli__usage(err, errlen, "option -%s: requires parameter", (char[2]){*p, 0});
      value = argv[++*i];
    }
    return cli__apply(o, d, value, err, errlen);
  }
  return 0;
}

static int cli__positional(struct cli_opts *o, const char *arg, char *err, size_t errlen) {
  if (!o->url) {
    o->url = arg;
    return 0;
  }
  if (o->nmirrors == CLI_MAX_MIRRORS)
    return cli__usage(err, errlen, "too many mirrors (at most %s)", "16");
  o->mirrors[o->nmirrors++] = arg;
  return 0;
}

/* `mhttp run [--] CMD ...` and `mhttp ifaces`: the words before any option. */
static int cli__subcommand(int argc, char **argv, struct cli_opts *o, char *err, size_t errlen) {
  if (!strcmp(argv[1], "ifaces")) {
    o->mode = CLI_IFACES;
    if (argc > 2)
      return cli__usage(err, errlen, "ifaces: unexpected argument '%.100s'", argv[2]);
    return 0;
  }
  o->mode = CLI_RUN;
  int first = 2;
  if (first < argc && !strcmp(argv[first], "--"))
    first++;
  if (first >= argc)
    return cli__usage(err, errlen, "%s: no command given (mhttp run [--] CMD [ARG...])", "run");
  o->run_argv = argv + first;
  return 0;
}

int cli_opts_parse(int argc, char **argv, struct cli_opts *o, char *err, size_t errlen) {
  memset(o, 0, sizeof *o);
  err[0] = 0;
  if (argc >= 2 && (!strcmp(argv[1], "run") || !strcmp(argv[1], "ifaces")))
    return cli__subcommand(argc, argv, o, err, errlen);
  int only_positional = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int rc;
    if (only_positional || a[0] != '-' || !a[1])
      rc = cli__positional(o, a, err, errlen);
    else if (!strcmp(a, "--"))
      only_positional = 1, rc = 0;
    else if (a[1] == '-')
      rc = cli__long_arg(o, argc, argv, &i, err, errlen);
    else
      rc = cli__short_arg(o, argc, argv, &i, err, errlen);
    if (rc)
      return rc;
  }
  if (o->mode != CLI_GET)
    return 0;
  if (!o->url)
    return cli__usage(err, errlen, "%s", "no URL specified!");
  if (o->remote_name) {
    if (cli_opts_remote_name(o->url, o->remote_buf, sizeof o->remote_buf) < 0) {
      snprintf(err, errlen, "Remote file name has no length!");
      return 23;
    }
    o->output = o->remote_buf;
  }
  if (o->output)
    return cli__api(o, CLI_XFER, "output", o->output, err, errlen);
  for (unsigned i = 0; i < o->napi; i++)
    if (!strcmp(o->api[i].name, "continue"))  /* resuming needs a file to resume */
      return cli__usage(err, errlen, "option --%s: needs -o FILE or -O", "continue");
  return 0;
}

int cli_opts_remote_name(const char *url, char *out, size_t cap) {
  const char *scheme = strstr(url, "://");
  const char *path = strchr(scheme ? scheme + 3 : url, '/');
  if (!path)
    return -1;
  size_t end = strcspn(path, "?#");
  const char *seg = path;
  for (size_t k = 0; k < end; k++)
    if (path[k] == '/')
      seg = path + k + 1;
  size_t len = (size_t)(path + end - seg);
  if (len == 0 || len >= cap || (len == 1 && seg[0] == '.') || (len == 2 && !strncmp(seg, "..", 2)))
    return -1;
  memcpy(out, seg, len);
  out[len] = 0;
  return 0;
}
