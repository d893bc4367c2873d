/* Test helper: downloads one URL path from 127.0.0.1:PORT with blocking I/O, then ends main with pthread_exit (the process must still exit, status 0). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[1]))};
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
    return 2;
  char req[512], buf[65536];
  int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", argv[2]);
  if (write(fd, req, (size_t)n) != n)
    return 2;
  size_t total = 0;
  ssize_t r;
  while ((r = read(fd, buf, sizeof buf)) > 0)
    total += (size_t)r;
  printf("%zu bytes\n", total);
  fflush(stdout);
  pthread_exit(NULL); /* the process ends when its last thread does */
}
