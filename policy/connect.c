/* Connect-time path usability from the kernel's route answers (policy/connect.h). */
#include "connect.h"

int pol_connect_usable(const struct pol_routes *r, uint32_t *usable, int *kernel) {
  *usable = 0;
  *kernel = -1;
  if (r->kernel_oif < 0 || !r->kernel_via)
    return -1;
  for (unsigned i = 0; i < r->n && i < 32; i++) {
    int idx = (int)r->ifindex[i];
    if (idx <= 0)
      continue;
    if (idx == r->kernel_oif && *kernel < 0)
      *kernel = (int)i;
    if (r->oif[i] == idx)
      *usable |= 1u << i;
  }
  return 0;
}
