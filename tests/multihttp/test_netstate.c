/* The system's connectivity per device (mh_netstate.c): NetworkManager's states mapped, no system bus leaves every link unknown, and a NetworkManager of our own on a private bus is read. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "mh_config.h"
#include "mh_netstate.h"

Test(netstate, nm_states_map_to_links) {
  const struct {
    uint32_t nm;
    enum pol_link want;
  } rows[] = {{0, POL_LINK_UNKNOWN}, {1, POL_LINK_NONE},    {2, POL_LINK_PORTAL},           {3, POL_LINK_LIMITED},
              {4, POL_LINK_FULL},    {5, POL_LINK_UNKNOWN}, {0xffffffffu, POL_LINK_UNKNOWN}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    cr_assert_eq(mh_netstate_from_nm(rows[i].nm), rows[i].want, "row %zu", i);
}

static void links_unknown(struct mh_netstate *ns) {
  const char *names[2] = {"wifi0", "lte0"};
  enum pol_link l[2] = {POL_LINK_FULL, POL_LINK_PORTAL};
  mh_netstate_links(ns, names, 2, l);
  cr_assert_eq(l[0], POL_LINK_UNKNOWN);
  cr_assert_eq(l[1], POL_LINK_UNKNOWN);
}

Test(netstate, no_bus_leaves_every_link_unknown) {
  struct mh_config c;
  mh_config_defaults(&c);
  struct mh_netstate *ns;
  cr_assert_eq(mh_netstate_new(&ns), 0);
  links_unknown(ns);
  setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/mhttp-test-bus", 1);
  mh_netstate_refresh(ns, &c, 1000000);
  links_unknown(ns);
  mh_netstate_refresh(ns, &c, 2000000); /* absent: not asked again before MH_NETSTATE_ABSENT_US */
  links_unknown(ns);
  c.networkmanager = 0;
  mh_netstate_refresh(ns, &c, 1000000 + MH_NETSTATE_ABSENT_US);
  links_unknown(ns);
  mh_netstate_free(ns);
}

/* A NetworkManager of our own on a private bus (dbus-daemon with the session policy, pointed
 * at by DBUS_SYSTEM_BUS_ADDRESS): two devices, wifi0 with full connectivity, lte0 behind a
 * portal, and a third the engine does not use. */
static const char *const dev_name[] = {"wifi0", "lte0", "eth9"};
static const uint32_t dev_conn[] = {4, 2, 1};

static int dev_index(const char *path) {
  return !strcmp(path, "/org/freedesktop/NetworkManager/Devices/1")   ? 1
         : !strcmp(path, "/org/freedesktop/NetworkManager/Devices/2") ? 2
                                                                      : 0;
}

static int get_devices(sd_bus_message *m, void *ud, sd_bus_error *e) {
  (void)ud, (void)e;
  return sd_bus_reply_method_return(m, "ao", 3, "/org/freedesktop/NetworkManager/Devices/0",
                                    "/org/freedesktop/NetworkManager/Devices/1",
                                    "/org/freedesktop/NetworkManager/Devices/2");
}

static int prop_iface(sd_bus *b, const char *path, const char *i, const char *p, sd_bus_message *r, void *ud,
                      sd_bus_error *e) {
  (void)b, (void)i, (void)p, (void)ud, (void)e;
  return sd_bus_message_append(r, "s", dev_name[dev_index(path)]);
}

static int prop_conn(sd_bus *b, const char *path, const char *i, const char *p, sd_bus_message *r, void *ud,
                     sd_bus_error *e) {
  (void)b, (void)i, (void)p, (void)ud, (void)e;
  return sd_bus_message_append(r, "u", dev_conn[dev_index(path)]);
}

static const sd_bus_vtable nm_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("GetDevices", "", "ao", get_devices, 0),
    SD_BUS_VTABLE_END,
};
static const sd_bus_vtable dev_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Interface", "s", prop_iface, 0, 0),
    SD_BUS_PROPERTY("Ip4Connectivity", "u", prop_conn, 0, 0),
    SD_BUS_VTABLE_END,
};

static void fake_nm(const char *addr) {
  sd_bus *bus = NULL;
  if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, addr) < 0 || sd_bus_set_bus_client(bus, 1) < 0 ||
      sd_bus_start(bus) < 0 ||
      sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager",
                               nm_vtable, NULL) < 0 ||
      sd_bus_add_fallback_vtable(bus, NULL, "/org/freedesktop/NetworkManager/Devices",
                                 "org.freedesktop.NetworkManager.Device", dev_vtable, NULL, NULL) < 0 ||
      sd_bus_request_name(bus, "org.freedesktop.NetworkManager", 0) < 0)
    _exit(1);
  for (int i = 0; i < 2000; i++) /* at most ~20 s, then it goes */
    if (sd_bus_process(bus, NULL) == 0)
      sd_bus_wait(bus, 10000);
  _exit(0);
}

Test(netstate, reads_networkmanager_devices) {
  char dir[] = "/tmp/mhttp-nm.XXXXXX", addr[128], sock[96];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(sock, sizeof sock, "%s/bus", dir);
  snprintf(addr, sizeof addr, "unix:path=%s", sock);
  pid_t daemon = fork();
  if (daemon == 0) {
    execl("/usr/bin/dbus-daemon", "dbus-daemon", "--session", "--nofork", "--nopidfile", "--address", addr,
          (char *)NULL);
    _exit(127);
  }
  for (int i = 0; i < 200 && access(sock, F_OK) < 0; i++)
    usleep(10000);
  pid_t nm = fork();
  if (nm == 0)
    fake_nm(addr);
  setenv("DBUS_SYSTEM_BUS_ADDRESS", addr, 1);
  struct mh_config c;
  mh_config_defaults(&c);
  struct mh_netstate *ns;
  cr_assert_eq(mh_netstate_new(&ns), 0);
  const char *names[3] = {"lte0", "wifi0", "dsl0"};
  enum pol_link l[3] = {0};
  /* the fake registers its name a moment after the bus is up: ask until it answers (each
   * attempt is a fresh refresh: the cache's clock is ours) */
  for (int i = 0; i < 200 && l[0] == POL_LINK_UNKNOWN; i++) {
    mh_netstate_refresh(ns, &c, 1000000 + (uint64_t)i * MH_NETSTATE_ABSENT_US);
    mh_netstate_links(ns, names, 3, l);
    if (l[0] == POL_LINK_UNKNOWN)
      usleep(20000);
  }
  kill(nm, SIGKILL);
  kill(daemon, SIGTERM);
  waitpid(nm, NULL, 0);
  waitpid(daemon, NULL, 0);
  unlink(sock);
  rmdir(dir);
  cr_assert_eq(l[0], POL_LINK_PORTAL, "lte0: %d", l[0]);
  cr_assert_eq(l[1], POL_LINK_FULL, "wifi0: %d", l[1]);
  cr_assert_eq(l[2], POL_LINK_UNKNOWN, "dsl0 (no such device): %d", l[2]);
  mh_netstate_free(ns);
}
