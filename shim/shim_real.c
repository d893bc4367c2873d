/* Resolves the real libc symbols once, refusing any that would resolve back to our own hooks. */
#include "shim_real.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <pthread.h>

struct shim_real shim_real;
__thread int shim_resolving __attribute__((tls_model("initial-exec")));
static pthread_once_t shim__real_once = PTHREAD_ONCE_INIT;

/* Our own object's loaded range, [lo, hi), found once: the guard below checks every symbol
 * against it. dladdr() on each "next" symbol did the same job but scans the whole symbol
 * table of the object it lands in (libc: thousands of entries) twice per symbol, about
 * 0.5 ms of every process start with the shim loaded. */
static uintptr_t shim__lo, shim__hi;

/* dl_iterate_phdr callback: the object one of whose PT_LOAD segments holds `self` is ours. */
static int shim__find_self(struct dl_phdr_info *info, size_t size, void *self) {
  (void)size;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  int mine = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD)
      continue;
    uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
    mine |= (uintptr_t)self >= a && (uintptr_t)self < b;
    if (a < lo)
      lo = a;
    if (b > hi)
      hi = b;
  }
  if (!mine)
    return 0;
  shim__lo = lo;
  shim__hi = hi;
  return 1;
}

static void *shim__sym(const char *name) {
  void *next = dlsym(RTLD_NEXT, name);
  /* RTLD_NEXT from the preloaded object finds a later definition; the guard is for odd link
   * orders (the shim linked into a program) where "next" could be our own hook again. */
  if (next && (uintptr_t)next >= shim__lo && (uintptr_t)next < shim__hi)
    return NULL;
  return next;
}

static void shim__real_fill(void) {
  shim_resolving = 1;
  dl_iterate_phdr(shim__find_self, (void *)shim__find_self);
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
