/* Public API of libmhttp (link with -lmhttp, pkg-config libmhttp): download a URL over every network of the host, split in ranges, into a file, an fd or a callback. It interposes nothing. */
#ifndef MHTTP_H
#define MHTTP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MHTTP_API __attribute__((visibility("default")))
#else
#define MHTTP_API
#endif

/* The API version this header describes. A release that only adds keeps MAJOR (and the
 * SONAME, libmhttp.so.0); structs below only ever grow at their end, and every struct the
 * caller fills or reads starts with its size (set it to sizeof before the call). */
#define MHTTP_VERSION_MAJOR 0
#define MHTTP_VERSION_MINOR 1
#define MHTTP_VERSION_PATCH 0

/*
 * Threading
 * ---------
 * A session owns one engine: its network state (interfaces, per-interface resolvers, metrics,
 * the pool of connections) and one event loop. Either
 *   - the session runs its loop on a thread of its own (MHTTP_SESSION_THREAD): callbacks then
 *     run on that thread, and every call below may be made from any thread (the session
 *     serialises them); or
 *   - the caller embeds it (flags 0): it polls mhttp_get_fd() for readability, with
 *     mhttp_get_timeout(), in its own poll/epoll/select loop, and calls mhttp_perform() when
 *     the fd is readable or the timeout expired. Callbacks run inside mhttp_perform(), on the
 *     caller's thread. Calls other than mhttp_wakeup() and mhttp_xfer_cancel() must then come
 *     from that one thread.
 * mhttp_wakeup() and mhttp_xfer_cancel() are safe from any thread and from signal-free
 * contexts at any time. No callback may call mhttp_session_free() or mhttp_xfer_free() on the
 * transfer it reports; everything else (start, pause, cancel, stats) is allowed.
 *
 * Errors
 * ------
 * Every call that can fail returns an mhttp_code; MHTTP_OK is 0. The codes are stable (new
 * ones are only added). mhttp_strerror() names each. A transfer's own outcome is its result
 * (mhttp_xfer_result) with a message (mhttp_xfer_errmsg) that carries the detail: the HTTP
 * status, the system error, or the TLS library's text as curl reports it. A call refused
 * with a code leaves a message naming what is wrong ("option interface: no interface named
 * 'eth9' on this host", "no destination: ..."): mhttp_session_errmsg for the session's calls,
 * mhttp_xfer_errmsg for a transfer's until it ended. A NULL handle leaves none.
 */
typedef enum mhttp_code {
  MHTTP_OK = 0,
  MHTTP_E_INVAL = 1,  /* a NULL or malformed argument, or a call in the wrong state */
  MHTTP_E_OPTION = 2, /* an unknown option name, or a value the option does not take */
  MHTTP_E_NOMEM = 3,
  MHTTP_E_URL = 4,        /* a URL that cannot be parsed, or a scheme other than http/https */
  MHTTP_E_RESOLVE = 5,    /* the host name did not resolve on any interface        (curl 6) */
  MHTTP_E_CONNECT = 6,    /* no interface could connect to any address              (curl 7) */
  MHTTP_E_PROTOCOL = 7,   /* the server's answer was malformed                      (curl 8) */
  MHTTP_E_PARTIAL = 8,    /* the body ended before its announced length            (curl 18) */
  MHTTP_E_HTTP = 9,       /* the server answered with a status >= 400              (curl 22) */
  MHTTP_E_WRITE = 10,     /* the destination refused the bytes (disk full, fd closed,
                             callback returned an error)                            (curl 23) */
  MHTTP_E_TIMEOUT = 11,   /* the connect timeout or the transfer's time limit      (curl 28) */
  MHTTP_E_TLS = 12,       /* the TLS handshake failed                              (curl 35) */
  MHTTP_E_CERT = 13,      /* the server's certificate did not verify               (curl 60) */
  MHTTP_E_CHECKSUM = 14,  /* the body's digest differs from the one asked for, or from
                             the origin's Repr-Digest / Digest of a split object; the
                             destination keeps the bytes received                  (aria2 32) */
  MHTTP_E_RESUME = 15,    /* the resume file is unreadable or belongs to another URL */
  MHTTP_E_CANCELED = 16,  /* mhttp_xfer_cancel() ended the transfer                 (curl 42) */
  MHTTP_E_REDIRECTS = 17, /* more redirects than the option max-redirs allows       (curl 47) */
  MHTTP_E_SYSTEM = 18,    /* an operating-system error; the message names it */
  MHTTP_E_BUSY = 19,      /* the transfer is still running (mhttp_xfer_result) */
  MHTTP_E_INTERFACE = 20, /* the option interface names no interface of this host     (curl 45) */
  MHTTP_E_CACERT = 21,    /* the option cacert names a file that cannot be read     (curl 77) */
} mhttp_code;

