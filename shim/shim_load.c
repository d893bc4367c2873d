/* Connections the shim placed on each interface that the engine's published metrics cannot count yet. */
#include "shim_load.h"

void shim_load_note(struct shim_load *l, int iface, uint64_t now_us) {
  if (iface < 0 || iface >= SHIM_LOAD_IFACES || !now_us)
    return;
  unsigned k = atomic_fetch_add(&l->next[iface], 1) % SHIM_LOAD_SLOTS;
  atomic_store(&l->t[iface][k], now_us);
}

unsigned shim_load_pending(struct shim_load *l, int iface, uint64_t since_us, uint64_t now_us) {
  if (iface < 0 || iface >= SHIM_LOAD_IFACES)
    return 0;
  unsigned n = 0;
  for (unsigned k = 0; k < SHIM_LOAD_SLOTS; k++) {
    uint64_t t = atomic_load(&l->t[iface][k]);
    n += t > since_us && t <= now_us;
  }
  return n;
}

uint64_t shim_load_since(uint64_t pub_us, uint64_t srtt_us) {
  uint64_t grace = srtt_us ? 2 * srtt_us : 200000;
  return pub_us > grace ? pub_us - grace : 0;
}
