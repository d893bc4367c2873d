/* mhttp-linkemu: a user-space shaped L2 link between two interfaces (the kernel has no
 * netem). One worker thread per direction moves frames AF_PACKET -> ring -> AF_PACKET at the
 * times le_core computes; the main thread serves the control socket and signals. */
#include "le_core.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/ethtool.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4 5 /* Linux >= 5.18 (UDP_SEGMENT); older uapi headers lack it */
#endif

#define PROG "mhttp-linkemu"
#define BATCH 32 /* frames per recvmmsg/sendmmsg */
#define VNET_LEN sizeof(struct virtio_net_hdr)
#define STAGE_LEN (VNET_LEN + 65536 + 64) /* one GSO super-frame at most */
#define RING_DEFAULT (64u << 20)          /* frame ring per direction: bounds memory */
#define EARLY_NS 2000                     /* a frame due within 2 us is due now */
#define LATE_MAX_NS 200000                /* cap of the timer-lateness estimate */
/* On a timer wake-up, frames due this soon after the awaited one leave with it: at high
 * rates one wake-up then serves several frames (syscalls, not bytes, cost the CPU here),
 * and 100 us early is far below what RTT and rate measurements resolve. */
#define BATCH_AHEAD_NS 100000
#define MAX_CLIENTS 8

/* ---- logging ---- */

static FILE *g_log;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  char line[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  FILE *f = g_log ? g_log : stderr;
  fprintf(f, "%02d:%02d:%02d.%03ld " PROG "[%d]: %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
          (int)getpid(), line);
  fflush(f);
}

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * LE_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* ---- one direction ---- */

typedef struct {
  const char *name; /* "ab" or "ba" */
  const char *rx_if, *tx_if;
  int rx_fd, tx_fd, wake_fd;
  pthread_t thr;
  bool started;

  /* Shared with the control thread, guarded by mu. */
  pthread_mutex_t mu;
  le_cfg cfg;
  unsigned cfg_gen;
  bool down;
  le_stats st;          /* published copy of the worker's counters */
  uint64_t queue_bytes; /* published rate-limiter backlog */
  uint64_t ring_frames; /* published frames waiting in the delay line */

  /* Worker-private. */
  le_shaper sh;
  le_ring ring;
  uint8_t *ring_mem;
  size_t ring_len;
  uint8_t *stage;
  bool warned_gso, warned_trunc, warned_tx;
} le_dir;

static atomic_bool g_stop;

/* Runs one frame of `l3` bytes (`len` with its virtio header) through the shaper; returns
 * the ring slot to copy it into, or NULL when it was dropped (and counted). */
static uint8_t *dir_admit(le_dir *d, le_stats *st, uint64_t now, uint64_t l3, size_t len) {
  uint64_t due;
  le_verdict v = le_admit(&d->sh, now, l3, &due);
  if (v == LE_DROP_LOSS) {
    st->drops_loss++;
    return NULL;
  }
  if (v == LE_DROP_QUEUE) {
    st->drops_queue++;
    return NULL;
  }
  uint8_t *slot = le_ring_push(&d->ring, due, (uint32_t)len, (uint32_t)l3);
  if (!slot)
    st->drops_queue++; /* the delay line is full: the memory bound */
  return slot;
}

/* A GSO super-frame (the veth peer has TSO/GSO on): cut it into wire-size segments, each
 * shaped, lost or queued on its own like the frames a real NIC would have sent. */
static void dir_admit_gso(le_dir *d, le_stats *st, const struct virtio_net_hdr *vh, const uint8_t *f, size_t len,
                          uint64_t now) {
  int kind = 0;
  switch (vh->gso_type & ~VIRTIO_NET_HDR_GSO_ECN) {
  case VIRTIO_NET_HDR_GSO_TCPV4: kind = LE_GSO_TCP4; break;
  case VIRTIO_NET_HDR_GSO_TCPV6: kind = LE_GSO_TCP6; break;
  case VIRTIO_NET_HDR_GSO_UDP_L4: kind = LE_GSO_UDP_L4; break;
  }
  le_gso_plan p;
  if (!kind || le_gso_plan_make(&p, f, len, kind, vh->gso_size, vh->csum_start) < 0) {
    if (!d->warned_gso) {
      logf_("%s: dropping a GSO frame of type %u from %s that cannot be segmented", d->name, vh->gso_type, d->rx_if);
      d->warned_gso = true;
    }
    st->rx_frames++;
    st->drops_queue++;
    return;
  }
  for (unsigned i = 0; i < p.segs; i++) {
    size_t off = p.hdr_len + (size_t)i * p.seg_size;
    size_t seglen = p.hdr_len + (len - off < p.seg_size ? len - off : p.seg_size);
    st->rx_frames++;
    uint8_t *slot = dir_admit(d, st, now, seglen - p.l3off, VNET_LEN + seglen);
    if (!slot)
      continue;
    memset(slot, 0, VNET_LEN); /* complete frame: no offload left for the kernel */
    le_gso_segment(&p, f, len, i, slot + VNET_LEN);
  }
}

