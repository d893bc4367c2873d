/* What the shim and the engine share about one taken-over connection: its real addresses and the upstream fd, refcounted. */
#ifndef MH_CONN_H
#define MH_CONN_H
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/types.h>

/* One per takeover. The shim's fd-table entries (one per program fd naming the connection)
 * and the engine session each hold a reference; the last mh_conn_unref frees it.
 * up_fd is guarded by mu: the engine sets it to -1 before closing the socket, so a program
 * thread forwarding a socket option never touches a recycled descriptor. */
struct mh_conn {
  atomic_int refs;
  pthread_mutex_t mu;
  int up_fd;                    /* under mu */
  struct sockaddr_storage peer; /* immutable after creation */
  struct sockaddr_storage local;
  socklen_t peer_len, local_len;
  int family;    /* AF_INET or AF_INET6 */
  int app_fd;    /* the program's fd number at takeover (reset injection) */
  dev_t app_dev; /* identity of the program's socketpair end */
  ino_t app_ino;
  int nodelay;                       /* last TCP_NODELAY the program set (answered when up_fd is gone) */
  struct sockaddr_storage plain_src; /* the kernel's own source when the connect-time choice bound
                                      * the connection elsewhere; AF_UNSPEC: where plain would be */
};

/* Allocates a connection with one reference and up_fd = -1; NULL on ENOMEM. Any thread. */
struct mh_conn *mh_conn_new(void);
void mh_conn_ref(struct mh_conn *c);
void mh_conn_unref(struct mh_conn *c);

#endif
