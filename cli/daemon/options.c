/* aria2 option names, kinds and the command-line and configuration-file parsers (options.h). */
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum kind { K_TEXT, K_BOOL, K_INT, K_SIZE, K_REL_PATH, K_CHECKSUM, K_PORT };

struct opt {
  const char *name;
  char short_name;
  enum kind kind;
  long lo, hi; /* K_INT's range */
  enum dmn_opt_use use;
};

static const struct opt opts[] = {
    {"dir", 'd', K_TEXT, 0, 0, DMN_OPT_USED},
    {"out", 'o', K_REL_PATH, 0, 0, DMN_OPT_USED},
    {"header", 0, K_TEXT, 0, 0, DMN_OPT_USED},
    {"user-agent", 'U', K_TEXT, 0, 0, DMN_OPT_USED},
    {"referer", 0, K_TEXT, 0, 0, DMN_OPT_USED},
    {"continue", 'c', K_BOOL, 0, 0, DMN_OPT_USED},
    {"pause", 0, K_BOOL, 0, 0, DMN_OPT_USED},
    {"checksum", 0, K_CHECKSUM, 0, 0, DMN_OPT_USED},
    {"max-concurrent-downloads", 'j', K_INT, 1, 1000, DMN_OPT_USED},
    {"max-download-result", 0, K_INT, 0, 1000000, DMN_OPT_USED},
    {"enable-rpc", 0, K_BOOL, 0, 0, DMN_OPT_USED},
    {"rpc-listen-port", 0, K_PORT, 1024, 65535, DMN_OPT_USED},
    {"rpc-secret", 0, K_TEXT, 0, 0, DMN_OPT_USED},
    {"rpc-listen-all", 0, K_BOOL, 0, 0, DMN_OPT_USED},
    {"rpc-allow-origin-all", 0, K_BOOL, 0, 0, DMN_OPT_USED},
    {"rpc-max-request-size", 0, K_SIZE, 0, 0, DMN_OPT_USED},
    {"conf-path", 0, K_TEXT, 0, 0, DMN_OPT_USED},
    {"input-file", 'i', K_TEXT, 0, 0, DMN_OPT_USED},
    {"save-session", 0, K_TEXT, 0, 0, DMN_OPT_USED},
    {"save-session-interval", 0, K_INT, 0, 86400, DMN_OPT_USED},
    {"daemon", 'D', K_BOOL, 0, 0, DMN_OPT_USED},
    {"split", 's', K_INT, 1, 16, DMN_OPT_KEPT},
    {"max-connection-per-server", 'x', K_INT, 1, 16, DMN_OPT_KEPT},
    {"min-split-size", 'k', K_SIZE, 0, 0, DMN_OPT_KEPT},
    {"max-download-limit", 0, K_SIZE, 0, 0, DMN_OPT_USED},
    {"max-overall-download-limit", 0, K_SIZE, 0, 0, DMN_OPT_USED},
    {"allow-overwrite", 0, K_BOOL, 0, 0, DMN_OPT_KEPT},
    {"auto-file-renaming", 0, K_BOOL, 0, 0, DMN_OPT_KEPT},
    {"log-level", 0, K_TEXT, 0, 0, DMN_OPT_KEPT},
    {"quiet", 'q', K_BOOL, 0, 0, DMN_OPT_KEPT},
    {"no-conf", 0, K_BOOL, 0, 0, DMN_OPT_KEPT}, /* the daemon reads no default file anyway */
    {"help", 'h', K_BOOL, 0, 0, DMN_OPT_USED},
};

static const struct opt *find(const char *name) {
  for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
    if (!strcmp(opts[i].name, name))
      return &opts[i];
  return NULL;
}

static const struct opt *find_short(char c) {
  for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
    if (opts[i].short_name == c)
      return &opts[i];
  return NULL;
}

enum dmn_opt_use dmn_opt_use(const char *name) {
  const struct opt *o = find(name);
  return o ? o->use : DMN_OPT_UNKNOWN;
}

