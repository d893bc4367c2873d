/* The mhttp command's arguments: pure parsing of argv into a mode, the command's own settings and the API options to pass by name. */
#ifndef CLI_OPTS_H
#define CLI_OPTS_H
#include <stddef.h>

#define CLI_MAX_APIOPTS 64
#define CLI_MAX_MIRRORS 16
#define CLI_ERR_MAX 320

enum cli_mode { CLI_GET = 0, CLI_RUN, CLI_IFACES, CLI_HELP, CLI_VERSION };

/* Where an API option goes (include/mhttp.h's table): the session, or the transfer. Options
 * the header allows at both levels go to the transfer: the command makes exactly one. */
enum cli_level { CLI_SESSION = 1, CLI_XFER };

enum cli_progress { CLI_PROGRESS_BAR = 0, CLI_PROGRESS_NONE };

struct cli_apiopt {
  enum cli_level level;
  const char *name;   /* the API option name (static) */
  const char *value;  /* points into argv, or a static "1" */
};

struct cli_opts {
  enum cli_mode mode;
  const char *url;
  const char *mirrors[CLI_MAX_MIRRORS];
  unsigned nmirrors;
  const char *output;          /* -o, NULL: stdout (or -O's name) */
  int remote_name;             /* -O: output named after the URL's last path segment */
  char remote_buf[256];        /* -O's derived name */
  int quiet;                   /* -q: no progress output (errors are still printed) */
  enum cli_progress progress;  /* --progress */
  int progress_json;           /* --progress-json */
  const char *stats;           /* --stats FILE */
  struct cli_apiopt api[CLI_MAX_APIOPTS];
  unsigned napi;
  char **run_argv;             /* mode CLI_RUN: the command and its arguments (NULL-ended) */
};

/* Parses argv (argv[0] is the program). Returns 0 with *o filled, or a curl-style exit code
 * (2: bad usage; 23: -O with a URL that names no file) with a one-line message in err
 * (without the "mhttp: " prefix). Pointers in *o point into argv. */
int cli_opts_parse(int argc, char **argv, struct cli_opts *o, char *err, size_t errlen);

/* The name -O gives a URL's body: its last path segment (query and fragment removed), like
 * curl -O. 0, or -1 when the URL names no file ("http://h/", ".", "..") or it does not fit. */
int cli_opts_remote_name(const char *url, char *out, size_t cap);

/* The --help text (static). */
const char *cli_opts_help(void);

#endif
