/* A stats snapshot as one JSON object: the --progress-json lines and the --stats file. Pure. */
#ifndef CLI_STATSJSON_H
#define CLI_STATSJSON_H
#include <stddef.h>

#include "mhttp.h"

/* Why a path, mirror or replica left the transfer (an MHTTP_EV_PATH_DOWN with a cause). */
struct cli_cause {
  char iface[16]; /* "" for a mirror whose name did not resolve */
  char replica[46];
  unsigned mirror;   /* 0: the URL's server or a replica of it; k: the k-th mirror */
  int exit;          /* curl's exit code for the cause (cli_exit_code) */
  char message[200]; /* the library's detail */
};

/* What one JSON object holds: the event, the cause of a path-down event (NULL otherwise), the
 * snapshot, and every cause recorded so far. */
struct cli_stats_doc {
  const char *event;
  const struct cli_cause *cause;
  const mhttp_xfer_stats *x;
  const mhttp_path_stats *paths;
  unsigned np;
  const struct cli_cause *dropped;
  unsigned ndropped;
};

/* Writes {"event":EVENT,["cause":CAUSE,]"http_status":..,"total":N|null,"done":..,"fetched":..,
 * "resumed":..,"rate":..,"elapsed":..,"split":0|1,"paths":[{"iface":..,"replica":..,"mirror":..,
 * "up":..,"bytes":..,"rate":..,"srtt_us":..,"in_flight":..},...],"dropped":[CAUSE,...]} (no
 * newline), a CAUSE being {"iface":..,"replica":..,"mirror":..,"exit":..,"message":..}. Returns
 * the length it needed (like snprintf: >= cap means it was cut). */
size_t cli_stats_json(const struct cli_stats_doc *d, char *buf, size_t cap);

#endif
