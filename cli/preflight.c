/* Checks the mhttp command's interfaces, CA file, output and --stats paths before any transfer, so a download is not made only to be lost, with curl's exit codes and words. */
#include "preflight.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_path_writable(const char *path, char *why, size_t cap) {
  struct stat st;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      snprintf(why, cap, "%s", strerror(EISDIR));
      return -1;
    }
    if (access(path, W_OK) < 0) {
      snprintf(why, cap, "%s", strerror(errno));
      return -1;
    }
    return 0;
  }
  if (errno != ENOENT) {
    snprintf(why, cap, "%s", strerror(errno));
    return -1;
  }
  char dir[4096]; /* the directory the new file would go in */
  const char *slash = strrchr(path, '/');
  size_t len = !slash ? 0 : slash == path ? 1 : (size_t)(slash - path);
  if (len >= sizeof dir) {
    snprintf(why, cap, "%s", strerror(ENAMETOOLONG));
    return -1;
  }
  if (slash)
    snprintf(dir, sizeof dir, "%.*s", (int)len, path);
  else
    snprintf(dir, sizeof dir, ".");
  if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
    errno = ENOTDIR;
  else if (stat(dir, &st) == 0 && access(dir, W_OK | X_OK) == 0)
    return 0;
  snprintf(why, cap, "%s", strerror(errno));
  return -1;
}

static int cli__say(const struct cli_opts *o, int code, const char *fmt, const char *a, const char *b) {
  if (!o->silent) {
    fprintf(stderr, "mhttp: (%d) ", code);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
  }
  return code;
}

static int cli__interfaces(const struct cli_opts *o) {
  for (unsigned i = 0; i < o->napi; i++)
    if (!strcmp(o->api[i].name, "interface") && !if_nametoindex(o->api[i].value))
      return cli__say(o, 45, "Couldn't bind to '%s'%s", o->api[i].value, "");
  return 0;
}

static int cli__paths(const struct cli_opts *o) {
  char why[128];
  for (unsigned i = 0; i < o->nurls; i++) {
    const char *out = o->urls[i].output;
    if (out && cli_path_writable(out, why, sizeof why) < 0)
      return cli__say(o, 23, "Failure writing output to destination: %s: %s", out, why);
  }
  if (o->stats && cli_path_writable(o->stats, why, sizeof why) < 0)
    return cli__say(o, 23, "Failure writing output to destination: --stats %s: %s", o->stats, why);
  return 0;
}

int cli_preflight(const struct cli_opts *o) {
  int code = cli__interfaces(o);
  if (code)
    return code;
  if (o->cacert && access(o->cacert, R_OK) < 0)
    return cli__say(o, 77, "error setting certificate file: %s%s", o->cacert, "");
  if ((code = cli__paths(o)))
    return code;
  if (o->extra_outputs && !o->silent)
    fprintf(stderr, "mhttp: warning: got more output options than URLs (%u ignored)\n", o->extra_outputs);
  return 0;
}
