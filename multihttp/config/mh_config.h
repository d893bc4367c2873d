/* Configuration: MHTTP_* environment variables over `key = value` lines of the config file; pure parsing, no I/O. */
#ifndef MH_CONFIG_H
#define MH_CONFIG_H
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

struct mh_url;

#define MH_CONFIG_ERR_MAX 256

/* Keys this issue understands (file key = env name lowercased without "MHTTP_"):
 *   disable   0|1|yes|no|true|false|on|off   the shim becomes a no-op
 *   ports     comma list of 1..65535, or *   TCP ports whose first write is sniffed (default 80,8080)
 *   log       off|error|info|debug           log level (default error)
 *   log_file  path                            log destination (default stderr)
 *   split     bool                            range splitting of large GETs (default on)
 *   preconnect bool                           at the program's connect(), open the other
 *                                             interfaces' connections to its server, and a
 *                                             standby one on its own path when an object
 *                                             splits (default on)
 *   probe_move bool                           a keep-alive request's probe may go out on a pooled
 *                                             connection of the path the policy picks (default on)
 *   networkmanager bool                       ask NetworkManager for each device's connectivity:
 *                                             portal, limited or none is not used (default on)
 *   portal_check off|http://HOST[:PORT]/PATH  check each interface with a GET of this URL (a 204
 *                                             or empty 200 expected; else a portal) (default off)
 *   rwnd_clamp off|K (1..16)                  a split's extra connections advertise at most K x
 *                                             their path's recorded BDP (default off)
 *   ifaces    comma list of interface names   paths, in preference order (default: every up
 *                                             interface with a global address)
 *   init_chunk  bytes (k/M suffix)            probe size (default: per path, pol_probe_size: 32 KiB cold, 1 RTT of a measured path up to 8 x 32 KiB)
 *   window    bytes (k/M suffix)              reassembly memory per process (default 24 MiB)
 *   max_conns 1..64                           upstream connections per object (default 8)
 *   path_conns 1..8                           most connections one path of a split object gets
 *                                             when it would spend the object in slow start
 *                                             (pol_path_conns; default 2, 1: one per path)
 *   min_split_size bytes                      remaining size below which no path is added (256 KiB)
 *   stats     path                            one JSON line per split object appended here
 *   dns_IFACE servers                         that interface's DNS servers for multiDNS
 *   policy    single:IF|round-robin|eaf|threshold|biased   path choice (default eaf)
 *   metered   comma list of interface names   costly paths, used past metered_gain only
 *   metered_gain, split_gain  0.2 or 20%, in [0, 1)   gain a metered / extra path must bring
 *   intent_size  bytes (k/M/G)                size hint for connect-time choice (Socket Intents)
 *   intent_category  query|bulk|stream        category hint (size wins when both are set)
 *   metrics   path                            per-interface metrics as JSON lines, appended
 *   metrics_store  path|off                    the host-wide metrics store shared by every process
 *                                             (default: $XDG_RUNTIME_DIR/mhttp/metrics, else
 *                                             /run/mhttp/metrics for root, else /tmp/mhttp-UID/metrics)
 * Other keys in the file belong to later modules and are ignored here. */