/* A short English text for code ("could not resolve host"); never NULL, static, any thread. */
MHTTP_API const char *mhttp_strerror(mhttp_code code);

/* The exit status the curl command gives for the same failure (the numbers in the table above;
 * aria2's 32 for a checksum mismatch), what the mhttp command exits with: 0 for MHTTP_OK, 2
 * (curl's "failed initialization") for the codes curl has no own number for (INVAL, OPTION,
 * SYSTEM, BUSY, and any code a later version adds), 27 NOMEM, 3 URL, 36 RESUME, 42 CANCELED.
 * Pure, any thread. */
MHTTP_API int mhttp_exit_code(mhttp_code code);

/* The library version as "MAJOR.MINOR.PATCH"; a static string, any thread. */
MHTTP_API const char *mhttp_version(void);

/* 1 when the transparent preload library (libmhttp.so in LD_PRELOAD) is active in this process
 * (loaded, configured, not disabled by MHTTP_DISABLE or a configuration error), else 0. The API
 * library works the same either way: its own connections are never taken over. Any thread. */
MHTTP_API int mhttp_shim_active(void);

/* ------------------------------------------------------------------------------------------ */
/* Sessions                                                                                     */

typedef struct mhttp_session mhttp_session;
typedef struct mhttp_xfer mhttp_xfer;

#define MHTTP_SESSION_THREAD 0x1u /* run the loop on a thread of the session's own */

/* Makes a session (flags: 0 or MHTTP_SESSION_THREAD). Its configuration starts as the
 * environment's MHTTP_* variables would make it for the preload library (interfaces found on
 * the host, their DNS servers, the default policy); mhttp_session_setopt changes it before the
 * first transfer starts. */
MHTTP_API mhttp_code mhttp_session_new(unsigned flags, mhttp_session **out);

/* Sets a session option by name (the table below): the same names, without the leading
 * "--", as the mhttp command's long options. An unknown name, a transfer-only name or a bad
 * value: MHTTP_E_OPTION, nothing changed (an interface the host does not have:
 * MHTTP_E_INTERFACE; a cacert file that cannot be read: MHTTP_E_CACERT). Session options are fixed once a transfer started
 * (embedded: also once mhttp_get_fd or mhttp_perform was called, which makes the engine):
 * MHTTP_E_INVAL after. */
MHTTP_API mhttp_code mhttp_session_setopt(mhttp_session *s, const char *name, const char *value);

/* What the last refused call on s (mhttp_session_setopt, mhttp_perform, ...) found wrong; ""
 * when none was refused. Valid until the next call on s; the caller's thread. */
MHTTP_API const char *mhttp_session_errmsg(const mhttp_session *s);

/* Cancels every transfer (each reports MHTTP_E_CANCELED), stops the loop thread, closes every
 * connection and frees the session and its transfers. NULL is allowed. Not from a callback. */
MHTTP_API void mhttp_session_free(mhttp_session *s);

