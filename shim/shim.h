/* Shared declarations of the shim: activation state, configuration, and the real logic the hooks call. */
#ifndef SHIM_H
#define SHIM_H
#include <stddef.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "mh_config.h"
#include "mh_engine.h"
#include "shim_fdtab.h"
#include "shim_real.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

enum shim_status {
  SHIM_UNINIT = 0,
  SHIM_ACTIVE = 1,
  SHIM_OFF = 2, /* MHTTP_DISABLE, a bad configuration, or a missing libc symbol */
};
extern _Atomic int shim_status;
extern struct mh_config shim_config; /* written once by shim_init, read-only afterwards */
extern int shim_pid;                 /* our pid (updated in a fork child); a vfork child sees another one */
/* The process's one engine, made on first use (its loop thread starts on the first takeover):
 * a program that never resolves or connects allocates nothing. NULL when it could not be made
 * (the shim then leaves connections alone). Any thread, once the shim is active. */
struct mh_engine *shim_engine(void);

/* Runs initialisation once (pthread_once): real symbols, configuration, logging, engine hooks.
 * Safe from any hook, before constructors, from any thread. */
void shim_init(void);

/* 1 when a hook must apply its logic, 0 when it must pass straight through (disabled, or on
 * the engine's own thread, whose libc calls must never be interpreted). */
static inline int shim_active(void) {
  if (__builtin_expect(shim_status == SHIM_UNINIT, 0))
    shim_init();
  return shim_status == SHIM_ACTIVE && !mh_engine_thread_flag;
}

/* The destination port when sa is a complete IPv4/IPv6 address, else -1. */
int shim_sa_port(const struct sockaddr *sa, socklen_t len);
/* Before connect(): binds an unbound TCP socket to the interface the engine chooses for a new
 * connection (shim_bind.c; the choice is multihttp/paths/mh_choose.c's). *from gets the source
 * address the connection will leave from when known (the pick, or the kernel's route's
 * interface), else ss_family AF_UNSPEC. Returns how many usable interfaces of the
 * destination's family exist, -1 when it did not look (not TCP, bound by the program,
 * loopback...). Never blocks on the engine; preserves errno. */
int shim_bind_choose(int fd, const struct sockaddr *sa, socklen_t len, struct sockaddr_storage *from);
/* Before connect(), from known (shim_bind_choose): asks the engine to pre-connect the other
 * interfaces to sa when splitting and pre-connect are on and the port is eligible. 1 when
 * asked, 0 otherwise. Preserves errno. */
int shim_preconnect_early(const struct sockaddr *sa, socklen_t len, const struct sockaddr_storage *from);
/* connect() succeeded or is in progress: mark fd eligible when it is TCP to an eligible port
 * (and pre-connect from the socket's local address unless asked before the connect). */
void shim_connect_done(int fd, const struct sockaddr *sa, socklen_t len, int preconnected);
/* A write is about to happen on an ELIGIBLE or SWAPPING fd: sniff the bytes (gathered from
 * iov) and take the connection over when they begin an HTTP request. Preserves errno. */
void shim_first_write(int fd, const struct iovec *iov, int iovcnt);
/* sendto/sendmsg(MSG_FASTOPEN) to an eligible port carrying an HTTP request: connect for
 * real first so the connection can be taken over. 0: pass the call through untouched;
 * -1: return -1 with errno (EINPROGRESS: nothing sent, as Fast Open without a cookie);
 * 1: connected (and taken over): send without MSG_FASTOPEN and without an address. */
int shim_fastopen(int fd, const struct iovec *iov, int iovcnt, const struct sockaddr *to, socklen_t tolen);
/* A read happened before any write on an ELIGIBLE fd: never take it over. */
void shim_read_first(int fd);

/* Socket emulation for TAKEN fds (shim_sockemu.c); libc conventions: -1 and errno. */
int shim_emu_getpeername(int fd, struct sockaddr *sa, socklen_t *len, int peer);
int shim_emu_getsockopt(int fd, int level, int name, void *val, socklen_t *len);
int shim_emu_setsockopt(int fd, int level, int name, const void *val, socklen_t len);

/* The program's resolver answer for host, handed to the engine's DNS store (shim_dns.c,
 * mh_dns_note: kept for the split's replicas, harvested by multiDNS): called on the program's
 * thread after a successful real getaddrinfo/gethostbyname*; never blocks, never allocates,
 * preserves errno. addrs: ports zero, at most 8 are kept. */
void shim_dns_record(const char *host, const struct sockaddr_storage *addrs, size_t n);
/* The resolvers' socket calls: the real symbols; their sockets are marked as the engine's
 * (a forked child closes them) and forgotten when closed. */
extern const struct mdns_sockfns shim_dns_sockfns;

/* Forgets an engine (or taken-over) descriptor and closes it, inside the fork gate. */
int shim_forget_close(int fd);
/* In a forked child: close the parent's engine fds, detach TAKEN fds from its engine. */
void shim_after_fork_child(void);

#endif
