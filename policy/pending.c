/* Pending load: connections placed since the engine's last metrics snapshot, per interface (policy/pending.h). */
#include "pending.h"

void pol_pending_note(struct pol_pending *l, int iface, uint64_t now_us) {
  if (iface < 0 || iface >= POL_PENDING_IFACES || !now_us)
    return;
  unsigned k = atomic_fetch_add(&l->next[iface], 1) % POL_PENDING_SLOTS;
  atomic_store(&l->t[iface][k], now_us);
}

unsigned pol_pending_count(struct pol_pending *l, int iface, uint64_t since_us, uint64_t now_us) {
  if (iface < 0 || iface >= POL_PENDING_IFACES)
    return 0;
  unsigned n = 0;
  for (unsigned k = 0; k < POL_PENDING_SLOTS; k++) {
    uint64_t t = atomic_load(&l->t[iface][k]);
    n += t > since_us && t <= now_us;
  }
  return n;
}

uint64_t pol_pending_since(uint64_t pub_us, uint64_t srtt_us) {
  uint64_t grace = srtt_us ? 2 * srtt_us : 200000;
  return pub_us > grace ? pub_us - grace : 0;
}