/* Embedding (flags 0). The descriptor becomes readable when the session has work: poll it for
 * readability (edge or level), never read it. The timeout is the longest the caller may wait
 * before calling mhttp_perform, in milliseconds; -1 when nothing is timed. mhttp_perform runs
 * what is ready without blocking and returns MHTTP_OK. With MHTTP_SESSION_THREAD: get_fd
 * returns -1 and perform MHTTP_E_INVAL. */
MHTTP_API int mhttp_get_fd(mhttp_session *s);
MHTTP_API int mhttp_get_timeout(mhttp_session *s);
MHTTP_API mhttp_code mhttp_perform(mhttp_session *s);

/* Blocks until every started transfer of the session ended, or timeout_ms passed (-1: no
 * limit), running the loop itself when embedded. MHTTP_OK, or MHTTP_E_TIMEOUT. Not from a
 * callback. */
MHTTP_API mhttp_code mhttp_session_wait(mhttp_session *s, int timeout_ms);

/* Makes mhttp_perform (or the session's thread) run soon; interrupts mhttp_session_wait's
 * sleep. Any thread. */
MHTTP_API mhttp_code mhttp_wakeup(mhttp_session *s);

/* ------------------------------------------------------------------------------------------ */
/* Transfers                                                                                    */

/* Makes a transfer of url (http:// or https://) in session s; nothing is sent before
 * mhttp_xfer_start. MHTTP_E_URL for a URL the library cannot fetch (another scheme; a URL
 * with user:password@, which is never sent). https: TLS through libcurl, the certificate
 * checked against the URL's host on every connection (options cacert, insecure). */
MHTTP_API mhttp_code mhttp_xfer_new(mhttp_session *s, const char *url, mhttp_xfer **out);

/* Another URL serving the same bytes (a mirror: its own scheme, host, port and path). Its name
 * is looked up when the transfer starts, like the URL's, and harvested by every interface's
 * resolver (an address one network's resolver names is used on that network only). The first
 * answer always comes from the URL; once it carries a strong validator (ETag, or an old enough
 * Last-Modified), ranges go to the mirrors' addresses over every interface as to the URL's own
 * replicas: the URL's request with the mirror's request-target and Host, over https with the
 * mirror's own server name and certificate check. Every answer is checked against the first
 * one's length, validator (If-Range) and Content-Encoding; a mirror that answers otherwise
 * (another validator or length, a 200 instead of the range, an error status, a malformed
 * answer) is dropped from the transfer with an MHTTP_EV_PATH_DOWN event (code
 * MHTTP_E_PROTOCOL), and its ranges are fetched elsewhere: it never contributes other bytes.
 * One whose name does not resolve (MHTTP_E_RESOLVE, with iface and replica "") or that cannot
 * be connected to (MHTTP_E_CONNECT, _TLS, _CERT) is dropped the same way: the transfer does
 * not fail for a mirror. The header option's Authorization, Cookie and Proxy-Authorization
 * are sent to a mirror only when it has the URL's scheme, host and port (curl drops them on
 * a redirect to another origin too). At most 16 mirrors; MHTTP_E_INVAL beyond, or after
 * start; MHTTP_E_URL for a URL mhttp_xfer_new would refuse, and for a plain http mirror of an
 * https URL (its bytes would not be authenticated). With a mirror, a host with one interface
 * splits too, and so does a loopback URL (two servers are two paths). Nothing detects a mirror that serves other bytes under the same validator and
 * length: the option checksum does, at the end. A mirror's lookup runs on libuv's resolver
 * threads and cannot be abandoned: one still running when the session is freed (a resolver
 * that does not answer) holds mhttp_session_free until it returns. */
MHTTP_API mhttp_code mhttp_xfer_add_mirror(mhttp_xfer *x, const char *url);

