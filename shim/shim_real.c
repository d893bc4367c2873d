/* Resolves the real libc symbols once, refusing any that would resolve back to our own hooks. */
#include "shim_real.h"

#include <dlfcn.h>
#include <pthread.h>

struct shim_real shim_real;
__thread int shim_resolving __attribute__((tls_model("initial-exec")));
static pthread_once_t shim__real_once = PTHREAD_ONCE_INIT;

static void *shim__sym(const char *name) {
  void *next = dlsym(RTLD_NEXT, name);
  Dl_info a, b;
  /* RTLD_NEXT from the preloaded object finds a later definition; the guard is for odd link
   * orders (the shim linked into a program) where "next" could be our own hook again. */
  if (next && dladdr(next, &a) && dladdr((void *)shim__sym, &b) && a.dli_fbase == b.dli_fbase)
    return NULL;
  return next;
}

static void shim__real_fill(void) {
  shim_resolving = 1;
#define SHIM_RESOLVE(name) *(void **)&shim_real.name = shim__sym(#name)
  SHIM_RESOLVE(connect);
  SHIM_RESOLVE(write);
  SHIM_RESOLVE(writev);
  SHIM_RESOLVE(send);
  SHIM_RESOLVE(sendto);
  SHIM_RESOLVE(sendmsg);
  SHIM_RESOLVE(read);
  SHIM_RESOLVE(readv);
  SHIM_RESOLVE(recv);
  SHIM_RESOLVE(recvfrom);
  SHIM_RESOLVE(recvmsg);
  SHIM_RESOLVE(close);
  SHIM_RESOLVE(shutdown);
  SHIM_RESOLVE(dup);
  SHIM_RESOLVE(dup2);
  SHIM_RESOLVE(dup3);
  SHIM_RESOLVE(fcntl);
  SHIM_RESOLVE(fcntl64);
  SHIM_RESOLVE(getpeername);
  SHIM_RESOLVE(getsockname);
  SHIM_RESOLVE(getsockopt);
  SHIM_RESOLVE(setsockopt);
  SHIM_RESOLVE(epoll_ctl);
  SHIM_RESOLVE(getaddrinfo);
  SHIM_RESOLVE(freeaddrinfo);
  SHIM_RESOLVE(gethostbyname);
  SHIM_RESOLVE(gethostbyname2);
  SHIM_RESOLVE(gethostbyname_r);
  SHIM_RESOLVE(gethostbyname2_r);
  SHIM_RESOLVE(fork);
#undef SHIM_RESOLVE
  if (!shim_real.fcntl64)
    shim_real.fcntl64 = shim_real.fcntl;
  shim_resolving = 0;
}

void shim_real_init(void) { pthread_once(&shim__real_once, shim__real_fill); }