struct mh_config {
  int disabled;
  int all_ports;
  uint8_t ports[65536 / 8];
  int log_level;          /* enum mh_log_level */
  char log_file[256];     /* empty: stderr */
  int split;              /* range splitting on (1) or off (0) */
  int preconnect;         /* pre-connect the other interfaces at connect(), and the
                             program's path when an object splits (with split) */
  int probe_move;         /* the probe may leave the program's connection (mh_split.c) */
  int networkmanager;     /* ask NetworkManager for each device's connectivity (mh_netstate.h) */
  char portal_check[512]; /* "off" or the URL of the engine's own portal check (mh_portal.h) */
  double rwnd_k;          /* receive-window clamp factor of extra legs (mh_rwnd.h); 0: off */
  char ifaces[256];       /* comma list; empty: every up interface with a global address */
  uint64_t init_chunk;
  int init_chunk_set; /* init_chunk configured: the probe keeps that size (else sized per path) */
  uint64_t window;
  unsigned max_conns;
  unsigned path_conns; /* most connections per path of a split (pol_path_conns decides) */
  uint64_t min_split_size;
  char stats[256];       /* empty: no stats */
  struct pol_config pol; /* kind, single_if, gains (policy/policy.h) */
  char metered[256];     /* comma list of metered interface names; empty: none */
  char intent_size[32];  /* raw hints, kept so either key can be re-checked with the other */
  char intent_category[16];
  uint64_t intent_hint;    /* the size a connect-time choice decides on (POL_SIZE_UNKNOWN) */
  char metrics[256];       /* empty: no metrics file */
  char metrics_store[256]; /* empty: the default path; "off": no host-wide store */
  /* dns_<iface> keys of the config file: that interface's DNS servers for multiDNS
   * ("10.0.0.1,10.0.0.2"; MHTTP_DNS_<iface> in the environment wins, read by multidns/) */
  unsigned ndns;
  struct {
    char iface[16];
    char servers[192];
  } dns[8];
};

/* The config file's server list for interface `name` (dns_<name>), or NULL. */
const char *mh_config_dns(const struct mh_config *cfg, const char *name);

/* 1 when interface `name` is listed in cfg->metered. */
int mh_config_metered(const struct mh_config *cfg, const char *name);

/* Fills the defaults above. */
void mh_config_defaults(struct mh_config *cfg);

/* Sets one key from `src` (a file name or "environment"). 0, or -1 with a one-line message in
 * err naming the source, the key and the bad value. Unknown keys return 1 (ignored). */
int mh_config_set(struct mh_config *cfg, const char *key, const char *value, const char *src, char *err, size_t errlen);

/* Parses the text of a config file: `key = value`, '#' comments, blank lines. 0 or -1 (err set). */
int mh_config_parse_text(struct mh_config *cfg, const char *text, size_t len, const char *src, char *err,
                         size_t errlen);

/* Applies every MHTTP_* variable of the keys above (MHTTP_POLICY, MHTTP_METERED...) through `get` (getenv in the
 * shim, a table in tests). 0 or -1 (err set). */
int mh_config_apply_env(struct mh_config *cfg, const char *(*get)(const char *name), char *err, size_t errlen);

/* Whether a config file with this mode and owner may be trusted by a process running as `euid`.
 * The file decides where traffic goes and where logs are written, so someone who can rewrite it
 * can steer the program: like sshd's StrictModes, it must be owned by root or `euid` and not
 * writable by group or others (a group-writable file is accepted only for group root, which is
 * root's to give). 0, or -1 with a one-line message in err naming the path and the fix. */
int mh_config_check_owner(const char *path, unsigned mode, unsigned uid, unsigned gid, unsigned euid, char *err,
                          size_t errlen);

/* How mh_config_load reads: the shim passes its unhooked read and close (NULL: libc's). */
struct mh_config_io {
  ssize_t (*read)(int fd, void *buf, size_t n);
  int (*close)(int fd);
};
/* The configuration the engine runs with: the defaults, then the file MHTTP_CONFIG names (else
 * /etc/mhttp.conf when it exists; at most 64 KiB), trusted only as mh_config_check_owner says,
 * then every MHTTP_* variable (getenv). 0, or -1 with a one-line message in err. Not
 * reentrant (one buffer): each process's caller loads once (the shim at its start, `mhttp
 * ifaces`). */
int mh_config_load(struct mh_config *cfg, const struct mh_config_io *io, char *err, size_t errlen);

/* Parses a boolean the way every MHTTP_ switch does: 1, 0, or -1 when it is not one. */
int mh_config_parse_bool(const char *value);

/* Pure: the portal check's URL (portal_check: mh_url_parse's rules, http:// only: the check
 * must be what any client may send in clear) into *out. 0 or -1. */
int mh_config_portal_url(const char *url, struct mh_url *out);

static inline int mh_config_port_eligible(const struct mh_config *cfg, unsigned port) {
  return port < 65536 && (cfg->all_ports || (cfg->ports[port >> 3] >> (port & 7)) & 1);
}

#endif