/* Pins a replica: addr (an IPv4 or IPv6 literal) serves the URL's host as well, on the URL's
 * port, reached on interface iface (NULL: every interface). It joins as an address that
 * interface's own resolver named (multiDNS): once the first answer carries a strong validator
 * it gets ranges there, each answer checked like a mirror's, and that interface's connections
 * to the URL's own server stop taking new ranges (as when its resolver names other replicas).
 * The connection still names the URL's host (Host header, TLS server name and certificate
 * check); a replica that answers otherwise or does not connect is dropped (MHTTP_EV_PATH_DOWN
 * with its cause). Not used after a redirect to another origin. A pin on an interface the
 * session does not use is ignored. At most 16; MHTTP_E_INVAL beyond, for a name or a
 * malformed address, or after start. */
MHTTP_API mhttp_code mhttp_xfer_add_replica(mhttp_xfer *x, const char *addr, const char *iface);

/* Sets a transfer option by name (the table below; session options given here are
 * MHTTP_E_OPTION). Before start; limit-rate also while the transfer runs (any thread: applied
 * on the loop before the call returns; a transfer that ended: MHTTP_OK, no effect). */
MHTTP_API mhttp_code mhttp_xfer_setopt(mhttp_xfer *x, const char *name, const char *value);

/*
 * Option names (the mhttp command's long options)           level     value
 *   interface        use this interface (repeatable; default: every one with a route)
 *                                                             session   name, e.g. "wlan0"
 *   dns-server       the resolver to use on an interface      session   "IF=ADDR" (repeatable)
 *   policy           path policy                              session   eaf|rr|threshold|single
 *                    (also round-robin, biased, single:IF; single alone: the first interface
 *                    option, else the host's first interface)
 *   cacert           CA bundle to verify servers with         both      a file path
 *   insecure         do not verify the server certificate    both      "1" or "0"
 *   connect-timeout  seconds for a connection to be made      both      a decimal, > 0
 *   max-time         seconds for the whole transfer           both      a decimal, > 0
 *   max-redirs       redirects followed (3xx with Location)   both      0..50 (default 10)
 *   user-agent       the User-Agent header                    both      text
 *   header           an extra request header "Name: value"    xfer      (repeatable)
 *                    (Authorization, Cookie, Proxy-Authorization: to the URL's origin only,
 *                    never to a mirror or redirect target of another scheme, host or port)
 *   output           write to this file (pwrite at offsets)   xfer      a path
 *   continue         resume output from its resume file       xfer      "1" or "0"
 *   checksum         verify the body at the end               xfer      "sha-256=HEX"
 *   progress-interval  ms between progress events (>= 10)     xfer      default 200
 *   limit-rate       bytes/s read from the network, over all  xfer      curl's --limit-rate:
 *                    the paths together (HTTPS: the bytes               "1048576", "1.5M",
 *                    TLS gives); 0: no limit (the default)               k/m/g = 1024^1..3
 * A value that does not parse is MHTTP_E_OPTION. "1"/"0" options also take "yes"/"no" and
 * "true"/"false" (any case).
 *
 * Resume ("continue"): while a file transfer runs (split or on one path), the ranges written so
 * far and the answer's validator (strong ETag, else a strong Last-Modified; "" when none) and
 * length are kept in OUTPUT.mhttp beside the output. Crash-safe, in this order: body bytes
 * pwrite(2), fdatasync(2) of the output, the record written to OUTPUT.mhttp.tmp,
 * fdatasync(2), rename(2) over OUTPUT.mhttp: it never names a byte that is not on disk. It is
 * saved before the first body byte, then at most every second or every 4 MiB written (on
 * libuv's thread pool, never stalling the loop), and once more when the transfer fails or is
 * canceled: a kill -9 at any moment refetches at most
 * what arrived since the last save. A later transfer to the same output with continue=1
 * fetches only what the file lacks while the origin serves the same representation: a split
 * marks the held ranges received (its first range, the probe, and the object's last byte are
 * fetched again: they verify the representation); a transfer on one path asks "Range:
 * bytes=F-" from the first byte missing, with If-Range and the stored validator. Another
 * representation (a 200 to If-Range, another length or validator) truncates the output and
 * fetches it whole (mhttp_xfer_stats.restarted = 1). The resume file is removed when the
 * transfer completed; one that names bytes past the output's end (a crash while a restart
 * truncated it) is ignored and the object fetched whole. An output without a resume file is
 * taken as written from its start up to its size (like curl -C -: Range without If-Range; a
 * 416 naming that size as the length means it was complete). A resume file that does not parse
 * or names another URL: the transfer ends with MHTTP_E_RESUME before anything is sent.
 * Before the output is made (or truncated), the bytes it still lacks must fit its file
 * system's free space: a server claiming more fails with MHTTP_E_WRITE and nothing written.
 */

