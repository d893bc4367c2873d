/* The public API that exists today (include/mhttp.h): the version, and whether the preload library is active in this process. */
#include "mh_api.h"
#include "mhttp.h"

#include <dlfcn.h>

MHTTP_API const char *mhttp_version(void) { return MHTTP_VERSION_STRING; }

MHTTP_API int mhttp_shim_active(void) {
  /* looked up on every call, never cached: the preload library may be loaded after the first
   * call (dlopen RTLD_GLOBAL), and the lookup costs a hash probe per loaded object */
  int (*active)(void);
  *(void **)&active = dlsym(RTLD_DEFAULT, MH_API_SHIM_SYMBOL);
  return active ? active() != 0 : 0;
}
