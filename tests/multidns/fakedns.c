/* A fake DNS server for tests: a UDP socket on 127.0.0.1 served by a thread, answering A/AAAA from a table. */
#include "fakedns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LOG_MAX 256

struct fakedns {
  int fd;
  uint16_t port;
  pthread_t thread;
  atomic_int stop;
  atomic_int silent;
  atomic_int batch; /* hold answers until this many are ready, then send them back to back */
  size_t nheld;
  struct {
    uint8_t buf[1024];
    size_t len;
    struct sockaddr_in to;
  } held[8];
  const struct fakedns_rec *recs;
  size_t n;
  pthread_mutex_t mu;
  size_t nlog; /* queries seen: name and type */
  struct {
    char name[256];
    int type;
  } log[LOG_MAX];
};

/* Reads the question's name as lowercase dotted text; returns the offset after QNAME or -1. */
static int read_qname(const uint8_t *p, size_t len, char *out, size_t outlen) {
  size_t off = 12, o = 0;
  while (off < len) {
    uint8_t l = p[off++];
    if (l == 0) {
      out[o] = '\0';
      return (int)off;
    }
    if (l > 63 || off + l > len || o + l + 2 > outlen)
      return -1;
    if (o)
      out[o++] = '.';
    for (uint8_t i = 0; i < l; i++) {
      char ch = (char)p[off + i];
      out[o++] = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
    }
    off += l;
  }
  return -1;
}

static void serve_one(struct fakedns *s, const uint8_t *q, size_t qlen, const struct sockaddr_in *from) {
  char name[256];
  if (qlen < 12)
    return;
  int qend = read_qname(q, qlen, name, sizeof name);
  if (qend < 0 || (size_t)qend + 4 > qlen)
    return;
  int qtype = (q[qend] << 8) | q[qend + 1];
  pthread_mutex_lock(&s->mu);
  if (s->nlog < LOG_MAX) {
    strcpy(s->log[s->nlog].name, name);
    s->log[s->nlog].type = qtype;
    s->nlog++;
  }
  pthread_mutex_unlock(&s->mu);
  if (atomic_load(&s->silent))
    return;

  uint8_t r[1024];
  size_t qsec = (size_t)qend + 4 - 12; /* question section: QNAME, QTYPE, QCLASS */
  memcpy(r, q, 12 + qsec);
  bool known = false;
  size_t off = 12 + qsec;
  uint16_t an = 0;
  for (size_t i = 0; i < s->n; i++) {
    if (strcmp(s->recs[i].name, name) != 0)
      continue;
    known = true;
    if (s->recs[i].type != qtype)
      continue;
    uint8_t rdata[16];
    int af = qtype == FAKEDNS_A ? AF_INET : AF_INET6;
    uint16_t rdlen = qtype == FAKEDNS_A ? 4 : 16;
    if (inet_pton(af, s->recs[i].addr, rdata) != 1 || off + 12 + rdlen > sizeof r)
      continue;
    uint32_t ttl = s->recs[i].ttl;
    uint8_t rr[12] = {0xc0,
                      0x0c,
                      (uint8_t)(qtype >> 8),
                      (uint8_t)qtype,
                      0,
                      1,
                      (uint8_t)(ttl >> 24),
                      (uint8_t)(ttl >> 16),
                      (uint8_t)(ttl >> 8),
                      (uint8_t)ttl,
                      (uint8_t)(rdlen >> 8),
                      (uint8_t)rdlen};
    memcpy(r + off, rr, sizeof rr);
    memcpy(r + off + sizeof rr, rdata, rdlen);
    off += sizeof rr + rdlen;
    an++;
  }
  r[2] = (uint8_t)(0x80 | (q[2] & 0x79));   /* QR, the query's opcode and RD; not AA, not TC */
  r[3] = (uint8_t)(0x80 | (known ? 0 : 3)); /* RA; NOERROR or NXDOMAIN */
  r[4] = 0, r[5] = 1;                       /* QDCOUNT */
  r[6] = (uint8_t)(an >> 8), r[7] = (uint8_t)an;
  memset(r + 8, 0, 4); /* NSCOUNT, ARCOUNT: the query's EDNS OPT is not echoed */
  int batch = atomic_load(&s->batch);
  if (batch > 1 && s->nheld < 8) {
    memcpy(s->held[s->nheld].buf, r, off);
    s->held[s->nheld].len = off;
    s->held[s->nheld].to = *from;
    if ((int)++s->nheld < batch)
      return;
    for (size_t i = 0; i < s->nheld; i++)
      sendto(s->fd, s->held[i].buf, s->held[i].len, 0, (const struct sockaddr *)&s->held[i].to, sizeof s->held[i].to);
    s->nheld = 0;
    return;
  }
  sendto(s->fd, r, off, 0, (const struct sockaddr *)from, sizeof *from);
}

static void *serve(void *arg) {
  struct fakedns *s = arg;
  while (!atomic_load(&s->stop)) {
    struct pollfd pfd = {s->fd, POLLIN, 0};
    if (poll(&pfd, 1, 50) <= 0)
      continue;
    uint8_t buf[1500];
    struct sockaddr_in from;
    socklen_t fl = sizeof from;
    ssize_t n = recvfrom(s->fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
    if (n > 0)
      serve_one(s, buf, (size_t)n, &from);
  }
  return NULL;
}

int fakedns_start(const struct fakedns_rec *recs, size_t n, int silent, struct fakedns **out) {
  struct fakedns *s = calloc(1, sizeof *s);
  if (!s)
    return -ENOMEM;
  s->recs = recs;
  s->n = n;
  atomic_init(&s->stop, 0);
  atomic_init(&s->silent, silent);
  atomic_init(&s->batch, 0);
  pthread_mutex_init(&s->mu, NULL);
  s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&a, sizeof a) != 0 ||
      getsockname(s->fd, (struct sockaddr *)&a, &al) != 0) {
    int e = errno;
    if (s->fd >= 0)
      close(s->fd);
    free(s);
    return -e;
  }
  s->port = ntohs(a.sin_port);
  int rc = pthread_create(&s->thread, NULL, serve, s);
  if (rc) {
    close(s->fd);
    free(s);
    return -rc;
  }
  *out = s;
  return 0;
}

uint16_t fakedns_port(const struct fakedns *s) { return s->port; }

void fakedns_set_silent(struct fakedns *s, int silent) { atomic_store(&s->silent, silent); }

void fakedns_set_batch(struct fakedns *s, int n) { atomic_store(&s->batch, n); }

unsigned fakedns_queries(struct fakedns *s, const char *name, int type) {
  unsigned k = 0;
  pthread_mutex_lock(&s->mu);
  for (size_t i = 0; i < s->nlog; i++)
    if (!name || (strcmp(s->log[i].name, name) == 0 && s->log[i].type == type))
      k++;
  pthread_mutex_unlock(&s->mu);
  return k;
}

void fakedns_stop(struct fakedns *s) {
  atomic_store(&s->stop, 1);
  pthread_join(s->thread, NULL);
  close(s->fd);
  pthread_mutex_destroy(&s->mu);
  free(s);
}