/* aria2's sizes: digits with an optional K or M (1024-based) */
static int valid_size(const char *v) {
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (end == v || errno || *v == '-')
    return 0;
  if (*end == 'K' || *end == 'k' || *end == 'M' || *end == 'm')
    end++;
  return *end == '\0' && n < (1ull << 50);
}

/* aria2 refuses nothing in out; the daemon refuses what could leave dir: an absolute path
 * and any ".." component */
static int valid_rel_path(const char *v) {
  if (!*v || *v == '/')
    return 0;
  for (const char *p = v; *p;) {
    size_t n = strcspn(p, "/");
    if (n == 2 && p[0] == '.' && p[1] == '.')
      return 0;
    p += n;
    p += *p == '/';
  }
  return 1;
}

static int valid_checksum(const char *v) {
  static const char pre[] = "sha-256=";
  if (strncmp(v, pre, sizeof pre - 1))
    return 0;
  v += sizeof pre - 1;
  size_t n = strspn(v, "0123456789abcdefABCDEF");
  return n == 64 && v[n] == '\0';
}

static int valid_int(const char *v, long lo, long hi) {
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  return end != v && *end == '\0' && !errno && n >= lo && n <= hi;
}

int dmn_opt_valid(const char *name, const char *value) {
  const struct opt *o = find(name);
  if (!o)
    return 0;
  int ok = 1;
  switch (o->kind) {
  case K_TEXT: ok = 1; break;
  case K_BOOL: ok = !strcmp(value, "true") || !strcmp(value, "false"); break;
  case K_INT:
  case K_PORT: ok = valid_int(value, o->lo, o->hi); break;
  case K_SIZE: ok = valid_size(value); break;
  case K_REL_PATH: ok = valid_rel_path(value); break;
  case K_CHECKSUM: ok = valid_checksum(value); break;
  }
  return ok ? 0 : -1;
}

int dmn_opt_true(const json_t *o, const char *name) {
  const char *v = json_string_value(json_object_get(o, name));
  return v && !strcmp(v, "true");
}

json_t *dmn_opt_defaults(void) {
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd))
    strcpy(cwd, "/");
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "dir", cwd,
                   "max-concurrent-downloads", "5", "continue", "false", "split", "5", "max-connection-per-server", "1",
                   "max-download-limit", "0", "max-overall-download-limit", "0", "max-download-result", "1000",
                   "enable-rpc", "true", "rpc-listen-port", "6800", "rpc-listen-all", "false", "rpc-allow-origin-all",
                   "false", "save-session-interval", "0", "allow-overwrite", "false", "auto-file-renaming", "true");
}

/* sets name=value after validating it; unknown names warned about */
static int set_opt(json_t *o, const char *name, const char *value, FILE *warn, char *err, size_t errlen) {
  const struct opt *op = find(name);
  if (!op) {
    if (warn)
      fprintf(warn, "mhttp daemon: option --%s is not supported; ignored\n", name);
    return 0;
  }
  if (dmn_opt_valid(name, value) < 0) {
    snprintf(err, errlen, "We encountered a problem while processing the option '--%s'.", name);
    return -1;
  }
  json_object_set_new(o, name, json_string(value));
  return 0;
}

/* one "--name[=value]" or "-X[value]" at argv[*i]; a value may come from the next argument */
static int parse_one(int argc, char **argv, int *i, json_t *o, FILE *warn, char *err, size_t errlen) {
  const char *a = argv[*i];
  char name[64];
  const char *val = NULL;
  const struct opt *op;
  if (a[1] == '-') {
    const char *eq = strchr(a + 2, '=');
    size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    if (n >= sizeof name)
      n = sizeof name - 1;
    memcpy(name, a + 2, n);
    name[n] = '\0';
    val = eq ? eq + 1 : NULL;
    op = find(name);
  } else {
    op = find_short(a[1]);
    if (!op) {
      if (warn)
        fprintf(warn, "mhttp daemon: option %s is not supported; ignored\n", a);
      return 0;
    }
    snprintf(name, sizeof name, "%s", op->name);
    val = a[2] ? a + 2 : NULL;
  }
  if (op && !val) {
    if (op->kind == K_BOOL)
      val = "true";
    else if (*i + 1 < argc)
      val = argv[++*i];
    else {
      snprintf(err, errlen, "option --%s needs a value", name);
      return -1;
    }
  }
  return set_opt(o, name, val ? val : "", warn, err, errlen);
}

