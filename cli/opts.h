/* The mhttp command's arguments: pure parsing of argv into a mode, the command's own settings, the URLs with their outputs and mirrors, and the API options to pass by name. */
#ifndef CLI_OPTS_H
#define CLI_OPTS_H
#include <stddef.h>

#define CLI_MAX_APIOPTS 64
#define CLI_MAX_MIRRORS 16
#define CLI_MAX_URLS 32
#define CLI_ERR_MAX 320
#define CLI_ARENA 16384 /* URLs given without a scheme, with curl's default "http://" put before */

enum cli_mode { CLI_GET = 0, CLI_RUN, CLI_IFACES, CLI_HELP, CLI_VERSION };

/* Where an API option goes (include/mhttp.h's table): the session, or the transfer. Options
 * the header allows at both levels go to the transfer: the command makes one per URL. */
enum cli_level { CLI_SESSION = 1, CLI_XFER };

enum cli_progress { CLI_PROGRESS_BAR = 0, CLI_PROGRESS_NONE };

struct cli_apiopt {
  enum cli_level level;
  const char *name;  /* the API option name (static) */
  const char *value; /* points into argv, or a static "1" */
};

/* One URL to download, as curl pairs them: the n-th -o/-O goes to the n-th URL. */
struct cli_url {
  const char *url;
  const char *output;                   /* -o FILE or -O's name; NULL: stdout */
  int to_stdout;                        /* -o -: stdout asked for (the binary-to-terminal guard is off) */
  const char *mirrors[CLI_MAX_MIRRORS]; /* --mirror URL given after it (or before any URL) */
  unsigned nmirrors;
  char remote_buf[256]; /* -O's derived name */
};

struct cli_opts {
  enum cli_mode mode;
  struct cli_url urls[CLI_MAX_URLS];
  unsigned nurls;
  unsigned extra_outputs;     /* -o/-O given beyond the URLs (curl: ignored, with a warning) */
  int quiet;                  /* -q, -s: no progress output */
  int silent;                 /* -s without -S: no error messages or warnings either */
  enum cli_progress progress; /* --progress */
  int progress_json;          /* --progress-json */
  int resume;                 /* -c: resume the URLs written to files */
  const char *stats;          /* --stats FILE */
  const char *cacert;         /* --cacert FILE (also an API option) */
  struct cli_apiopt api[CLI_MAX_APIOPTS];
  unsigned napi;
  char **run_argv;       /* mode CLI_RUN: the command and its arguments (NULL-ended) */
  char arena[CLI_ARENA]; /* URLs completed with "http://" */
  size_t arena_len;
};

/* Parses argv (argv[0] is the program). Returns 0 with *o filled, or a curl-style exit code
 * (2: bad usage; 3: a URL too long to complete; 23: -O with a URL that names no file) with a
 * one-line message in err (without the "mhttp: " prefix). Pointers in *o point into argv or
 * o->arena. `run` and `ifaces` are sub-commands when they are the first word that is not an
 * option; only -i/--interface may come before them. */
int cli_opts_parse(int argc, char **argv, struct cli_opts *o, char *err, size_t errlen);

/* The name -O gives a URL's body, as curl -O names it: what follows the last '/' of the path
 * libcurl reads (dot segments removed; query and fragment not in it), then what follows a
 * backslash in that, percent-encoding left as written. 0; -1 when the URL names no file
 * ("http://h", "http://h/", "http://h/a\..") or it does not fit; -2 when libcurl cannot read
 * the URL. */
int cli_opts_remote_name(const char *url, char *out, size_t cap);

/* 1 when libcurl reads url only as one without a scheme ("a.test/f", "a.test:8080/f",
 * "[::1]/f"), to which curl puts http:// before; 0 when it names one (even one mhttp does not
 * fetch, "ftp://") or libcurl cannot read it (then given as typed, refused later). */
int cli_opts_lacks_scheme(const char *url);

/* The -i/--interface values, comma-joined ("wifi0,lte0") into out, for a sub-command that reads
 * them from MHTTP_IFACES; 0, or -1 when none was given or they do not fit. */
int cli_opts_ifaces(const struct cli_opts *o, char *out, size_t cap);

/* The --help text (static). */
const char *cli_opts_help(void);

#endif
