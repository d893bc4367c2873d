/* sd_notify for the daemon (service.h): libsystemd's, opened only when systemd gave a NOTIFY_SOCKET. Linked, libsystemd and the five libraries it needs would load at every start of the mhttp command, which is mostly a download; under systemd, libsystemd0 is installed (systemd depends on it). */
#include "service.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "log.h"

static __typeof__(sd_notify) *notify_fn;

/* libsystemd's sd_notify, opened the first time; NULL (said once) when it cannot be */
static __typeof__(sd_notify) *open_notify(void) {
  static int tried;
  if (tried++)
    return notify_fn;
  void *h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
  if (h)
    *(void **)&notify_fn = dlsym(h, "sd_notify");
  if (!notify_fn)
    dmn_log(LOG_ERR,
            "NOTIFY_SOCKET is set but libsystemd.so.0 cannot be loaded (%s): the "
            "service manager will not learn that the daemon is ready",
            dlerror());
  return notify_fn;
}

/* what: "READY=1", "STOPPING=1" or NULL for a status alone */
static void send_state(const char *what, const char *status) {
  if (!getenv("NOTIFY_SOCKET")) /* started by hand or by another manager: nothing to tell */
    return;
  __typeof__(sd_notify) *fn = open_notify();
  char msg[512];
  snprintf(msg, sizeof msg, "%s%sSTATUS=%s", what ? what : "", what ? "\n" : "", status);
  /* unset_environment 0: STOPPING=1 goes to the same socket later */
  int rc = fn ? fn(0, msg) : 0;
  if (rc < 0)
    dmn_log(LOG_WARNING, "cannot notify the service manager (%s): %s", what ? what : "STATUS", strerror(-rc));
}

void dmn_svc_ready(const char *status) { send_state("READY=1", status); }

void dmn_svc_stopping(const char *status) { send_state("STOPPING=1", status); }

void dmn_svc_status(const char *status) { send_state(NULL, status); }