/* Drains the receive socket into the ring (at most a few batches so transmits stay timely).
 * Returns how many frames were received. */
static int dir_receive(le_dir *d, le_stats *st, bool down) {
  struct mmsghdr msgs[BATCH];
  struct iovec iov[BATCH];
  int total = 0;
  for (int round = 0; round < 8; round++) {
    for (int i = 0; i < BATCH; i++) {
      iov[i].iov_base = d->stage + (size_t)i * STAGE_LEN;
      iov[i].iov_len = STAGE_LEN;
      memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    int n = recvmmsg(d->rx_fd, msgs, BATCH, MSG_DONTWAIT, NULL);
    if (n <= 0) {
      if (n < 0 && errno != EAGAIN && errno != EINTR)
        logf_("%s: recvmmsg on %s: %s", d->name, d->rx_if, strerror(errno));
      break;
    }
    uint64_t now = mono_ns();
    for (int i = 0; i < n; i++) {
      uint8_t *buf = iov[i].iov_base;
      size_t len = msgs[i].msg_len;
      if (down) {
        st->rx_frames++;
        st->drops_down++;
        continue;
      }
      if ((msgs[i].msg_hdr.msg_flags & MSG_TRUNC) || len <= VNET_LEN + 14) {
        if (!d->warned_trunc && len > VNET_LEN + 14) {
          logf_("%s: dropping an oversized frame from %s", d->name, d->rx_if);
          d->warned_trunc = true;
        }
        st->rx_frames++;
        st->drops_queue++;
        continue;
      }
      const struct virtio_net_hdr *vh = (const struct virtio_net_hdr *)buf;
      if (vh->gso_type != VIRTIO_NET_HDR_GSO_NONE) {
        dir_admit_gso(d, st, vh, buf + VNET_LEN, len - VNET_LEN, now);
        continue;
      }
      st->rx_frames++;
      uint64_t l3 = le_l3_bytes(buf + VNET_LEN, len - VNET_LEN, 1, 0);
      uint8_t *slot = dir_admit(d, st, now, l3, len);
      if (slot)
        memcpy(slot, buf, len);
    }
    total += n;
    if (n < BATCH)
      break;
  }
  return total;
}

/* Sends every frame due by `now` (+EARLY_NS), or by `horizon` when later, in batches. */
static void dir_transmit(le_dir *d, le_stats *st, uint64_t horizon) {
  struct mmsghdr msgs[BATCH];
  struct iovec iov[BATCH];
  for (int round = 0; round < 64; round++) {
    uint64_t now = mono_ns();
    const uint8_t *data;
    const le_rec *rec = le_ring_peek(&d->ring, &data);
    int n = 0;
    uint32_t l3[BATCH];
    uint64_t until = now + EARLY_NS > horizon ? now + EARLY_NS : horizon;
    while (rec && n < BATCH && rec->due <= until) {
      iov[n].iov_base = (void *)data;
      iov[n].iov_len = rec->len;
      l3[n] = rec->l3;
      memset(&msgs[n].msg_hdr, 0, sizeof msgs[n].msg_hdr);
      msgs[n].msg_hdr.msg_iov = &iov[n];
      msgs[n].msg_hdr.msg_iovlen = 1;
      n++;
      rec = le_ring_next(&d->ring, rec, &data);
    }
    if (!n)
      return;
    int sent = 0;
    while (sent < n) {
      int k = sendmmsg(d->tx_fd, msgs + sent, (unsigned)(n - sent), 0);
      if (k < 0) {
        if (errno == EINTR)
          continue;
        /* The peer's backlog is full (ENOBUFS) or the link vanished: that frame is lost,
         * as on a wire; go on with the next. */
        if (!d->warned_tx) {
          logf_("%s: send on %s: %s (frame lost; further errors counted in drops_tx)", d->name, d->tx_if,
                strerror(errno));
          d->warned_tx = true;
        }
        st->drops_tx++;
        sent++;
        continue;
      }
      for (int i = sent; i < sent + k; i++) {
        st->frames++;
        st->bytes += l3[i];
      }
      sent += k;
    }
    for (int i = 0; i < n; i++)
      le_ring_pop(&d->ring);
    if (n < BATCH)
      return;
  }
}

static void *dir_main(void *arg) {
  le_dir *d = arg;
  /* Wake-ups to the ns: the default 50 us timer slack would add up to 50 us per frame. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  le_stats st = {0};
  unsigned gen = ~0u;
  bool down = false;
  uint64_t late_est = 50000; /* ns the timer is expected to fire late; learnt below */
  uint64_t horizon = 0;      /* after a timer wake: send what is due by then, even if early */
  bool rx_ready = true;      /* skip a recvmmsg that ppoll already said would find nothing */
  while (!atomic_load(&g_stop)) {
    uint64_t now = mono_ns();
    /* Take the control thread's changes: new settings apply to frames arriving from now on. */
    pthread_mutex_lock(&d->mu);
    if (d->cfg_gen != gen) {
      d->sh.cfg = d->cfg;
      gen = d->cfg_gen;
    }
    if (d->down && !down) {
      st.drops_down += d->ring.frames;
      le_ring_clear(&d->ring);
      le_shaper_reset(&d->sh, now);
    }
    down = d->down;
    pthread_mutex_unlock(&d->mu);

    if (rx_ready)
      dir_receive(d, &st, down);
    dir_transmit(d, &st, horizon);
    horizon = 0;

    const le_rec *head = le_ring_peek(&d->ring, NULL);
    now = mono_ns();
    pthread_mutex_lock(&d->mu);
    d->st = st;
    d->queue_bytes = le_backlog(&d->sh, now);
    d->ring_frames = d->ring.frames;
    pthread_mutex_unlock(&d->mu);

    /* Timer wake-ups come tens of us late (more on a busy VM). Aim early by a running
     * estimate of that lateness and send the awaited frame on waking, even if that is a
     * little before its time: errors then average out to zero instead of always adding up,
     * and no CPU is burnt busy-waiting (the testbed's 2 cores also run the end hosts). The
     * rate is unaffected: departures come from the virtual clock, not from wake-up times. */
    struct timespec to = {.tv_sec = 1, .tv_nsec = 0};
    uint64_t target = 0;
    if (head) {
      if (head->due <= now + EARLY_NS) {
        rx_ready = true; /* no ppoll this turn: look at the socket again */
        continue;
      }
      uint64_t w = head->due - now;
      w = w > late_est ? w - late_est : 0;
      target = now + w;
      to.tv_sec = (time_t)(w / LE_NS_PER_SEC);
      to.tv_nsec = (long)(w % LE_NS_PER_SEC);
    }
    struct pollfd pfd[2] = {{.fd = d->rx_fd, .events = POLLIN}, {.fd = d->wake_fd, .events = POLLIN}};
    int rc = ppoll(pfd, 2, &to, NULL);
    if (rc > 0 && (pfd[1].revents & POLLIN)) {
      uint64_t v;
      if (read(d->wake_fd, &v, sizeof v) < 0 && errno != EAGAIN)
        logf_("%s: wake read: %s", d->name, strerror(errno));
    }
    if (rc == 0 && head) {
      int64_t late = (int64_t)(mono_ns() - target);
      /* EWMA (1/8) of the lateness, kept within [0, LATE_MAX_NS]. */
      int64_t est = (int64_t)late_est + (late - (int64_t)late_est) / 8;
      late_est = est < 0 ? 0 : est > LATE_MAX_NS ? LATE_MAX_NS : (uint64_t)est;
      horizon = head->due + BATCH_AHEAD_NS;
    }
    rx_ready = rc > 0 && (pfd[0].revents & (POLLIN | POLLERR));
  }
  pthread_mutex_lock(&d->mu);
  d->st = st;
  pthread_mutex_unlock(&d->mu);
  return NULL;
}

static void dir_wake(le_dir *d) {
  uint64_t one = 1;
  if (write(d->wake_fd, &one, sizeof one) < 0 && errno != EAGAIN)
    logf_("%s: wake: %s", d->name, strerror(errno));
}

/* ---- interfaces ---- */

/* Legacy ethtool set commands: each turns one offload off. EOPNOTSUPP (a device without that
 * feature) is fine; any other failure is reported but not fatal (frames still flow). */
static void offloads_off(int fd, const char *ifn) {
  static const struct {
    uint32_t cmd;
    const char *name;
  } offs[] = {
      {ETHTOOL_SGRO, "gro"}, {ETHTOOL_SGSO, "gso"},   {ETHTOOL_STSO, "tso"},
      {ETHTOOL_SSG, "sg"},   {ETHTOOL_STXCSUM, "tx"}, {ETHTOOL_SRXCSUM, "rx"},
  };
  for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
    struct ethtool_value ev = {.cmd = offs[i].cmd, .data = 0};
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifn);
    ifr.ifr_data = (void *)&ev;
    if (ioctl(fd, SIOCETHTOOL, &ifr) < 0 && errno != EOPNOTSUPP)
      logf_("%s: ethtool %s off: %s", ifn, offs[i].name, strerror(errno));
  }
}

