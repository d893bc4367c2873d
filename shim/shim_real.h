/* The one table of real libc symbols (dlsym RTLD_NEXT), filled once; the shim calls libc only through it. */
#ifndef SHIM_REAL_H
#define SHIM_REAL_H
#include <netdb.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

struct shim_real {
  int (*connect)(int, const struct sockaddr *, socklen_t);
  ssize_t (*write)(int, const void *, size_t);
  ssize_t (*writev)(int, const struct iovec *, int);
  ssize_t (*send)(int, const void *, size_t, int);
  ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
  ssize_t (*sendmsg)(int, const struct msghdr *, int);
  ssize_t (*read)(int, void *, size_t);
  ssize_t (*readv)(int, const struct iovec *, int);
  ssize_t (*recv)(int, void *, size_t, int);
  ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
  ssize_t (*recvmsg)(int, struct msghdr *, int);
  int (*close)(int);
  int (*shutdown)(int, int);
  int (*dup)(int);
  int (*dup2)(int, int);
  int (*dup3)(int, int, int);
  int (*fcntl)(int, int, ...);
  int (*fcntl64)(int, int, ...);
  int (*getpeername)(int, struct sockaddr *, socklen_t *);
  int (*getsockname)(int, struct sockaddr *, socklen_t *);
  int (*getsockopt)(int, int, int, void *, socklen_t *);
  int (*setsockopt)(int, int, int, const void *, socklen_t);
  int (*epoll_ctl)(int, int, int, struct epoll_event *);
  int (*getaddrinfo)(const char *, const char *, const struct addrinfo *, struct addrinfo **);
  void (*freeaddrinfo)(struct addrinfo *);
  struct hostent *(*gethostbyname)(const char *);
  struct hostent *(*gethostbyname2)(const char *, int);
  int (*gethostbyname_r)(const char *, struct hostent *, char *, size_t, struct hostent **, int *);
  int (*gethostbyname2_r)(const char *, int, struct hostent *, char *, size_t, struct hostent **, int *);
  pid_t (*fork)(void);
};

/* Filled by shim_real_init() (idempotent, pthread_once); a symbol that is missing or that
 * resolves back to our own hook stays NULL and its hook fails with ENOSYS. */
extern struct shim_real shim_real;
void shim_real_init(void);

/* 1 on the thread filling the table: a hook re-entered from inside dlsym (an allocator
 * reading /proc, say) must not wait for the initialisation it is part of. */
extern __thread int shim_resolving __attribute__((tls_model("initial-exec")));

#endif
