/* Paths that come and go: what a refresh of a split's interface table decides per interface (mh_path_refresh), when two kernel tables are the same, which rtnetlink messages count (pure logic, exact answers), and whether an interface still holds an address. */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>

#include "mh_netwatch.h"
#include "mh_path.h"

static struct mh_iface ifc(const char *name, const char *a) {
  struct mh_iface f;
  memset(&f, 0, sizeof f);
  strcpy(f.name, name);
  struct sockaddr_in *in = (struct sockaddr_in *)&f.addr;
  in->sin_family = AF_INET;
  inet_pton(AF_INET, a, &in->sin_addr);
  return f;
}

static int addr_is(const struct mh_iface *f, const char *a) {
  char buf[64];
  return !strcmp(mh_path_ntop((const struct sockaddr *)&f->addr, buf, sizeof buf), a);
}

Test(refresh, unchanged_table_is_all_same) {
  struct mh_iface cur[MH_MAX_IFACES] = {ifc("wifi0", "10.201.1.2"), ifc("lte0", "10.202.1.2")};
  struct mh_iface now[] = {ifc("lte0", "10.202.1.2"), ifc("wifi0", "10.201.1.2")}; /* order does not matter */
  enum mh_path_event ev[MH_MAX_IFACES];
  uint32_t down = 0;
  cr_assert_eq(mh_path_refresh(cur, 2, MH_MAX_IFACES, &down, now, 2, ev), 2);
  cr_assert_eq(ev[0], MH_PATH_SAME);
  cr_assert_eq(ev[1], MH_PATH_SAME);
  cr_assert_eq(down, 0);
}

/* A link that goes down, stays down at the next event, and comes back: gone once, same while
 * gone, back; its index never moves (legs and stats name it by index). */
Test(refresh, flap_is_gone_then_same_then_back) {
  struct mh_iface cur[MH_MAX_IFACES] = {ifc("wifi0", "10.201.1.2"), ifc("lte0", "10.202.1.2")};
  struct mh_iface only_wifi[] = {ifc("wifi0", "10.201.1.2")};
  struct mh_iface both[] = {ifc("wifi0", "10.201.1.2"), ifc("lte0", "10.202.1.2")};
  enum mh_path_event ev[MH_MAX_IFACES];
  uint32_t down = 0;
  cr_assert_eq(mh_path_refresh(cur, 2, MH_MAX_IFACES, &down, only_wifi, 1, ev), 2);
  cr_assert_eq(ev[0], MH_PATH_SAME);
  cr_assert_eq(ev[1], MH_PATH_GONE);
  cr_assert_eq(down, 2u);
  cr_assert_eq(mh_path_refresh(cur, 2, MH_MAX_IFACES, &down, only_wifi, 1, ev), 2);
  cr_assert_eq(ev[1], MH_PATH_SAME, "still gone: nothing new to do");
  cr_assert_eq(down, 2u);
  cr_assert_eq(mh_path_refresh(cur, 2, MH_MAX_IFACES, &down, both, 2, ev), 2);
  cr_assert_eq(ev[1], MH_PATH_BACK);
  cr_assert_eq(down, 0);
  cr_assert_str_eq(cur[1].name, "lte0");
}

Test(refresh, address_change_takes_the_new_address) {
  struct mh_iface cur[MH_MAX_IFACES] = {ifc("wifi0", "10.201.1.2"), ifc("lte0", "10.202.1.2")};
  struct mh_iface now[] = {ifc("wifi0", "10.201.1.2"), ifc("lte0", "10.202.1.7")};
  enum mh_path_event ev[MH_MAX_IFACES];
  uint32_t down = 0;
  cr_assert_eq(mh_path_refresh(cur, 2, MH_MAX_IFACES, &down, now, 2, ev), 2);
  cr_assert_eq(ev[0], MH_PATH_SAME);
  cr_assert_eq(ev[1], MH_PATH_READDR);
  cr_assert(addr_is(&cur[1], "10.202.1.7"));
  cr_assert_eq(down, 0);
}

/* Back with another address (a renew while the link was away): back, at the new address. */
Test(refresh, back_with_another_address) {
  struct mh_iface cur[MH_MAX_IFACES] = {ifc("wifi0", "10.201.1.2"), ifc("lte0", "10.202.1.2")};
  struct mh_iface now[] = {ifc("wifi0", "10.201.1.2"), ifc("lte0", "10.202.1.9")};
  enum mh_path_event ev[MH_MAX_IFACES];
  uint32_t down = 2;
  mh_path_refresh(cur, 2, MH_MAX_IFACES, &down, now, 2, ev);
  cr_assert_eq(ev[1], MH_PATH_BACK);
  cr_assert(addr_is(&cur[1], "10.202.1.9"));
}

