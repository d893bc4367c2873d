/* Socket helpers shared by the engine tests: bounded timeouts and exact sends/receives that fail the test. */
#ifndef MHTTP_TESTS_MULTIHTTP_SOCKIO_H
#define MHTTP_TESTS_MULTIHTTP_SOCKIO_H

#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

/* Every blocking call in a test ends within 5 s, so a hung engine fails instead of hanging. */
static inline void timeouts(int fd) {
  struct timeval tv = {5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* A listener on loopback and a connected client: returns the client (the "program's"
 * upstream socket), *srv the accepted end, *ls the listener (left open for the caller). */
static inline int loopback_connect(int *srv, int *ls) {
  *ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  cr_assert_eq(bind(*ls, (struct sockaddr *)&a, sizeof a), 0);
  cr_assert_eq(listen(*ls, 4), 0);
  getsockname(*ls, (struct sockaddr *)&a, &al);
  int up = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  cr_assert_eq(connect(up, (struct sockaddr *)&a, sizeof a), 0);
  *srv = accept(*ls, NULL, NULL);
  cr_assert(*srv >= 0);
  return up;
}

static inline void send_all(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
    cr_assert(w > 0, "send: %s", strerror(errno));
    s += w;
    n -= (size_t)w;
  }
}

static inline void send_str(int fd, const char *s) { send_all(fd, s, strlen(s)); }

/* Reads exactly n bytes (fails the test on EOF, error or timeout). */
static inline void recv_exact(int fd, char *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = recv(fd, buf + got, n - got, 0);
    cr_assert(r > 0, "recv after %zu/%zu bytes: %s", got, n, r == 0 ? "EOF" : strerror(errno));
    got += (size_t)r;
  }
}

/* Reads strlen(want) bytes and compares them with want. */
static inline void expect_str(int fd, const char *want) {
  size_t n = strlen(want);
  char *buf = malloc(n + 1);
  recv_exact(fd, buf, n);
  buf[n] = 0;
  cr_assert_str_eq(buf, want);
  free(buf);
}

#endif