int dmn_opt_parse_args(int argc, char **argv, json_t *o, json_t *uris, FILE *warn, char *err, size_t errlen) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || !a[1]) {
      json_array_append_new(uris, json_string(a));
      continue;
    }
    if (parse_one(argc, argv, &i, o, warn, err, errlen) < 0)
      return -1;
  }
  return dmn_opt_true(o, "help") ? 1 : 0;
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
    s[--n] = '\0';
  return s;
}

int dmn_opt_parse_conf(const char *path, json_t *o, FILE *warn, char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
    return -1;
  }
  char line[4096];
  int rc = 0, no = 0;
  while (rc == 0 && fgets(line, sizeof line, f)) {
    no++;
    char *s = trim(line), *eq = strchr(s, '=');
    if (!*s || *s == '#')
      continue;
    if (!eq) {
      snprintf(err, errlen, "%s:%d: not a name=value line", path, no);
      rc = -1;
      break;
    }
    *eq = '\0';
    rc = set_opt(o, trim(s), trim(eq + 1), warn, err, errlen);
  }
  fclose(f);
  return rc;
}

const char *dmn_opt_conf_path(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strncmp(argv[i], "--conf-path=", 12))
      return argv[i] + 12;
    if (!strcmp(argv[i], "--conf-path") && i + 1 < argc)
      return argv[i + 1];
  }
  return NULL;
}

const char *dmn_opt_help(void) {
  return "Usage: mhttp daemon [OPTIONS] [URI...]  (or mhttpd [OPTIONS] [URI...])\n"
         "An aria2-compatible download daemon: aria2's JSON-RPC over HTTP and WebSocket at\n"
         "/jsonrpc, downloads through libmhttp over every network of the host.\n"
         "aria2c's RPC-mode options (--name=value or --name value):\n"
         "  --enable-rpc[=true]            accepted (the daemon always serves RPC)\n"
         "  --rpc-listen-port=PORT         port to listen on (default 6800)\n"
         "  --rpc-listen-all[=true]        listen on every address (default: 127.0.0.1 and ::1)\n"
         "  --rpc-secret=TOKEN             calls must carry \"token:TOKEN\" first\n"
         "  --rpc-allow-origin-all[=true]  answer with Access-Control-Allow-Origin: *\n"
         "  --rpc-max-request-size=SIZE    largest request body (default 2M)\n"
         "  -d, --dir=DIR                  download directory (default: the working directory)\n"
         "  -j, --max-concurrent-downloads=N  downloads at once (default 5)\n"
         "  -c, --continue[=true]          resume partly downloaded files\n"
         "  --conf-path=FILE               read name=value options from FILE first\n"
         "  -i, --input-file=FILE          queue the downloads of FILE (aria2's session format)\n"
         "  --save-session=FILE            keep the unfinished downloads in FILE (rewritten\n"
         "                                 at each change of the queue and at exit)\n"
         "  --save-session-interval=SEC    also every SEC seconds when changed (0: never)\n"
         "  -D, --daemon[=true]            run in the background\n"
         "  -h, --help                     this text\n"
         "Per-download options over RPC: dir, out, header, user-agent, referer, continue,\n"
         "checksum (sha-256=HEX), max-download-limit (bytes/s, K or M; 0: none; at once\n"
         "while it runs); max-overall-download-limit is shared among the active downloads.\n"
         "split, max-connection-per-server and min-split-size are accepted and shown but\n"
         "do not change the transfer.\n"
         "Other aria2 options are reported by name and ignored.\n";
}