/* Keeps the link namespace's own IPv6 stack from talking on the wire (router solicitations,
 * MLD): the emulated link must carry only what the two ends send. Best effort. */
static void ipv6_off(const char *ifn) {
  char path[128];
  snprintf(path, sizeof path, "/proc/sys/net/ipv6/conf/%s/disable_ipv6", ifn);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  if (write(fd, "1", 1) < 0)
    logf_("%s: disable_ipv6: %s", ifn, strerror(errno));
  close(fd);
}

static int if_up(int fd, const char *ifn, char *err, size_t errlen) {
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifn);
  if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
    snprintf(err, errlen, "interface %s: %s", ifn, strerror(errno));
    return -1;
  }
  if (!(ifr.ifr_flags & IFF_UP)) {
    ifr.ifr_flags |= IFF_UP;
    if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) {
      snprintf(err, errlen, "bringing %s up: %s", ifn, strerror(errno));
      return -1;
    }
  }
  return 0;
}

/* Opens the packet sockets of one interface: rx sees every frame arriving on it (never our
 * own transmits), in promiscuous mode; tx (protocol 0) only sends. Both carry a virtio-net
 * header so frames from a peer with checksum offload keep their "checksum pending" state
 * across the emulator and the kernel completes it on the way out. */
static int open_if(const char *ifn, int *rx, int *tx, char *err, size_t errlen) {
  int ifindex = (int)if_nametoindex(ifn);
  if (!ifindex) {
    snprintf(err, errlen, "no interface '%s' in this network namespace", ifn);
    return -1;
  }
  int one = 1;
  int r = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
  int t = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (r < 0 || t < 0) {
    snprintf(err, errlen, "AF_PACKET socket: %s", strerror(errno));
    goto fail;
  }
  if (setsockopt(r, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof one) < 0 ||
      setsockopt(t, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof one) < 0) {
    snprintf(err, errlen, "PACKET_VNET_HDR on %s: %s", ifn, strerror(errno));
    goto fail;
  }
  if (setsockopt(r, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) < 0) {
    snprintf(err, errlen, "PACKET_IGNORE_OUTGOING on %s: %s", ifn, strerror(errno));
    goto fail;
  }
  /* Bypass the qdisc layer on transmit: our ring is the queue. */
  setsockopt(t, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
  int buf = 8 << 20;
  setsockopt(r, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf);
  setsockopt(t, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf);
  struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = ifindex};
  if (bind(r, (struct sockaddr *)&sll, sizeof sll) < 0) {
    snprintf(err, errlen, "bind to %s: %s", ifn, strerror(errno));
    goto fail;
  }
  sll.sll_protocol = 0;
  if (bind(t, (struct sockaddr *)&sll, sizeof sll) < 0) {
    snprintf(err, errlen, "bind to %s: %s", ifn, strerror(errno));
    goto fail;
  }
  struct packet_mreq mr = {.mr_ifindex = ifindex, .mr_type = PACKET_MR_PROMISC};
  if (setsockopt(r, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) < 0) {
    snprintf(err, errlen, "promiscuous mode on %s: %s", ifn, strerror(errno));
    goto fail;
  }
  *rx = r;
  *tx = t;
  return 0;
fail:
  if (r >= 0)
    close(r);
  if (t >= 0)
    close(t);
  return -1;
}

