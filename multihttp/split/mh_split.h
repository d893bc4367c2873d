/* Range splitting of one object: the probe, the managed transfer over several paths (scheduler/), reassembly and failover, delivered into a sink. */
#ifndef MH_SPLIT_H
#define MH_SPLIT_H
#include "mh_digest.h"
#include "mh_path.h"
#include "mh_reasm.h"
#include "mh_taint.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

struct mh_split;
struct mh_upstream;
struct mh_sink;
struct sockaddr_storage;
struct mh_tls;
struct mh_paths;

/* What every split of one engine works with, lent by the engine (struct mh_engine.splits) to
 * each owner, which passes it in mh_split_owner.env. Loop thread. */
struct mh_split_env {
  struct mh_paths *paths;        /* the engine's paths: pool, metrics, resolvers, policy */
  struct mh_reasm_budget budget; /* bytes every object's reassembly holds, and the window */
  struct mh_taint taint;         /* objects whose split failed the origin's digest */
  char *io;                      /* one leg read before framing (MH_SPLIT_IO bytes) */
  unsigned next_id;              /* the last split's id (log lines) */
  int one_path;                  /* tests: split with one path to one server (the engine's
                                    hooks.split_one_path) */
};
#define MH_SPLIT_IO (128 * 1024)

/* How a split ended; its owner acts on it (the session: mh_session_split.c, mh__split_end). */
enum mh_split_end {
  MH_SPLIT_RUNNING = 0, /* (in a result: the owner freed the split before it ended) */
  MH_SPLIT_END_RELAY,   /* not managed: the owner relays (raw: the answer read so far, to be
                           framed by the owner; resend: send the program's request first) */
  MH_SPLIT_END_DONE,    /* every byte of the rewritten response went to the program */
  MH_SPLIT_END_RESET,   /* no path can serve the rest: the program sees a reset */
  MH_SPLIT_END_EOF,     /* ... and the origin's last answer ended with a close: the program
                           sees its connection close after the bytes it got (a truncated body) */
};

/* The outcome, handed to the sink's end() (mh_sink.h) exactly once: the owner reads it there,
 * and acts on it once mh_split_pump returned (never inside the sink's callback). Pointers
 * into the split stay valid until mh_split_free. */
struct mh_split_result {
  enum mh_split_end end;
  int err;         /* the sink's view: 0 every body byte was taken, -ENOTSUP END_RELAY (no head
                      was offered), -ECONNABORTED END_EOF, -ECONNRESET END_RESET, -ECANCELED
                      the owner freed the split first, or the error head/data returned */
  const char *raw; /* END_RELAY: the answer read so far */
  size_t raw_len;
  const char *req; /* the program's request bytes, for resend */
  size_t req_len;
  int resend;
  /* The owner's connection cannot carry the next request (up_dead for END_DONE; for a resend,
   * answers of ours are due on it or it was given up), but a next request is wanted (the
   * resend; a keep-alive program's next one): the owner decides whether to ask for a
   * replacement on route (mh_pool_dial, after mh_split_free, which pools the split's idle
   * connections). The split opens none for its owner. */
  int replace;
  struct mh_route route;
  int up_eof, up_reset; /* END_RELAY: the primary upstream ended (EOF, or reset) */
  int up_dead;          /* END_DONE: the primary upstream cannot carry another request */
  int digest_bad;       /* END_RESET: the object's bytes did not match the origin's digest
                           (mh_split_digest); its last byte was never offered */
};

/* A resumed object (the API's option continue): byte runs the destination holds already, from
 * a download of the representation with this length and validator. Applied when the probe's
 * answer has the same length and strong validator (validator NULL: none was known, the runs
 * are taken as they are, like curl -C -); else the whole object is fetched. Only for a sink
 * that takes any order. */
struct mh_split_run {
  uint64_t off, len;
};
struct mh_split_have {
  const struct mh_split_run *v; /* sorted, disjoint */
  unsigned n;
  uint64_t total;        /* 0: unknown (the runs must lie within the object) */
  const char *validator; /* the If-Range value (mh_split_validator of that download) */
};

