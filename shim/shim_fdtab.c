/* Per-fd state table: chunks of entries mapped on first use, so lookups are one index and never allocate in a hook's fast path. */
#include "shim_fdtab.h"
#include "mh_conn.h"

#include <string.h>
#include <sys/mman.h>

#define SHIM_CHUNK_BITS 12
#define SHIM_CHUNK (1 << SHIM_CHUNK_BITS)
#define SHIM_CHUNKS 256 /* 1M descriptors; beyond that fds pass through untouched */

static _Atomic(struct shim_fd *) shim__chunks[SHIM_CHUNKS];
static atomic_int shim__limit;

struct shim_fd *shim_fd_peek(int fd) {
  if (fd < 0 || (unsigned)fd >= (unsigned)SHIM_CHUNKS * SHIM_CHUNK)
    return NULL;
  struct shim_fd *c = atomic_load_explicit(&shim__chunks[fd >> SHIM_CHUNK_BITS], memory_order_acquire);
  return c ? &c[fd & (SHIM_CHUNK - 1)] : NULL;
}

struct shim_fd *shim_fd_get(int fd) {
  if (fd < 0 || (unsigned)fd >= (unsigned)SHIM_CHUNKS * SHIM_CHUNK)
    return NULL;
  _Atomic(struct shim_fd *) *slot = &shim__chunks[fd >> SHIM_CHUNK_BITS];
  struct shim_fd *c = atomic_load_explicit(slot, memory_order_acquire);
  if (!c) {
    /* mmap, not malloc: the program's allocator stays untouched and this is signal-safe */
    void *m =
        mmap(NULL, sizeof(struct shim_fd) * SHIM_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
      return NULL;
    struct shim_fd *expect = NULL;
    if (atomic_compare_exchange_strong(slot, &expect, (struct shim_fd *)m)) {
      c = m;
    } else {
      munmap(m, sizeof(struct shim_fd) * SHIM_CHUNK);
      c = expect;
    }
  }
  int lim = atomic_load(&shim__limit);
  while (fd + 1 > lim && !atomic_compare_exchange_weak(&shim__limit, &lim, fd + 1))
    ;
  return &c[fd & (SHIM_CHUNK - 1)];
}

int shim_fd_limit(void) { return atomic_load(&shim__limit); }

void shim_fd_forget(int fd) {
  struct shim_fd *e = shim_fd_peek(fd);
  if (!e || (atomic_load(&e->state) == SHIM_FD_NONE && !e->nep && !e->ep_overflow))
    return;
  shim_fd_lock(e);
  struct mh_conn *c = e->conn;
  e->conn = NULL;
  e->nep = 0;
  e->ep_overflow = 0;
  atomic_store(&e->state, SHIM_FD_NONE);
  shim_fd_unlock(e);
  mh_conn_unref(c);
}

void shim_fd_dup(int oldfd, int newfd) {
  struct shim_fd *o = shim_fd_peek(oldfd);
  if (!o)
    return;
  int st = atomic_load(&o->state);
  if (st == SHIM_FD_ELIGIBLE) {
    /* two descriptors on one TCP socket: swapping one would leave the other on a socket the
     * engine now owns, so this connection is never taken over */
    atomic_compare_exchange_strong(&o->state, &(uint8_t){SHIM_FD_ELIGIBLE}, SHIM_FD_NONE);
    return;
  }
  if (st != SHIM_FD_TAKEN)
    return;
  struct shim_fd *n = shim_fd_get(newfd);
  if (!n)
    return;
  shim_fd_lock(o);
  struct mh_conn *c = o->conn;
  if (c)
    mh_conn_ref(c);
  shim_fd_unlock(o);
  if (!c)
    return;
  shim_fd_lock(n);
  struct mh_conn *old = n->conn;
  n->conn = c;
  n->nep = 0;
  atomic_store(&n->state, SHIM_FD_TAKEN);
  shim_fd_unlock(n);
  mh_conn_unref(old);
}

void shim_fd_epoll(int epfd, int op, int fd, const struct epoll_event *ev) {
  struct shim_fd *e = op == EPOLL_CTL_DEL ? shim_fd_peek(fd) : shim_fd_get(fd);
  if (!e)
    return;
  shim_fd_lock(e);
  int i;
  for (i = 0; i < e->nep && e->ep[i].epfd != epfd; i++)
    ;
  if (op == EPOLL_CTL_DEL) {
    if (i < e->nep)
      e->ep[i] = e->ep[--e->nep];
  } else if (i < e->nep) {
    e->ep[i].ev = *ev;
  } else if (op == EPOLL_CTL_ADD) {
    if (e->nep < SHIM_EPOLL_MAX) {
      e->ep[e->nep].epfd = epfd;
      e->ep[e->nep].ev = *ev;
      e->nep++;
    } else {
      e->ep_overflow = 1;
    }
  }
  shim_fd_unlock(e);
}

void shim_fd_mark_engine(int fd) {
  struct shim_fd *e = shim_fd_get(fd);
  if (e)
    atomic_store(&e->state, SHIM_FD_ENGINE);
}