/* ---- options ---- */

typedef struct {
  const char *if_a, *if_b, *ctl, *pidfile, *log;
  le_cfg cfg[2]; /* [0] = ab, [1] = ba */
  uint64_t seed;
  uint64_t ring_bytes;
} le_opts;

enum { O_IFA = 256, O_IFB, O_CTL, O_PID, O_LOG, O_SEED, O_RING, O_HELP, O_SHAPE_BASE = 512 };
/* Shaping options: O_SHAPE_BASE + key*3 + (0 both, 1 ab, 2 ba). */
static const char *const shape_keys[] = {"delay", "rate", "loss", "queue", "jitter"};

static void usage(FILE *f) {
  fprintf(f, "usage: " PROG " --if-a IFA --if-b IFB [shaping] [--ctl PATH] [--pidfile PATH] [--log PATH]\n"
             "       " PROG " ctl PATH COMMAND...\n"
             "Forwards every Ethernet frame between IFA and IFB (both in this namespace) with\n"
             "per-direction shaping; ab = IFA->IFB, ba = IFB->IFA. Shaping options apply to both\n"
             "directions, or to one with a -ab/-ba suffix (e.g. --rate-ab 20mbit); later options\n"
             "override earlier ones:\n"
             "  --delay MS     one-way delay (float ms)       --jitter MS  uniform +-MS, no reordering\n"
             "  --rate RATE    20mbit, 500kbit, 1gbit; 0 = unlimited. Counts L3 (IP) bytes: the\n"
             "                 frame without its Ethernet header, as tbf/netem users expect\n"
             "  --loss P       random loss, 0..1 or N%%\n"
             "  --queue BYTES  drop-tail limit at the rate limiter (default: rate x 2 x delay, min 64k)\n"
             "  --seed N       loss/jitter PRNG seed (default 1)\n"
             "  --ring BYTES   frame memory per direction (default 64m)\n"
             "Control socket commands (one line each, answer \"ok...\" or \"error: ...\"):\n"
             "  set [ab|ba|both] delay=MS rate=RATE loss=P queue=BYTES jitter=MS | down | up | stats | quit\n");
}