/* Another URL serving the same representation (the API's mirrors): after the probe's 206 with
 * a strong validator its addresses get legs like replicas (mh_split_legs.c), whose requests are
 * the owner's with the mirror's request-target and Host (mh_rr_range_request_to), over its own
 * transport, every answer checked against the probe. One that answers otherwise leaves the
 * object. Strings and tls belong to the owner and outlive the split. */
struct mh_split_mirror {
  const char *target;       /* origin-form request-target, "/path?query" */
  const char *host;         /* the Host value, "b.test" or "b.test:8080" */
  const char *name;         /* its host name, as the per-interface resolvers are asked */
  unsigned port;            /* its port (resolver answers carry none) */
  const struct mh_tls *tls; /* NULL: plain TCP */
  int same_origin;          /* the owner's request's scheme, host and port: its credentials
                               go there too (mh_rr_mirror) */
  /* The owner's own lookup of name (with the port); naddrs is 0 until it answered and may
   * grow between loop turns: the split reads it at every tick. */
  const struct sockaddr_storage *addrs;
  int naddrs;
};

/* A pinned replica: addr serves the owner's request too (its port is the request's), reached
 * on interface iface only (NULL: on every one); it joins as an address that interface's
 * resolver named (mh__replicas_update). */
struct mh_split_pin {
  struct sockaddr_storage addr;
  const char *iface;
};

/* Calls from the split to whoever started it. */
struct mh_split_owner {
  struct mh_split_env *env; /* the engine's (mh_engine_split_env); NULL: the split refuses */
  /* The split has news (a connection or timer event moved it): the owner runs mh_split_pump and
   * acts on the result its sink's end() got. Called from the split's own event callbacks, never from inside
   * mh_split_pump. */
  void (*kick)(void *arg);
  void *arg;
  /* The program's server when up cannot tell yet (a replacement still connecting); NULL when
   * unknown. */
  const struct sockaddr_storage *peer;
  /* Where plain would have put the program's connection, when the engine's connect-time choice
   * bound it to another interface (the kernel's own source address); NULL: it is where plain
   * would be (the kernel's choice, or the program's own bind). Copied at start. */
  const struct sockaddr_storage *plain_src;
  /* The transport of the owner's connection: NULL for plain TCP (the session), else a TLS
   * connection's description (mh_upstream.h; the API's https transfers): every connection the
   * split opens (other paths, replicas, reconnects, a replacement or resend) is made with it
   * and pooled under it (the pool keeps its own copy of the key). Must outlive the split. */
  const struct mh_tls *tls;
  /* What the destination holds already (copied at start); NULL: nothing. */
  const struct mh_split_have *have;
  /* Mirrors (owned by the owner, outliving the split; at most MH_SPLIT_MIRRORS used) and
   * pinned replicas (copied at start; at most MH_SPLIT_PINS). With either, a single interface
   * is split too: there are several servers. */
  const struct mh_split_mirror *mirrors;
  unsigned nmirrors;
  const struct mh_split_pin *pins;
  unsigned npins;
};
#define MH_SPLIT_MIRRORS 16
#define MH_SPLIT_PINS 16

/* Starts splitting the program's request `req` (its complete head, as written). up is the
 * program's own connection to its server: the split watches, reads and writes it until the
 * owner acts on the result, but up keeps the owner's callbacks: the owner forwards its events
 * (mh_split_up_event). The response goes to sink (mh_sink.h), which the split attaches
 * to (its writable callback) and ends exactly once with the result; it must outlive the split. Returns 0,
 * -ENOTSUP (not eligible: relay it; the sink is untouched), -ENETUNREACH (the same, for now:
 * one path to the one server; mh_split_adopt may take the answer over when a path appears),
 * -EINVAL (no own->env) or -ENOMEM. Loop thread. */
int mh_split_start(const struct mh_split_owner *own, uv_loop_t *loop, struct mh_upstream *up, const char *req,
                   size_t req_len, struct mh_sink *sink, struct mh_split **out);

/* An answer the owner is relaying on up, for mh_split_adopt: its head, as the origin sent it,
 * and how much of its body went to the sink already. */
