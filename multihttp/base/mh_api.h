/* The private contract between the API library and the preload library: the one symbol the preload library exports besides the libc names it interposes. */
#ifndef MH_API_H
#define MH_API_H

/*
 * The API library (libmhttp.so.0) answers mhttp_shim_active() by looking this name up with
 * dlsym(RTLD_DEFAULT, ...): found exactly when the preload library's symbols are in the
 * process's global scope, which is also exactly when its connect()/write()/... interpose the
 * program's (LD_PRELOAD, or linked as a dependency). A copy dlopen'ed with RTLD_LOCAL
 * interposes nothing and is not found: "not active" is then the truth. Defined in
 * shim/shim_init.c; it initialises the shim when nothing did yet, like any hook.
 */
#define MH_API_SHIM_SYMBOL "mhttp__shim_active"

/* The preload library's second private name: on(1) flags the calling thread as an engine's,
 * whose libc calls its hooks pass straight through (on(0) clears it). The API library calls it
 * on its own loop threads and while the caller's thread runs an embedded session's loop, so
 * its sockets are never taken over. Defined in shim/shim_init.c. */
#define MH_API_SHIM_BYPASS_SYMBOL "mhttp__shim_bypass"
void mhttp__shim_bypass(int on);

/* 1 when the preload library is active in this process (loaded, configured, not disabled). */
int mhttp__shim_active(void);

#endif
