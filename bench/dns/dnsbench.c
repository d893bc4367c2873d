/* Times getaddrinfo as a program sees it: optional HTTP fetch first (starts the shim's engine), then N lookups, one line of microseconds each. */
#include <errno.h>
#include <stdint.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

/* GET http://host/path over port 80 and read the answer to its end: under the shim this is a
 * taken-over connection, so the engine (and multiDNS with it) runs during the lookups. */
static int fetch(const char *host, const char *path) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
  if (getaddrinfo(host, "80", &hints, &res) != 0)
    return -1;
  int fd = socket(res->ai_family, SOCK_STREAM, 0);
  int rc = fd >= 0 ? connect(fd, res->ai_addr, res->ai_addrlen) : -1;
  freeaddrinfo(res);
  if (rc < 0) {
    if (fd >= 0)
      close(fd);
    return -1;
  }
  char req[512], buf[16384];
  int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, host);
  if (n <= 0 || (size_t)n >= sizeof req || write(fd, req, (size_t)n) != n) {
    close(fd);
    return -1;
  }
  ssize_t r;
  size_t total = 0;
  while ((r = read(fd, buf, sizeof buf)) > 0)
    total += (size_t)r;
  close(fd);
  return total > 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: mhttp-dnsbench N NAME... [--fetch HOST PATH]\n"
                    "  N lookups (AF_UNSPEC, SOCK_STREAM) cycling over the names; prints one\n"
                    "  latency in microseconds per line. --fetch first GETs http://HOST/PATH.\n");
    return 2;
  }
  int n = atoi(argv[1]);
  if (n <= 0 || n > 100000) {
    fprintf(stderr, "mhttp-dnsbench: N must be 1..100000\n");
    return 2;
  }
  const char *names[64];
  int nn = 0;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--fetch") && i + 2 < argc) {
      if (fetch(argv[i + 1], argv[i + 2]) < 0) {
        fprintf(stderr, "mhttp-dnsbench: fetch http://%s%s failed\n", argv[i + 1], argv[i + 2]);
        return 1;
      }
      i += 2;
    } else if (nn < 64) {
      names[nn++] = argv[i];
    }
  }
  if (!nn) {
    fprintf(stderr, "mhttp-dnsbench: no names\n");
    return 2;
  }
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
  for (int i = 0; i < n; i++) {
    struct addrinfo *res = NULL;
    uint64_t t0 = now_us();
    int rc = getaddrinfo(names[i % nn], "80", &hints, &res);
    uint64_t t1 = now_us();
    if (rc != 0) {
      fprintf(stderr, "mhttp-dnsbench: %s: %s\n", names[i % nn], gai_strerror(rc));
      return 1;
    }
    freeaddrinfo(res);
    printf("%llu\n", (unsigned long long)(t1 - t0));
  }
  return 0;
}
