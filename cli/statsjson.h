/* A stats snapshot as one JSON object: the --progress-json lines and the --stats file. Pure. */
#ifndef CLI_STATSJSON_H
#define CLI_STATSJSON_H
#include <stddef.h>

#include "mhttp.h"

/* Writes {"event":EVENT,"http_status":..,"total":N|null,"done":..,"fetched":..,"resumed":..,
 * "rate":..,"elapsed":..,"split":0|1,"paths":[{"iface":..,"replica":..,"mirror":..,"up":..,"bytes":..,
 * "rate":..,"srtt_us":..,"in_flight":..},...]} (no newline). Returns the length it needed
 * (like snprintf: >= cap means it was cut). */
size_t cli_stats_json(const char *event, const mhttp_xfer_stats *x, const mhttp_path_stats *paths,
                      unsigned np, char *buf, size_t cap);

#endif
