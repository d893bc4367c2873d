/* Test helper: POSTs FILE to 127.0.0.1:PORT PATH with blocking writes and calls exit(0) the moment the last write returns (no close, no read). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 4)
    return 2;
  FILE *f = fopen(argv[2], "rb");
  struct stat st;
  if (!f || fstat(fileno(f), &st) < 0)
    return 2;
  char *body = malloc((size_t)st.st_size);
  if (!body || fread(body, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
    return 2;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int sb = 65536; /* a small send buffer: little of the body can hide in the kernel */
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof sb);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[1]))};
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
    return 2;
  char head[256];
  int n = snprintf(head, sizeof head, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %lld\r\n\r\n", argv[3],
                   (long long)st.st_size);
  if (write(fd, head, (size_t)n) != n)
    return 2;
  for (off_t off = 0; off < st.st_size;) {
    ssize_t w = write(fd, body + off, (size_t)(st.st_size - off));
    if (w <= 0)
      return 2;
    off += w;
  }
  exit(0); /* at once: whatever is still in flight must reach the server anyway */
}
