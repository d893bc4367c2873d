/* Public API of libmhttp, in libmhttp-api.so (link with -lmhttp-api; it interposes nothing): today the version and whether the preload library is active. */
#ifndef MHTTP_H
#define MHTTP_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MHTTP_API __attribute__((visibility("default")))
#else
#define MHTTP_API
#endif

/* The library version as "MAJOR.MINOR.PATCH"; a static string, callable from any thread. */
MHTTP_API const char *mhttp_version(void);

/* 1 when the transparent shim is active in this process (loaded, configured, not disabled by
 * MHTTP_DISABLE or a configuration error), else 0. Callable from any thread, at any time. */
MHTTP_API int mhttp_shim_active(void);

#ifdef __cplusplus
}
#endif
#endif