struct mh_split_relayed {
  const char *head;
  size_t head_len;
  uint64_t total; /* its Content-Length */
  uint64_t pos;   /* body bytes read from up so far (the sink has them, or will have them
                     before any byte the split offers: a socket's queue) */
  int closes;     /* the origin ends the connection after this answer */
};
/* A path appeared while the owner relays the answer to req (mh_split_start said -ENETUNREACH
 * for it): the rest of that answer is split, the program's connection keeping its share as
 * the first leg (mh_split_adopt.c). Only a 200 with one Content-Length and a strong validator,
 * for a request without a Range. Returns 0 (the split owns up as after
 * mh_split_start), -ENETUNREACH (still one path), -ENOTSUP (keep relaying; nothing was
 * sent, up is the owner's again and must be watched anew) or -ENOMEM. Loop thread. */
int mh_split_adopt(const struct mh_split_owner *own, uv_loop_t *loop, struct mh_upstream *up, const char *req,
                   size_t req_len, const struct mh_split_relayed *rel, struct mh_sink *sink, struct mh_split **out);
/* Delivers what the sink takes and advances the transfer. 0, or -errno when the sink failed
 * (EPIPE: the program closed its end). Called by the owner (mh_split_owner.kick). */
int mh_split_pump(struct mh_split *sp);
/* The owner's upstream (up of mh_split_start) had an event: the split handles it, then kicks.
 * Loop thread. */
void mh_split_up_event(struct mh_split *sp, int status, int events);
/* 1 when bytes wait for the sink (it took fewer than offered, or more came since). */
int mh_split_want_write(const struct mh_split *sp);
/* The digest the origin named for the whole object (its probe's Repr-Digest or Digest), which
 * the split checks itself for an ordered sink; the owner of a sink taking any order checks its
 * destination against it at the end. 1 and *out, *field (the field's name) set, or 0: none
 * (or the split fetches a span only). Loop thread, once the head went to the sink. */
int mh_split_digest(const struct mh_split *sp, struct mh_digest *out, const char **field);
/* One path of a split as its owner reports it (the API's path statistics): an interface and a
 * server (an address of the owner's server, a replica's, or a mirror's) its connections went
 * to, and what they carried. */
struct mh_split_path {
  char iface[16];
  struct sockaddr_storage replica; /* the server's address */
  unsigned mirror;                 /* 0: the owner's request's server; k: own.mirrors[k - 1] */
  int up;                          /* a connection there is connected and usable */
  uint64_t bytes;                  /* body bytes of the object taken from it */
  uint32_t srtt_us;                /* its connection's smoothed RTT, 0 unknown */
  unsigned in_flight;              /* ranges asked there and not yet complete */
  /* The server left the object on this interface: MH_SPLIT_PATH_BAD (it answered for another
   * representation, unusably or at a trickle: why says how), else the -errno its connection
   * failed with (mh_upstream_error's: -EKEYREJECTED a certificate, -EPROTO a TLS handshake...);
   * 0 while it serves. A replica or mirror is not asked again there; the program's own server
   * may be, when the path comes back (up again, the first cause kept). */
  int dropped;
  const char *why; /* static text, "" when not dropped */
};
#define MH_SPLIT_PATH_BAD 1
/* Fills up to max entries, one per (interface, server) the split opened a connection to, in the
 * order they were first opened; returns how many there are (may exceed max). Loop thread. */
int mh_split_paths(const struct mh_split *sp, struct mh_split_path *out, int max);

/* Bytes of the object the destination had already and the split will not fetch (0 until the
 * probe's answer, or when the representation changed). Loop thread. */
uint64_t mh_split_resumed(const struct mh_split *sp);
/* The representation's strong validator as If-Range sends it (NUL-terminated copy valid until
 * mh_split_free), NULL before the probe's answer or without one. Loop thread. */
const char *mh_split_validator(const struct mh_split *sp);

/* Limits the bytes read from the network, over every connection of the split together, to
 * rate bytes/s (0: none, the default); at once while it runs. Reading less lets TCP's receive
 * windows close: the servers send at the rate. Loop thread. */
void mh_split_set_rate(struct mh_split *sp, uint64_t rate);

/* Ends the split: extra connections go to the pool when clean, else are closed (reset when
 * abort). The primary upstream is the owner's again (it stopped watching it).
 * Writes the MHTTP_STATS line. Loop thread. */
void mh_split_free(struct mh_split *sp, int abort);

#endif
