/* NetworkManager's per-device connectivity over the system bus (sd-bus, loaded when first needed): its devices' names and Ip4Connectivity, cached per engine and read by any thread without waiting. */
#include "mh_netstate.h"
#include "mh_config.h"
#include "mh_log.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#define MH__NM "org.freedesktop.NetworkManager"
#define MH__NM_DEV "org.freedesktop.NetworkManager.Device"
#define MH__NS_MAX 32 /* devices remembered */

struct mh_netstate {
  pthread_mutex_t mu;
  unsigned n;
  char name[MH__NS_MAX][POL_IFNAME_MAX];
  enum pol_link link[MH__NS_MAX];
  uint64_t read_at; /* the last attempt (0: never) */
  int absent;       /* no system bus or no NetworkManager at the last attempt */
  /* the engine's own portal check per interface (mh_portal.c) */
  unsigned nc;
  char cname[POL_MAX_IFACES][POL_IFNAME_MAX];
  enum pol_link clink[POL_MAX_IFACES];
  uint64_t cat[POL_MAX_IFACES]; /* when its last check started */
};

/* sd-bus's calls, from libsystemd.so.0 opened on the engine thread the first time NetworkManager
 * is asked (a system bus exists and the option is on): linking it would load libsystemd and its
 * libraries (libgcrypt, liblzma, libzstd, liblz4, libcap) into every program the preload library
 * runs in, at start, whether or not it ever asks. Only the header's types are used at build time. */
static struct {
  int (*open_system)(sd_bus **);
  int (*set_timeout)(sd_bus *, uint64_t);
  int (*call_method)(sd_bus *, const char *, const char *, const char *, const char *, sd_bus_error *,
                     sd_bus_message **, const char *, ...);
  int (*get_string)(sd_bus *, const char *, const char *, const char *, const char *, sd_bus_error *, char **);
  int (*get_trivial)(sd_bus *, const char *, const char *, const char *, const char *, sd_bus_error *, char, void *);
  int (*read)(sd_bus_message *, const char *, ...);
  int (*enter)(sd_bus_message *, char, const char *);
  sd_bus_message *(*msg_unref)(sd_bus_message *);
  void (*error_free)(sd_bus_error *);
  sd_bus *(*close_unref)(sd_bus *);
  int ok;
} mh__sd;
static pthread_once_t mh__sd_once = PTHREAD_ONCE_INIT;

static void *mh__sd_sym(void *h, const char *name, int *ok) {
  void *f = dlsym(h, name);
  *ok &= f != NULL;
  return f;
}

static void mh__sd_load(void) {
  void *h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    mh_dbg("NetworkManager: libsystemd.so.0 not loaded (%s)", dlerror());
    return;
  }
  int ok = 1;
  *(void **)&mh__sd.open_system = mh__sd_sym(h, "sd_bus_open_system", &ok);
  *(void **)&mh__sd.set_timeout = mh__sd_sym(h, "sd_bus_set_method_call_timeout", &ok);
  *(void **)&mh__sd.call_method = mh__sd_sym(h, "sd_bus_call_method", &ok);
  *(void **)&mh__sd.get_string = mh__sd_sym(h, "sd_bus_get_property_string", &ok);
  *(void **)&mh__sd.get_trivial = mh__sd_sym(h, "sd_bus_get_property_trivial", &ok);
  *(void **)&mh__sd.read = mh__sd_sym(h, "sd_bus_message_read", &ok);
  *(void **)&mh__sd.enter = mh__sd_sym(h, "sd_bus_message_enter_container", &ok);
  *(void **)&mh__sd.msg_unref = mh__sd_sym(h, "sd_bus_message_unref", &ok);
  *(void **)&mh__sd.error_free = mh__sd_sym(h, "sd_bus_error_free", &ok);
  *(void **)&mh__sd.close_unref = mh__sd_sym(h, "sd_bus_flush_close_unref", &ok);
  mh__sd.ok = ok; /* the library stays loaded: its symbols may be in use on another engine */
}