/* Where the body goes (one of the three, before start; default: none set is MHTTP_E_INVAL at
 * start unless the option output was given; a second one, or output with another, in either
 * order, is MHTTP_E_INVAL: set_fd or set_write_cb after the option output, the option output
 * after either). */
/* fd: the body written in order with write(2) (a pipe, a socket, stdout); the fd stays the
 * caller's and is never closed. */
MHTTP_API mhttp_code mhttp_xfer_set_fd(mhttp_xfer *x, int fd);

/* A callback: receives body bytes [off, off+len). With ordered = 1, off only ever grows by the
 * bytes taken (a stream); with 0, any order (each byte still exactly once). Returns the bytes
 * it took (0..len: fewer means "full": the transfer holds the rest, stops reading at its window
 * and offers again after mhttp_xfer_pause(x, 0)), or a negative value to fail the transfer with
 * MHTTP_E_WRITE. With the option checksum the bytes come in order whatever ordered says. */
typedef long (*mhttp_write_cb)(void *arg, uint64_t off, const void *buf, size_t len);
MHTTP_API mhttp_code mhttp_xfer_set_write_cb(mhttp_xfer *x, mhttp_write_cb cb, int ordered, void *arg);

/* Events. start first (when a head was accepted); path events after it (a transfer that
 * fails before any head reports only the paths whose server left it, then error); progress at
 * most once per progress-interval while bytes arrive; complete or error exactly once, last. */
typedef enum mhttp_event_type {
  MHTTP_EV_START = 1, /* the response head was accepted: status, size (when known) */
  MHTTP_EV_PATH_UP,   /* a path (an interface and a server address) began carrying ranges */
  MHTTP_EV_PATH_DOWN, /* a path stopped (failed, stalled or retired): code is MHTTP_OK when
                         it was retired or the transfer ended well, the transfer's failure,
                         or the path's own cause when its server left the transfer (a
                         mirror or replica that answered otherwise, did not connect or did
                         not resolve: mhttp_xfer_add_mirror) */
  MHTTP_EV_PROGRESS,
  MHTTP_EV_COMPLETE, /* every byte was delivered (and the checksum, if any, matched) */
  MHTTP_EV_ERROR,    /* the transfer failed: code and message */
} mhttp_event_type;

typedef struct mhttp_event {
  size_t size; /* sizeof(struct mhttp_event) of the library */
  mhttp_event_type type;
  mhttp_xfer *xfer;
  mhttp_code code;     /* EV_ERROR, EV_PATH_DOWN: why; else MHTTP_OK */
  const char *message; /* EV_ERROR, EV_PATH_DOWN: the detail; else NULL */
  int http_status;     /* the origin's status once known, else 0 */
  uint64_t total;      /* the body's length, UINT64_MAX while unknown */
  uint64_t done;       /* body bytes delivered so far (resumed bytes included) */
  const char *iface;   /* EV_PATH_*: the interface name ("" for a mirror whose name did
                               not resolve) */
  const char *replica; /* EV_PATH_*: the server address, numeric ("" likewise) */
  unsigned mirror;     /* EV_PATH_*: 0 for the URL's server (or a replica of it), k for the
                          k-th mirror added (mhttp_xfer_add_mirror) */
} mhttp_event;
/* The event and its strings are valid during the call only. */
typedef void (*mhttp_event_cb)(const mhttp_event *ev, void *arg);
MHTTP_API mhttp_code mhttp_xfer_set_event_cb(mhttp_xfer *x, mhttp_event_cb cb, void *arg);