static void die_opt(const char *fmt, const char *a, const char *b) {
  fprintf(stderr, PROG ": ");
  fprintf(stderr, fmt, a, b);
  fprintf(stderr, " (see --help)\n");
  exit(1);
}

static void parse_opts(int argc, char **argv, le_opts *o) {
  struct option lo[64];
  char names[15][16];
  int n = 0;
  lo[n++] = (struct option){"if-a", required_argument, NULL, O_IFA};
  lo[n++] = (struct option){"if-b", required_argument, NULL, O_IFB};
  lo[n++] = (struct option){"ctl", required_argument, NULL, O_CTL};
  lo[n++] = (struct option){"pidfile", required_argument, NULL, O_PID};
  lo[n++] = (struct option){"log", required_argument, NULL, O_LOG};
  lo[n++] = (struct option){"seed", required_argument, NULL, O_SEED};
  lo[n++] = (struct option){"ring", required_argument, NULL, O_RING};
  lo[n++] = (struct option){"help", no_argument, NULL, O_HELP};
  static const char *const sfx[] = {"", "-ab", "-ba"};
  for (int k = 0; k < 5; k++)
    for (int s = 0; s < 3; s++) {
      snprintf(names[k * 3 + s], sizeof names[0], "%s%s", shape_keys[k], sfx[s]);
      lo[n++] = (struct option){names[k * 3 + s], required_argument, NULL, O_SHAPE_BASE + k * 3 + s};
    }
  lo[n] = (struct option){0};

  memset(o, 0, sizeof *o);
  o->seed = 1;
  o->ring_bytes = RING_DEFAULT;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
    switch (c) {
    case O_IFA: o->if_a = optarg; break;
    case O_IFB: o->if_b = optarg; break;
    case O_CTL: o->ctl = optarg; break;
    case O_PID: o->pidfile = optarg; break;
    case O_LOG: o->log = optarg; break;
    case O_SEED: {
      char *end;
      errno = 0;
      o->seed = strtoull(optarg, &end, 0);
      if (errno || !*optarg || *end)
        die_opt("bad --seed '%s'%s", optarg, "");
      break;
    }
    case O_RING:
      if (le_parse_size(optarg, &o->ring_bytes) || o->ring_bytes < (1u << 20))
        die_opt("bad --ring '%s'%s (at least 1m)", optarg, "");
      break;
    case 'h':
    case O_HELP: usage(stdout); exit(0);
    case '?': die_opt("unknown option or missing value in '%s'%s", argv[optind - 1], ""); break;
    default: {
      if (c < O_SHAPE_BASE || c >= O_SHAPE_BASE + 15)
        die_opt("unexpected option%s%s", "", "");
      int k = (c - O_SHAPE_BASE) / 3, s = (c - O_SHAPE_BASE) % 3;
      le_cfg v = {0};
      int rc = 0;
      switch (k) {
      case 0: rc = le_parse_ms(optarg, &v.delay_ns); break;
      case 1: rc = le_parse_rate(optarg, &v.rate_bps); break;
      case 2: rc = le_parse_prob(optarg, &v.loss); break;
      case 3: rc = le_parse_size(optarg, &v.queue_bytes); break;
      case 4: rc = le_parse_ms(optarg, &v.jitter_ns); break;
      }
      if (rc)
        die_opt("bad value '%s' for --%s", optarg, names[c - O_SHAPE_BASE]);
      for (int dir = 0; dir < 2; dir++) {
        if (s != 0 && s != dir + 1)
          continue;
        le_cfg *t = &o->cfg[dir];
        switch (k) {
        case 0: t->delay_ns = v.delay_ns; break;
        case 1: t->rate_bps = v.rate_bps; break;
        case 2: t->loss = v.loss; break;
        case 3: t->queue_bytes = v.queue_bytes; break;
        case 4: t->jitter_ns = v.jitter_ns; break;
        }
      }
    }
    }
  }
  if (optind < argc)
    die_opt("unexpected argument '%s'%s", argv[optind], "");
  if (!o->if_a || !o->if_b)
    die_opt("--if-a and --if-b are required%s%s", "", "");
  if (!strcmp(o->if_a, o->if_b))
    die_opt("--if-a and --if-b must differ (both '%s')%s", o->if_a, "");
  if (o->ctl && strlen(o->ctl) >= sizeof(((struct sockaddr_un *)0)->sun_path))
    die_opt("--ctl path too long: '%s'%s", o->ctl, "");
}

