/* `mhttp run`'s pure parts: where the preload library is, the LD_PRELOAD value that adds it, and a child's wait status as a shell's exit code. */
#ifndef CLI_PRELOAD_H
#define CLI_PRELOAD_H
#include <stddef.h>

/* The preload library to use. override: $MHTTP_PRELOAD (used as is when set and non-empty;
 * it must begin with '/'; a space-separated list, such as the Asan tree's runtime before the
 * shim, is used as given). Otherwise the executable's directory exe_dir decides: the build
 * tree's command (exe_dir == build_dir) uses build_lib, an installed one the library at
 * rel_lib relative to exe_dir (the installed private directory). Writes the path into out.
 * 0, or -1 with a one-line reason in err (relative override, too long). */
int cli_preload_path(const char *override, const char *exe_dir, const char *build_dir, const char *build_lib,
                     const char *rel_lib, char *out, size_t cap, char *err, size_t errlen);

/* The LD_PRELOAD value with lib first and what was there (existing, may be NULL or "") kept
 * after it, separated by a space; lib is not repeated when it is already first. 0, or -1 when
 * it does not fit in cap. */
int cli_preload_compose(const char *lib, const char *existing, char *out, size_t cap);

/* A waitpid status as a shell reports it: the exit code, or 128 + the signal. */
int cli_wait_code(int status);

#endif