int mh_netstate_new(struct mh_netstate **out) {
  struct mh_netstate *ns = calloc(1, sizeof *ns);
  if (!ns)
    return -ENOMEM;
  pthread_mutex_init(&ns->mu, NULL);
  *out = ns;
  return 0;
}

void mh_netstate_free(struct mh_netstate *ns) {
  if (!ns)
    return;
  pthread_mutex_destroy(&ns->mu);
  free(ns);
}

enum pol_link mh_netstate_from_nm(uint32_t nm_state) {
  switch (nm_state) { /* NMConnectivityState */
  case 1: return POL_LINK_NONE;
  case 2: return POL_LINK_PORTAL;
  case 3: return POL_LINK_LIMITED;
  case 4: return POL_LINK_FULL;
  default: return POL_LINK_UNKNOWN;
  }
}

/* One device's name and IPv4 connectivity into tmp (skipped when either cannot be read). */
static void mh__nm_device(sd_bus *bus, const char *path, struct mh_netstate *tmp) {
  sd_bus_error err = SD_BUS_ERROR_NULL;
  char *name = NULL;
  uint32_t conn = 0;
  if (mh__sd.get_string(bus, MH__NM, path, MH__NM_DEV, "Interface", &err, &name) >= 0 &&
      mh__sd.get_trivial(bus, MH__NM, path, MH__NM_DEV, "Ip4Connectivity", &err, 'u', &conn) >= 0 &&
      strlen(name) < POL_IFNAME_MAX && tmp->n < MH__NS_MAX) {
    snprintf(tmp->name[tmp->n], POL_IFNAME_MAX, "%s", name);
    tmp->link[tmp->n++] = mh_netstate_from_nm(conn);
  }
  free(name);
  mh__sd.error_free(&err);
}

/* NetworkManager's devices into tmp. 0, or -errno when there is no bus or no NetworkManager. */
static int mh__nm_read(struct mh_netstate *tmp) {
  const char *addr = getenv("DBUS_SYSTEM_BUS_ADDRESS");
  if (!addr && access("/run/dbus/system_bus_socket", F_OK) < 0)
    return -ENOENT; /* no system bus: nothing to ask, at the cost of one access(2) */
  pthread_once(&mh__sd_once, mh__sd_load);
  if (!mh__sd.ok)
    return -ENOSYS;
  sd_bus *bus = NULL;
  sd_bus_message *reply = NULL;
  sd_bus_error err = SD_BUS_ERROR_NULL;
  int r = mh__sd.open_system(&bus);
  if (r >= 0)
    r = mh__sd.set_timeout(bus, MH_NETSTATE_CALL_US);
  int owned = 0;
  /* asked only when running: a call to its name could make the bus start it (activation) */
  if (r >= 0)
    r = mh__sd.call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                           &err, &reply, "s", MH__NM);
  if (r >= 0 && (r = mh__sd.read(reply, "b", &owned)) >= 0 && !owned)
    r = -ESRCH;
  reply = mh__sd.msg_unref(reply);
  if (r >= 0)
    r = mh__sd.call_method(bus, MH__NM, "/org/freedesktop/NetworkManager", MH__NM, "GetDevices", &err, &reply, "");
  if (r >= 0)
    r = mh__sd.enter(reply, 'a', "o");
  const char *path;
  while (r >= 0 && tmp->n < MH__NS_MAX && (r = mh__sd.read(reply, "o", &path)) > 0)
    mh__nm_device(bus, path, tmp);
  mh__sd.error_free(&err);
  mh__sd.msg_unref(reply);
  mh__sd.close_unref(bus);
  return r < 0 ? r : 0;
}