Test(refresh, new_interface_is_appended) {
  struct mh_iface cur[MH_MAX_IFACES] = {ifc("wifi0", "10.201.1.2"), ifc("lte0", "10.202.1.2")};
  struct mh_iface now[] = {ifc("dsl0", "10.203.1.2"), ifc("wifi0", "10.201.1.2"), ifc("lte0", "10.202.1.2")};
  enum mh_path_event ev[MH_MAX_IFACES];
  uint32_t down = 0;
  cr_assert_eq(mh_path_refresh(cur, 2, MH_MAX_IFACES, &down, now, 3, ev), 3);
  cr_assert_eq(ev[0], MH_PATH_SAME);
  cr_assert_eq(ev[1], MH_PATH_SAME);
  cr_assert_eq(ev[2], MH_PATH_NEW);
  cr_assert_str_eq(cur[2].name, "dsl0");
  cr_assert(addr_is(&cur[2], "10.203.1.2"));
}

/* A full table takes no more: the object goes on with the paths it has. */
Test(refresh, full_table_appends_nothing) {
  struct mh_iface cur[MH_MAX_IFACES] = {ifc("wifi0", "10.201.1.2")};
  struct mh_iface now[] = {ifc("wifi0", "10.201.1.2"), ifc("lte0", "10.202.1.2")};
  enum mh_path_event ev[MH_MAX_IFACES];
  uint32_t down = 0;
  cr_assert_eq(mh_path_refresh(cur, 1, 1, &down, now, 2, ev), 1);
  cr_assert_eq(ev[0], MH_PATH_SAME);
}

/* Everything gone at once (the host went offline): each interface gone, in its place. */
Test(refresh, all_gone) {
  struct mh_iface cur[MH_MAX_IFACES] = {ifc("wifi0", "10.201.1.2"), ifc("lte0", "10.202.1.2")};
  enum mh_path_event ev[MH_MAX_IFACES];
  uint32_t down = 0;
  cr_assert_eq(mh_path_refresh(cur, 2, MH_MAX_IFACES, &down, NULL, 0, ev), 2);
  cr_assert_eq(ev[0], MH_PATH_GONE);
  cr_assert_eq(ev[1], MH_PATH_GONE);
  cr_assert_eq(down, 3u);
}

Test(refresh, event_names) {
  cr_assert_str_eq(mh_path_event_str(MH_PATH_GONE), "gone");
  cr_assert_str_eq(mh_path_event_str(MH_PATH_READDR), "new address");
  cr_assert_str_eq(mh_path_event_str((enum mh_path_event)42), "?");
}

Test(netwatch, same_table) {
  struct mh_netwatch_table a = {.n = 2}, b;
  a.v[0] = ifc("wifi0", "10.201.1.2");
  a.v[1] = ifc("lte0", "10.202.1.2");
  b = a;
  cr_assert(mh_netwatch_same(&a, &b));
  b.v[1] = ifc("lte0", "10.202.1.7");
  cr_assert_not(mh_netwatch_same(&a, &b), "an address changed");
  b = a;
  b.n = 1;
  cr_assert_not(mh_netwatch_same(&a, &b), "an interface went");
  b = a;
  strcpy(b.v[1].name, "lte1");
  cr_assert_not(mh_netwatch_same(&a, &b), "another interface");
}

/* Appends one message of type t with a payload of len bytes to buf at *off. */
static void put_msg(char *buf, size_t *off, int type, size_t len) {
  struct nlmsghdr *h = (struct nlmsghdr *)(buf + *off);
  memset(h, 0, NLMSG_SPACE(len));
  h->nlmsg_len = (uint32_t)NLMSG_LENGTH(len);
  h->nlmsg_type = (uint16_t)type;
  *off += NLMSG_SPACE(len);
}

Test(netwatch, relevant_messages) {
  char buf[1024] __attribute__((aligned(NLMSG_ALIGNTO)));
  size_t off = 0;
  put_msg(buf, &off, RTM_DELADDR, sizeof(struct ifaddrmsg));
  put_msg(buf, &off, RTM_NEWNEIGH, sizeof(struct ndmsg)); /* neighbours: not a path change */
  put_msg(buf, &off, RTM_NEWADDR, sizeof(struct ifaddrmsg));
  put_msg(buf, &off, RTM_NEWROUTE, sizeof(struct rtmsg));
  put_msg(buf, &off, RTM_NEWLINK, sizeof(struct ifinfomsg));
  cr_assert_eq(mh_netwatch_relevant(buf, off), 4);
  cr_assert_eq(mh_netwatch_relevant(buf, 0), 0);
  /* a truncated message is not read past its end */
  cr_assert_eq(mh_netwatch_relevant(buf, NLMSG_SPACE(sizeof(struct ifaddrmsg)) - 4), 0);
  off = 0;
  put_msg(buf, &off, NLMSG_ERROR, sizeof(struct nlmsgerr));
  cr_assert_eq(mh_netwatch_relevant(buf, off), 1, "an error: the table is read again");
}

/* Whether an interface still holds an address (a leg from it keeps its way back): the loopback
 * interface of any host holds 127.0.0.1 and nothing else here. */
Test(path, has_addr_reads_the_kernels_addresses) {
  struct mh_iface lo = ifc("lo", "127.0.0.1"), other = ifc("lo", "10.255.255.254");
  cr_assert(mh_path_has_addr("lo", (const struct sockaddr *)&lo.addr));
  cr_assert_not(mh_path_has_addr("lo", (const struct sockaddr *)&other.addr));
  cr_assert_not(mh_path_has_addr("nosuchif0", (const struct sockaddr *)&lo.addr));
}