/* ---- control ---- */

static le_dir g_dir[2];

static void fmt_cfg(char *out, size_t len, const le_cfg *c) {
  snprintf(out, len, "delay=%.3fms rate=%" PRIu64 "bit loss=%g queue=%" PRIu64 " jitter=%.3fms",
           (double)c->delay_ns / 1e6, c->rate_bps, c->loss, le_queue_limit(c), (double)c->jitter_ns / 1e6);
}

/* Runs one command line; writes the one-line answer (no newline). Returns 1 on quit. */
static int ctl_run(const char *line, char *ans, size_t anslen) {
  le_cmd cmd;
  char err[256];
  if (le_cmd_parse(line, &cmd, err, sizeof err)) {
    snprintf(ans, anslen, "error: %s", err);
    return 0;
  }
  switch (cmd.kind) {
  case LE_CMD_SET:
    for (int i = 0; i < 2; i++) {
      if (!(cmd.dirs & (i == 0 ? LE_DIR_AB : LE_DIR_BA)))
        continue;
      char desc[200];
      pthread_mutex_lock(&g_dir[i].mu);
      le_cfg_apply(&g_dir[i].cfg, &cmd);
      g_dir[i].cfg_gen++;
      fmt_cfg(desc, sizeof desc, &g_dir[i].cfg);
      pthread_mutex_unlock(&g_dir[i].mu);
      dir_wake(&g_dir[i]);
      logf_("set %s: %s", g_dir[i].name, desc);
    }
    snprintf(ans, anslen, "ok");
    return 0;
  case LE_CMD_DOWN:
  case LE_CMD_UP:
    for (int i = 0; i < 2; i++) {
      pthread_mutex_lock(&g_dir[i].mu);
      g_dir[i].down = cmd.kind == LE_CMD_DOWN;
      pthread_mutex_unlock(&g_dir[i].mu);
      dir_wake(&g_dir[i]);
    }
    logf_("link %s", cmd.kind == LE_CMD_DOWN ? "down" : "up");
    snprintf(ans, anslen, "ok");
    return 0;
  case LE_CMD_STATS: {
    size_t off = (size_t)snprintf(ans, anslen, "ok");
    for (int i = 0; i < 2 && off < anslen; i++) {
      pthread_mutex_lock(&g_dir[i].mu);
      le_stats st = g_dir[i].st;
      uint64_t q = g_dir[i].queue_bytes, rf = g_dir[i].ring_frames;
      pthread_mutex_unlock(&g_dir[i].mu);
      ans[off++] = ' ';
      off += (size_t)le_stats_format(ans + off, anslen - off, g_dir[i].name, &st, q, rf);
    }
    return 0;
  }
  case LE_CMD_QUIT: snprintf(ans, anslen, "ok"); return 1;
  }
  snprintf(ans, anslen, "error: internal");
  return 0;
}

typedef struct {
  int fd;
  size_t len;
  char buf[512];
} ctl_client;

static int ctl_listen(const char *path, char *err, size_t errlen) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
  struct stat sb;
  if (lstat(path, &sb) == 0) {
    /* A socket left by a killed emulator may be reused; a live one or a non-socket not. */
    if (!S_ISSOCK(sb.st_mode)) {
      snprintf(err, errlen, "--ctl %s exists and is not a socket", path);
      return -1;
    }
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof sa) == 0) {
      close(probe);
      snprintf(err, errlen, "--ctl %s is in use by another emulator", path);
      return -1;
    }
    if (probe >= 0)
      close(probe);
    unlink(path);
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 8) < 0) {
    snprintf(err, errlen, "--ctl %s: %s", path, strerror(errno));
    if (fd >= 0)
      close(fd);
    return -1;
  }
  return fd;
}

