/* Socket helpers shared by the engine tests: bounded timeouts and exact sends/receives that fail the test. */
#ifndef MHTTP_TESTS_MULTIHTTP_SOCKIO_H
#define MHTTP_TESTS_MULTIHTTP_SOCKIO_H

#include <criterion/criterion.h>
#include <errno.h>
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
