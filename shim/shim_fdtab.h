/* The per-fd table: O(1) state for every descriptor (array of lazily mapped chunks indexed by fd). */
#ifndef SHIM_FDTAB_H
#define SHIM_FDTAB_H
#include <stdatomic.h>
#include <stdint.h>
#include <sys/epoll.h>

struct mh_conn;

enum shim_fd_state {
  SHIM_FD_NONE = 0, /* not ours: every hook passes straight through */
  SHIM_FD_ELIGIBLE, /* connected TCP to an eligible port, nothing written or read yet */
  SHIM_FD_SWAPPING, /* a thread is taking it over right now; others wait */
  SHIM_FD_TAKEN,    /* the program's end of a socketpair served by the engine */
  SHIM_FD_ENGINE,   /* the engine's own descriptor (a forked child closes these) */
};

#define SHIM_EPOLL_MAX 4

/* One descriptor. state is read lock-free on every hook; the rest changes under lock. */
struct shim_fd {
  _Atomic uint8_t state;
  atomic_flag lock;
  uint8_t nep;         /* epoll registrations recorded in ep[] */
  uint8_t ep_overflow; /* more registrations than we track: never take this fd over */
  struct {
    int epfd;
    struct epoll_event ev;
  } ep[SHIM_EPOLL_MAX];
  struct mh_conn *conn; /* TAKEN: one reference per fd naming the connection */
  /* the connect-time choice bound this socket elsewhere than the kernel would have: the
   * kernel's own source address (family 0: not re-bound), written at each connect() */
  uint8_t plain_family;
  uint8_t plain_addr[16];
};

/* The entry for fd, or NULL when fd is out of range or its chunk was never needed (state
 * NONE). Lock-free, any thread, async-signal-safe. */
struct shim_fd *shim_fd_peek(int fd);
/* Same, mapping the chunk on first use; NULL only when fd is out of range or mmap failed. */
struct shim_fd *shim_fd_get(int fd);
/* Highest fd that ever got an entry (+1), for the fork-child scan. */
int shim_fd_limit(void);

static inline int shim_fd_state(int fd) {
  struct shim_fd *e = shim_fd_peek(fd);
  return e ? atomic_load_explicit(&e->state, memory_order_acquire) : SHIM_FD_NONE;
}
static inline void shim_fd_lock(struct shim_fd *e) {
  while (atomic_flag_test_and_set_explicit(&e->lock, memory_order_acquire))
    ;
}
static inline void shim_fd_unlock(struct shim_fd *e) { atomic_flag_clear_explicit(&e->lock, memory_order_release); }

/* Drops everything known about fd (it is being closed): epoll records, the connection
 * reference, the state. Any thread. */
void shim_fd_forget(int fd);
/* Bookkeeping after newfd became a duplicate of oldfd (dup, dup2, dup3, F_DUPFD). */
void shim_fd_dup(int oldfd, int newfd);
/* epoll_ctl succeeded: record (ADD, MOD) or drop (DEL) the registration of fd in epfd. */
void shim_fd_epoll(int epfd, int op, int fd, const struct epoll_event *ev);
/* Marks fd as the engine's own. */
void shim_fd_mark_engine(int fd);

#endif
