/* Preloaded after the ASan runtime in the Asan tree's integration tests: initialises ASan before any other library's constructor runs. */
/*
 * A program that is not built with ASan initialises the runtime lazily, at the first call it
 * intercepts. When that call comes from another library's constructor while glibc holds a
 * lock (libp11-kit's, which curl and wget load through gnutls, calls newlocale), the runtime's
 * start-up leaves glibc's locale lock miscounted and the program's own setlocale() in main
 * waits for ever. Linked with -z initfirst, this object's constructor runs before every other
 * one and starts the runtime while no lock is held.
 */
void __asan_init(void);

__attribute__((constructor)) static void mhttp_asan_first(void) { __asan_init(); }