/* Starts the transfer (resolving, connecting, the first request). Once. */
MHTTP_API mhttp_code mhttp_xfer_start(mhttp_xfer *x);

/* pause = 1: stop reading from the network (connections stay open; their windows fill);
 * 0: go on. A running transfer only. */
MHTTP_API mhttp_code mhttp_xfer_pause(mhttp_xfer *x, int pause);

/* Ends a running transfer with MHTTP_E_CANCELED (its error event follows on the loop); a
 * resume file stays, so it can be continued. Any thread; a transfer that already ended: no-op,
 * MHTTP_OK; one never started: MHTTP_E_INVAL. */
MHTTP_API mhttp_code mhttp_xfer_cancel(mhttp_xfer *x);

/* The transfer's outcome: MHTTP_E_BUSY while it runs, MHTTP_E_INVAL when it was never started
 * (or its start was refused), else its code. The message, once it ended, is the detail of a
 * failure ("HTTP 404", curl's TLS text, strerror of a write), "" when none; before, what the
 * last refused call on x found wrong ("" when none); valid until mhttp_xfer_free or the next
 * call on x. */
MHTTP_API mhttp_code mhttp_xfer_result(const mhttp_xfer *x);
MHTTP_API const char *mhttp_xfer_errmsg(const mhttp_xfer *x);

/* Statistics, a snapshot at the time of the call (from the loop's last update when the session
 * has its own thread). Set size = sizeof before the call. */
typedef struct mhttp_xfer_stats {
  size_t size;
  int http_status;
  uint64_t total;   /* the body's length, UINT64_MAX while unknown */
  uint64_t done;    /* body bytes delivered to the destination (resumed ones included) */
  uint64_t fetched; /* bytes of bodies received from the network by this transfer,
                       duplicates included (what resuming saved shows here) */
  uint64_t resumed; /* bytes the destination already had when resuming */
  double rate;      /* bytes/s of the body over the last second (the paths' window);
                       once ended, over the whole transfer (resumed bytes aside) */
  double elapsed;   /* seconds since start */
  unsigned paths;   /* paths that carried bytes */
  int split;        /* 1 when the body was fetched in ranges over several paths */
  int restarted;    /* 1 when continue found a partial output of a representation the
                       origin no longer serves (another validator or length, or no
                       ranges): it was fetched whole again (known from EV_START on) */
} mhttp_xfer_stats;
MHTTP_API mhttp_code mhttp_xfer_stats_get(const mhttp_xfer *x, mhttp_xfer_stats *st);

typedef struct mhttp_path_stats {
  size_t size;
  char iface[16];     /* interface name */
  char replica[46];   /* server address, numeric */
  int up;             /* 1 while it has a usable connection */
  uint64_t bytes;     /* body bytes received on it */
  double rate;        /* bytes/s over the transfer's window (mhttp_xfer_stats.rate) */
  uint32_t srtt_us;   /* the connection's smoothed RTT, 0 when unknown */
  unsigned in_flight; /* ranges asked and not yet received */
  unsigned mirror;    /* 0: the URL's server (or a replica of it); k: the k-th mirror */
} mhttp_path_stats;
/* Fills up to max entries of out (each with size set by the caller; out[0].size is taken as
 * the stride), one per path the transfer used: a path is an interface and a server address
 * (the URL's server, a replica of it, or a mirror's), so the URL's server and a mirror reached
 * over the same interface are two paths. At most 16 paths are kept per transfer, the first 16
 * opened; *n gets how many are kept (may be more than max). */
MHTTP_API mhttp_code mhttp_xfer_path_stats(const mhttp_xfer *x, mhttp_path_stats *out, unsigned max, unsigned *n);

/* Frees the transfer, cancelling it first when it runs. NULL allowed. Not from its own
 * callback. */
MHTTP_API void mhttp_xfer_free(mhttp_xfer *x);

#ifdef __cplusplus
}
#endif
#endif
