/* Receive-window clamp from a path's recorded bandwidth-delay product (see mh_rwnd.h). */
#include "mh_rwnd.h"

#include <math.h>

uint32_t mh_rwnd_clamp(uint64_t size, uint64_t srtt_min_us, uint64_t hs_us, double max_rate, double k) {
  if (!(k > 0) || !srtt_min_us || !(max_rate > 0) || !isfinite(max_rate) || !isfinite(k))
    return 0;
  if (!hs_us || hs_us / 2 > srtt_min_us || srtt_min_us / 2 > hs_us)
    return 0;
  double bdp = max_rate * (double)srtt_min_us / 1e6;
  if ((double)size < MH_RWND_MIN_BDPS * bdp)
    return 0;
  double w = k * bdp;
  if (w < MH_RWND_MIN)
    return MH_RWND_MIN;
  if (w > MH_RWND_MAX)
    return MH_RWND_MAX;
  return (uint32_t)w;
}

uint32_t mh_rwnd_grow(uint32_t w, uint64_t bytes, uint64_t elapsed_us, uint64_t srtt_min_us) {
  if (!w || !srtt_min_us || elapsed_us < srtt_min_us)
    return w;
  double allowed = (double)w * (double)elapsed_us / (double)srtt_min_us;
  if ((double)bytes < 0.9 * allowed)
    return w;
  return w >= MH_RWND_MAX / 2 ? MH_RWND_MAX : 2 * w;
}