/* Serves the control socket and signals until quit or SIGTERM/SIGINT. */
static void main_loop(int sig_fd, int lfd) {
  ctl_client cl[MAX_CLIENTS];
  for (int i = 0; i < MAX_CLIENTS; i++)
    cl[i].fd = -1;
  bool quit = false;
  while (!quit) {
    struct pollfd pfd[2 + MAX_CLIENTS];
    int map[2 + MAX_CLIENTS];
    int n = 0;
    pfd[n++] = (struct pollfd){.fd = sig_fd, .events = POLLIN};
    if (lfd >= 0)
      pfd[n++] = (struct pollfd){.fd = lfd, .events = POLLIN};
    for (int i = 0; i < MAX_CLIENTS; i++)
      if (cl[i].fd >= 0) {
        map[n] = i;
        pfd[n++] = (struct pollfd){.fd = cl[i].fd, .events = POLLIN};
      }
    if (poll(pfd, (nfds_t)n, -1) < 0) {
      if (errno == EINTR)
        continue;
      logf_("poll: %s", strerror(errno));
      break;
    }
    if (pfd[0].revents & POLLIN) {
      struct signalfd_siginfo si;
      if (read(sig_fd, &si, sizeof si) == (ssize_t)sizeof si &&
          (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT || si.ssi_signo == SIGHUP)) {
        logf_("signal %u: exiting", si.ssi_signo);
        break;
      }
    }
    if (lfd >= 0 && (pfd[1].revents & POLLIN)) {
      int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (c >= 0) {
        int slot = -1;
        for (int i = 0; i < MAX_CLIENTS && slot < 0; i++)
          if (cl[i].fd < 0)
            slot = i;
        if (slot < 0) {
          /* Every slot taken by idle clients: the newest command wins over a stale one. */
          close(cl[0].fd);
          slot = 0;
        }
        cl[slot].fd = c;
        cl[slot].len = 0;
      }
    }
    for (int p = lfd >= 0 ? 2 : 1; p < n; p++) {
      if (!pfd[p].revents)
        continue;
      ctl_client *c = &cl[map[p]];
      ssize_t r = read(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len);
      if (r <= 0) {
        if (r < 0 && errno == EAGAIN)
          continue;
        close(c->fd);
        c->fd = -1;
        continue;
      }
      c->len += (size_t)r;
      c->buf[c->len] = 0;
      char *nl;
      while ((nl = memchr(c->buf, '\n', c->len)) != NULL || c->len == sizeof c->buf - 1) {
        if (!nl)
          nl = c->buf + c->len - 1; /* overlong line: answer it as is (an error) */
        *nl = 0;
        char ans[1200];
        int q = ctl_run(c->buf, ans, sizeof ans);
        size_t al = strlen(ans);
        ans[al++] = '\n';
        if (write(c->fd, ans, al) < 0)
          logf_("ctl reply: %s", strerror(errno));
        size_t used = (size_t)(nl - c->buf) + 1;
        memmove(c->buf, c->buf + used, c->len - used);
        c->len -= used;
        c->buf[c->len] = 0;
        if (q) {
          logf_("quit requested");
          quit = true;
          break;
        }
      }
    }
  }
  for (int i = 0; i < MAX_CLIENTS; i++)
    if (cl[i].fd >= 0)
      close(cl[i].fd);
}

/* ---- client mode: mhttp-linkemu ctl PATH COMMAND... ---- */

static int client_main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, PROG ": usage: " PROG " ctl PATH COMMAND...\n");
    return 1;
  }
  char line[512];
  size_t off = 0;
  for (int i = 3; i < argc; i++) {
    int w = snprintf(line + off, sizeof line - off, "%s%s", i > 3 ? " " : "", argv[i]);
    if (w < 0 || (size_t)w >= sizeof line - off - 1) {
      fprintf(stderr, PROG ": command too long\n");
      return 1;
    }
    off += (size_t)w;
  }
  line[off++] = '\n';
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(argv[2]) >= sizeof sa.sun_path) {
    fprintf(stderr, PROG ": ctl path too long\n");
    return 1;
  }
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", argv[2]);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
    fprintf(stderr, PROG ": connect %s: %s\n", argv[2], strerror(errno));
    return 1;
  }
  struct timeval tv = {.tv_sec = 5};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (write(fd, line, off) != (ssize_t)off) {
    fprintf(stderr, PROG ": write %s: %s\n", argv[2], strerror(errno));
    return 1;
  }
  char ans[2048];
  size_t al = 0;
  while (al < sizeof ans - 1) {
    ssize_t r = read(fd, ans + al, sizeof ans - 1 - al);
    if (r <= 0)
      break;
    al += (size_t)r;
    if (memchr(ans, '\n', al))
      break;
  }
  close(fd);
  ans[al] = 0;
  char *nl = strchr(ans, '\n');
  if (nl)
    *nl = 0;
  if (!al) {
    fprintf(stderr, PROG ": no answer from %s\n", argv[2]);
    return 1;
  }
  printf("%s\n", ans);
  return strncmp(ans, "ok", 2) == 0 ? 0 : 1;
}