void mh_netstate_refresh(struct mh_netstate *ns, const struct mh_config *cfg, uint64_t now_us) {
  if (!cfg->networkmanager)
    return;
  pthread_mutex_lock(&ns->mu);
  uint64_t period = ns->absent ? MH_NETSTATE_ABSENT_US : MH_NETSTATE_REFRESH_US;
  int due = !ns->read_at || now_us < ns->read_at || now_us - ns->read_at >= period;
  if (due)
    ns->read_at = now_us;
  pthread_mutex_unlock(&ns->mu);
  if (!due)
    return;
  /* the D-Bus calls run without the lock: a connect() on a program thread never waits for them */
  struct mh_netstate *tmp = calloc(1, sizeof *tmp);
  if (!tmp)
    return;
  int rc = mh__nm_read(tmp);
  pthread_mutex_lock(&ns->mu);
  ns->absent = rc < 0;
  ns->n = rc < 0 ? 0 : tmp->n;
  memcpy(ns->name, tmp->name, sizeof ns->name);
  memcpy(ns->link, tmp->link, sizeof ns->link);
  pthread_mutex_unlock(&ns->mu);
  for (unsigned i = 0; i < tmp->n && rc >= 0; i++)
    if (pol_link_bad(tmp->link[i]))
      mh_info("NetworkManager: %s has %s connectivity: not used", tmp->name[i],
              tmp->link[i] == POL_LINK_PORTAL    ? "portal"
              : tmp->link[i] == POL_LINK_LIMITED ? "limited"
                                                 : "no");
  if (rc < 0)
    mh_dbg("NetworkManager not asked (%s): every link unknown", strerror(-rc));
  free(tmp);
}

void mh_netstate_links(struct mh_netstate *ns, const char *const *names, unsigned n, enum pol_link *out) {
  for (unsigned i = 0; i < n; i++)
    out[i] = POL_LINK_UNKNOWN;
  if (pthread_mutex_trylock(&ns->mu) != 0)
    return;
  for (unsigned i = 0; i < n; i++) {
    for (unsigned k = 0; k < ns->nc; k++)
      if (!strncmp(ns->cname[k], names[i], POL_IFNAME_MAX))
        out[i] = ns->clink[k];
    for (unsigned k = 0; k < ns->n; k++)
      if (!strncmp(ns->name[k], names[i], POL_IFNAME_MAX) && ns->link[k] != POL_LINK_UNKNOWN)
        out[i] = ns->link[k];
  }
  pthread_mutex_unlock(&ns->mu);
}

/* ifname's check slot (ns->mu held); -1 when the table is full. */
static int mh__check_slot(struct mh_netstate *ns, const char *ifname) {
  for (unsigned k = 0; k < ns->nc; k++)
    if (!strncmp(ns->cname[k], ifname, POL_IFNAME_MAX))
      return (int)k;
  if (ns->nc == POL_MAX_IFACES)
    return -1;
  snprintf(ns->cname[ns->nc], POL_IFNAME_MAX, "%s", ifname);
  ns->clink[ns->nc] = POL_LINK_UNKNOWN;
  ns->cat[ns->nc] = 0;
  return (int)ns->nc++;
}

int mh_netstate_check_due(struct mh_netstate *ns, const char *ifname, uint64_t period_us, uint64_t now_us) {
  pthread_mutex_lock(&ns->mu);
  int k = mh__check_slot(ns, ifname), due = 0;
  if (k >= 0 && (!ns->cat[k] || now_us < ns->cat[k] || now_us - ns->cat[k] >= period_us)) {
    ns->cat[k] = now_us ? now_us : 1;
    due = 1;
  }
  pthread_mutex_unlock(&ns->mu);
  return due;
}

void mh_netstate_set_check(struct mh_netstate *ns, const char *ifname, enum pol_link link) {
  if (link == POL_LINK_UNKNOWN)
    return;
  pthread_mutex_lock(&ns->mu);
  int k = mh__check_slot(ns, ifname);
  if (k >= 0)
    ns->clink[k] = link;
  pthread_mutex_unlock(&ns->mu);
}
