/* Leveled one-line logging for the engine and the shim; never given request headers, so never cookies or credentials. */
#ifndef MH_LOG_H
#define MH_LOG_H
#include <sys/types.h>

enum mh_log_level {
  MH_LOG_OFF = 0,
  MH_LOG_ERROR = 1,
  MH_LOG_INFO = 2,
  MH_LOG_DEBUG = 3,
};

/* Current level; read without a lock on every call site (a stale read only costs one line). */
extern int mh_log_level_v;

/* Sets level, destination fd (2 or an opened MHTTP_LOG_FILE) and the write function: the shim
 * passes the real libc write so logging never re-enters its own hooks. Any thread. */
void mh_log_setup(int level, int fd, ssize_t (*writer)(int, const void *, size_t));

/* Formats one line "libmhttp[pid] level: msg\n" into a stack buffer and writes it at once. */
void mh_log_(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define mh_log(lvl, ...)           \
  do {                             \
    if ((lvl) <= mh_log_level_v)   \
      mh_log_((lvl), __VA_ARGS__); \
  } while (0)
#define mh_err(...) mh_log(MH_LOG_ERROR, __VA_ARGS__)
#define mh_info(...) mh_log(MH_LOG_INFO, __VA_ARGS__)
#define mh_dbg(...) mh_log(MH_LOG_DEBUG, __VA_ARGS__)

#endif
