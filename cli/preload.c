/* Finds the preload library for `mhttp run` and composes LD_PRELOAD with it in front, keeping the caller's own entries. */
#include "preload.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

int cli_preload_path(const char *override, const char *exe_dir, const char *build_dir, const char *build_lib,
                     const char *rel_lib, char *out, size_t cap, char *err, size_t errlen) {
  int n;
  if (override && *override) {
    if (override[0] != '/') {
      snprintf(err, errlen, "MHTTP_PRELOAD must be an absolute path, not '%.200s'", override);
      return -1;
    }
    n = snprintf(out, cap, "%s", override);
  } else if (exe_dir && build_dir && !strcmp(exe_dir, build_dir)) {
    n = snprintf(out, cap, "%s", build_lib);
  } else if (exe_dir && exe_dir[0] == '/') {
    n = snprintf(out, cap, "%s/%s", exe_dir, rel_lib);
  } else {
    snprintf(err, errlen, "cannot tell where mhttp is installed (set MHTTP_PRELOAD)");
    return -1;
  }
  if (n < 0 || (size_t)n >= cap) {
    snprintf(err, errlen, "the preload library's path is too long");
    return -1;
  }
  return 0;
}

int cli_preload_compose(const char *lib, const char *existing, char *out, size_t cap) {
  size_t l = strlen(lib);
  /* ld.so separates entries by spaces or colons; only the first one matters for "already in
   * front" (a later copy of the same path loads nothing twice: ld.so dedups by file) */
  int first = existing && !strncmp(existing, lib, l) && (existing[l] == 0 || existing[l] == ' ' || existing[l] == ':');
  int n;
  if (!existing || !*existing || first)
    n = snprintf(out, cap, "%s", first ? existing : lib);
  else
    n = snprintf(out, cap, "%s %s", lib, existing);
  return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int cli_wait_code(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return 1;
}
