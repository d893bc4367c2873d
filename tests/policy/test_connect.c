/* Connect-time path usability (policy/connect.h): one row per kernel answer, the exact usable mask and kernel index. */
#include <criterion/criterion.h>

#include "policy/connect.h"

/*
 * Three interfaces, ifindex 2 (wifi0), 3 (lte0), 4 (eth1). oif[i] is the kernel's answer for
 * a packet from interface i's address; koif/via its answer without a source. Source policy
 * routing present: each interface's address routes out of itself; absent: every address
 * routes out of the default interface (2), so only that one is usable.
 */
struct row {
  const char *why;
  unsigned ifindex[3];
  int oif[3];
  int koif, via;
  int rc;
  uint32_t usable;
  int kernel;
};

/* clang-format off */
static const struct row rows[] = {
    {"source routing on every interface", {2, 3, 4}, {2, 3, 4}, 2, 1, 0, 0x7, 0},
    {"no source routing: only the default interface is usable", {2, 3, 4}, {2, 2, 2}, 2, 1, 0, 0x1, 0},
    {"the kernel's route takes lte0", {2, 3, 4}, {2, 3, 4}, 3, 1, 0, 0x7, 1},
    {"no route from eth1's address", {2, 3, 4}, {2, 3, -1}, 2, 1, 0, 0x3, 0},
    {"an interface gone (ifindex unknown) is never usable", {2, 0, 4}, {2, 0, 4}, 2, 1, 0, 0x5, 0},
    {"the kernel's route is on none of ours (a VPN): kernel unknown", {2, 3, 4}, {2, 3, 4}, 9, 1, 0, 0x7, -1},
    {"no route to the destination: left to the kernel", {2, 3, 4}, {-1, -1, -1}, -1, 0, -1, 0, -1},
    {"destination on one of our links (no gateway): left to the kernel", {2, 3, 4}, {2, 3, 4}, 2, 0, -1, 0, -1},
};
/* clang-format on */

Test(pol_connect, usable_table) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const struct row *r = &rows[i];
    struct pol_routes in = {.n = 3, .ifindex = r->ifindex, .oif = r->oif, .kernel_oif = r->koif, .kernel_via = r->via};
    uint32_t usable = 0xdead;
    int kernel = 42;
    cr_assert_eq(pol_connect_usable(&in, &usable, &kernel), r->rc, "%s: rc", r->why);
    cr_assert_eq(usable, r->usable, "%s: usable 0x%x, want 0x%x", r->why, usable, r->usable);
    cr_assert_eq(kernel, r->kernel, "%s: kernel %d, want %d", r->why, kernel, r->kernel);
  }
}
