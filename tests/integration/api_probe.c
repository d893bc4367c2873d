/* A program linked against the API library (libmhttp.so.0): prints its version, mhttp_shim_active(), and which loaded object each named libc call resolves to. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "mhttp.h"

/* The object that defines name for this program (the global scope's first definition), as
 * "libc" when it is libc's own, else the object's file name. */
static const char *provider(const char *name, char *buf, size_t len) {
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  void *sym = dlsym(RTLD_DEFAULT, name);
  void *real = libc ? dlsym(libc, name) : NULL;
  if (!sym)
    return "missing";
  if (sym == real)
    return "libc";
  Dl_info di;
  if (!dladdr(sym, &di) || !di.dli_fname)
    return "unknown";
  const char *slash = strrchr(di.dli_fname, '/');
  snprintf(buf, len, "%s", slash ? slash + 1 : di.dli_fname);
  return buf;
}

/* api_probe version | active | dlopen-local PRELOAD_LIB | libc NAME... */
int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "version")) {
    printf("%s\n", mhttp_version());
    return 0;
  }
  if (argc >= 2 && !strcmp(argv[1], "active")) {
    printf("%d\n", mhttp_shim_active());
    return 0;
  }
  if (argc >= 3 && !strcmp(argv[1], "dlopen-local")) {
    /* loaded privately, its hooks interpose nothing: the API must say so */
    void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    printf("%s %d\n", h ? "loaded" : dlerror(), mhttp_shim_active());
    return 0;
  }
  if (argc >= 2 && !strcmp(argv[1], "libc")) {
    char buf[256];
    for (int i = 2; i < argc; i++)
      printf("%s %s\n", argv[i], provider(argv[i], buf, sizeof buf));
    return 0;
  }
  fprintf(stderr, "usage: api_probe version | active | dlopen-local LIB | libc NAME...\n");
  return 2;
}