/* ---- main ---- */

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "ctl"))
    return client_main(argc, argv);
  le_opts o;
  parse_opts(argc, argv, &o);
  if (o.log) {
    g_log = fopen(o.log, "ae");
    if (!g_log) {
      fprintf(stderr, PROG ": --log %s: %s\n", o.log, strerror(errno));
      return 1;
    }
  }

  /* Signals go to the main thread's signalfd only; workers inherit the blocked mask. */
  sigset_t ss;
  sigemptyset(&ss);
  sigaddset(&ss, SIGTERM);
  sigaddset(&ss, SIGINT);
  sigaddset(&ss, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &ss, NULL);
  signal(SIGPIPE, SIG_IGN);
  int sig_fd = signalfd(-1, &ss, SFD_CLOEXEC);
  if (sig_fd < 0) {
    /* Without it the blocked SIGTERM could never stop us. */
    fprintf(stderr, PROG ": signalfd: %s\n", strerror(errno));
    return 1;
  }

  char err[300];
  int ctl_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const char *ifs[2] = {o.if_a, o.if_b};
  int rx[2] = {-1, -1}, tx[2] = {-1, -1};
  for (int i = 0; i < 2; i++) {
    if (ctl_fd < 0 || if_up(ctl_fd, ifs[i], err, sizeof err) < 0) {
      if (ctl_fd < 0)
        snprintf(err, sizeof err, "socket: %s", strerror(errno));
      fprintf(stderr, PROG ": %s\n", err);
      return 1;
    }
    offloads_off(ctl_fd, ifs[i]);
    ipv6_off(ifs[i]);
    if (open_if(ifs[i], &rx[i], &tx[i], err, sizeof err) < 0) {
      fprintf(stderr, PROG ": %s\n", err);
      return 1;
    }
  }
  close(ctl_fd);

  int lfd = -1;
  if (o.ctl && (lfd = ctl_listen(o.ctl, err, sizeof err)) < 0) {
    fprintf(stderr, PROG ": %s\n", err);
    return 1;
  }
  if (o.pidfile) {
    FILE *pf = fopen(o.pidfile, "we");
    if (!pf || fprintf(pf, "%d\n", (int)getpid()) < 0 || fclose(pf) != 0) {
      fprintf(stderr, PROG ": --pidfile %s: %s\n", o.pidfile, strerror(errno));
      if (o.ctl)
        unlink(o.ctl);
      return 1;
    }
  }

  uint64_t now = mono_ns();
  int rc = 0;
  for (int i = 0; i < 2; i++) {
    le_dir *d = &g_dir[i];
    d->name = i == 0 ? "ab" : "ba";
    d->rx_if = ifs[i];
    d->tx_if = ifs[1 - i];
    d->rx_fd = rx[i];
    d->tx_fd = tx[1 - i];
    d->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    pthread_mutex_init(&d->mu, NULL);
    d->cfg = o.cfg[i];
    d->cfg_gen = 1;
    le_shaper_init(&d->sh, &o.cfg[i], o.seed * 2 + (uint64_t)i);
    le_shaper_reset(&d->sh, now);
    d->ring_len = o.ring_bytes;
    /* MAP_NORESERVE: memory is bounded by ring_len but only what the link holds is touched. */
    d->ring_mem = mmap(NULL, d->ring_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    d->stage = malloc((size_t)BATCH * STAGE_LEN);
    if (d->wake_fd < 0 || d->ring_mem == MAP_FAILED || !d->stage) {
      fprintf(stderr, PROG ": out of memory or descriptors\n");
      rc = 1;
      break;
    }
    le_ring_init(&d->ring, d->ring_mem, d->ring_len);
    char desc[200];
    fmt_cfg(desc, sizeof desc, &d->cfg);
    logf_("%s (%s -> %s): %s", d->name, d->rx_if, d->tx_if, desc);
  }
  for (int i = 0; i < 2 && rc == 0; i++) {
    if (pthread_create(&g_dir[i].thr, NULL, dir_main, &g_dir[i]) != 0) {
      fprintf(stderr, PROG ": pthread_create failed\n");
      rc = 1;
      break;
    }
    g_dir[i].started = true;
  }
  if (rc == 0)
    main_loop(sig_fd, lfd);

  atomic_store(&g_stop, true);
  for (int i = 0; i < 2; i++) {
    if (g_dir[i].started) {
      dir_wake(&g_dir[i]);
      pthread_join(g_dir[i].thr, NULL);
    }
  }
  if (lfd >= 0) {
    close(lfd);
    unlink(o.ctl);
  }
  if (o.pidfile)
    unlink(o.pidfile);
  for (int i = 0; i < 2; i++) {
    char line[600];
    le_stats_format(line, sizeof line, g_dir[i].name ? g_dir[i].name : "?", &g_dir[i].st, 0, 0);
    logf_("final %s", line);
  }
  return rc;
}
