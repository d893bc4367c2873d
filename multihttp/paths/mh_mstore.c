/* The host-wide metrics store's file: path, directory and owner checks, flock'd read-modify-write, the namespace cookie and the process copy. */
#include "mh_mstore.h"
#include "mh_fdgate.h"
#include "mh_config.h"
#include "mh_upstream.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MH__RELOAD_US 1000000ULL /* the process copy is re-read at most once a second */
#define MH__LOCK_TRIES 20        /* × 250 µs: give up on a lock held 5 ms */

/* An engine's copy and the file image buffer: on the heap, not on the stack, because lookups
 * run inside the program's connect() on whatever (possibly small) stack its thread has. */
struct mh_mstore {
  pthread_mutex_t mu;
  struct pol_store copy;
  /* this process's own trust notes per interface name (kept with the store off too) */
  char tname[POL_MAX_IFACES][POL_IFNAME_MAX];
  struct pol_trust trust[POL_MAX_IFACES];
  unsigned ntrust;
  uint8_t img[POL_STORE_FILE_SIZE];
  uint64_t copy_at; /* when the copy was read (0: never) */
  uint64_t boot;    /* hash of the kernel's boot id (0: not read yet) */
};

int mh_mstore_new(struct mh_mstore **out) {
  struct mh_mstore *ms = calloc(1, sizeof *ms);
  if (!ms)
    return -ENOMEM;
  pthread_mutex_init(&ms->mu, NULL);
  *out = ms;
  return 0;
}

void mh_mstore_free(struct mh_mstore *ms) {
  if (!ms)
    return;
  pthread_mutex_destroy(&ms->mu);
  free(ms);
}

int mh_mstore_path(const struct mh_config *cfg, char *buf, size_t cap) {
  int n;
  if (!strcmp(cfg->metrics_store, "off"))
    return -1;
  if (cfg->metrics_store[0])
    return (size_t)snprintf(buf, cap, "%s", cfg->metrics_store) < cap ? 0 : -1;
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  if (xdg && xdg[0] == '/')
    n = snprintf(buf, cap, "%s/mhttp/metrics", xdg);
  else if (geteuid() == 0)
    n = snprintf(buf, cap, "/run/mhttp/metrics");
  else
    n = snprintf(buf, cap, "/tmp/mhttp-%u/metrics", (unsigned)geteuid());
  return n > 0 && (size_t)n < cap ? 1 : -1;
}

uint64_t mh_mstore_netns(int fd) {
  uint64_t cookie = 0;
  return fd >= 0 && mh_upstream_sock_query(fd, MH_UPQ_NETNS, NULL, &cookie) == 0 ? cookie : 0;
}

void mh_mstore_key(struct pol_store_key *k, uint64_t netns, const char *ifname, unsigned ifindex,
                   const struct sockaddr_storage *addr) {
  memset(k, 0, sizeof *k);
  k->netns = netns;
  k->ifindex = ifindex;
  snprintf(k->ifname, sizeof k->ifname, "%s", ifname);
  k->family = (uint8_t)addr->ss_family;
  if (addr->ss_family == AF_INET)
    memcpy(k->addr, &((const struct sockaddr_in *)addr)->sin_addr, 4);
  else if (addr->ss_family == AF_INET6)
    memcpy(k->addr, &((const struct sockaddr_in6 *)addr)->sin6_addr, 16);
}

/* Called with ms->mu held. */
static uint64_t mh__boot(struct mh_mstore *ms) {
  if (ms->boot)
    return ms->boot;
  char id[64] = {0};
  int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)!read(fd, id, sizeof id - 1);
    close(fd);
  }
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; id[i]; i++)
    h = (h ^ (uint8_t)id[i]) * 0x100000001b3ULL;
  ms->boot = h;
  return ms->boot;
}

/* A default directory must be ours alone: in /tmp another user could have made it first. */
static int mh__dir_ok(const char *path, int create) {
  char dir[256];
  const char *slash = strrchr(path, '/');
  if (!slash || (size_t)(slash - path) >= sizeof dir)
    return -EINVAL;
  memcpy(dir, path, (size_t)(slash - path));
  dir[slash - path] = 0;
  struct stat st;
  if (lstat(dir, &st) < 0) {
    if (errno != ENOENT || !create || mkdir(dir, 0700) < 0 || lstat(dir, &st) < 0)
      return -errno;
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
    return -EPERM;
  return 0;
}

static int mh__open(const char *path, int is_default, int create) {
  if (is_default && mh__dir_ok(path, create) < 0)
    return -EPERM;
  int fd = open(path, (create ? O_RDWR | O_CREAT : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd < 0)
    return -errno;
  struct stat st;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
    close(fd);
    return -EPERM; /* someone else's file: neither trusted nor written */
  }
  return fd;
}

/* flock without waiting on a stopped or stuck process: a few short tries, then give up. */
static int mh__lock(int fd, int op) {
  for (int i = 0; i < MH__LOCK_TRIES; i++) {
    if (flock(fd, op | LOCK_NB) == 0)
      return 0;
    if (errno != EWOULDBLOCK && errno != EINTR)
      return -errno;
    struct timespec ts = {0, 250000};
    nanosleep(&ts, NULL);
  }
  return -EWOULDBLOCK;
}

/* Reads the image at fd into the copy (ms->mu held). A short or damaged file gives an empty copy. */
static void mh__read(struct mh_mstore *ms, int fd, uint64_t now) {
  ssize_t n = pread(fd, ms->img, sizeof ms->img, 0);
  if (n != (ssize_t)sizeof ms->img || pol_store_decode(&ms->copy, ms->img, sizeof ms->img, mh__boot(ms), now) < 0)
    pol_store_init(&ms->copy);
}

/* Re-reads the file into the copy when it is older than MH__RELOAD_US (ms->mu held). */
static void mh__refresh(struct mh_mstore *ms, const char *path, int def, uint64_t now_us) {
  if (ms->copy_at && now_us - ms->copy_at < MH__RELOAD_US && now_us >= ms->copy_at)
    return;
  ms->copy_at = now_us; /* also on failure: a missing file is not looked for on every connect */
  pol_store_init(&ms->copy);
  mh_fdgate(1); /* a forked child would keep the file, and its lock, forever */
  int fd = mh__open(path, def, 0);
  if (fd >= 0) {
    if (mh__lock(fd, LOCK_SH) == 0)
      mh__read(ms, fd, now_us);
    close(fd); /* releases the lock */
  }
  mh_fdgate(0);
}

int mh_mstore_lookup(struct mh_mstore *ms, const struct mh_config *cfg, const struct pol_store_key *keys, unsigned n,
                     uint64_t now_us, struct pol_store_obs *out) {
  char path[256];
  int def = mh_mstore_path(cfg, path, sizeof path);
  if (def >= 0 && pthread_mutex_trylock(&ms->mu) != 0)
    return -EBUSY; /* out[] untouched: the caller keeps what it had */
  memset(out, 0, n * sizeof *out);
  if (def < 0)
    return 0;
  mh__refresh(ms, path, def, now_us);
  int found = 0;
  for (unsigned i = 0; i < n; i++)
    if (keys[i].netns && pol_store_get(&ms->copy, &keys[i], now_us, &out[i]) == 0)
      found++;
  pthread_mutex_unlock(&ms->mu);
  return found;
}

/* What a read-modify-write adds to the copy before it is written back. */
struct mh__change {
  const struct pol_store_key *keys;
  const struct pol_store_obs *obs; /* NULL: a trust note */
  unsigned n;
  uint64_t dest;
  enum pol_trust_state st;
};

static void mh__apply(struct mh_mstore *ms, const struct mh__change *c, uint64_t now_us) {
  for (unsigned i = 0; i < c->n; i++)
    if (c->keys[i].netns && c->obs)
      (void)pol_store_put(&ms->copy, &c->keys[i], &c->obs[i], now_us);
    else if (c->keys[i].netns)
      (void)pol_store_trust_put(&ms->copy, &c->keys[i], c->dest, c->st, now_us);
}

/* The file's records with change c, written back under an exclusive lock (ms->mu held). */
static int mh__rmw(struct mh_mstore *ms, const char *path, int def, const struct mh__change *c, uint64_t now_us) {
  mh_fdgate(1); /* a forked child would keep the file, and its lock, forever */
  int fd = mh__open(path, def, 1);
  if (fd < 0) {
    mh_fdgate(0);
    return fd;
  }
  int rc = mh__lock(fd, LOCK_EX);
  if (rc == 0) {
    mh__read(ms, fd, now_us);
    mh__apply(ms, c, now_us);
    pol_store_encode(&ms->copy, mh__boot(ms), ms->img, sizeof ms->img);
    /* the lock excludes readers, so a plain rewrite in place is whole to them; a longer
     * file (another version's) is cut to our size */
    if (pwrite(fd, ms->img, sizeof ms->img, 0) != (ssize_t)sizeof ms->img || ftruncate(fd, sizeof ms->img) < 0)
      rc = -EIO;
    ms->copy_at = now_us;
  }
  close(fd);
  mh_fdgate(0);
  return rc;
}

int mh_mstore_put(struct mh_mstore *ms, const struct mh_config *cfg, const struct pol_store_key *keys,
                  const struct pol_store_obs *obs, unsigned n, uint64_t now_us) {
  char path[256];
  int def = mh_mstore_path(cfg, path, sizeof path);
  if (def < 0)
    return 0;
  int any = 0;
  for (unsigned i = 0; i < n; i++)
    any |= keys[i].netns != 0;
  if (!any)
    return 0;
  struct mh__change c = {.keys = keys, .obs = obs, .n = n};
  pthread_mutex_lock(&ms->mu);
  int rc = mh__rmw(ms, path, def, &c, now_us);
  pthread_mutex_unlock(&ms->mu);
  return rc;
}

/* This process's trust entries of interface name (ms->mu held); NULL when the table is full. */
static struct pol_trust *mh__own_trust(struct mh_mstore *ms, const char *name, int add) {
  for (unsigned i = 0; i < ms->ntrust; i++)
    if (!strncmp(ms->tname[i], name, POL_IFNAME_MAX))
      return &ms->trust[i];
  if (!add || ms->ntrust == POL_MAX_IFACES)
    return NULL;
  snprintf(ms->tname[ms->ntrust], POL_IFNAME_MAX, "%s", name);
  memset(&ms->trust[ms->ntrust], 0, sizeof ms->trust[0]);
  return &ms->trust[ms->ntrust++];
}

int mh_mstore_trust_note(struct mh_mstore *ms, const struct mh_config *cfg, const struct pol_store_key *k,
                         uint64_t dest, enum pol_trust_state st, uint64_t now_us) {
  char path[256];
  int def = mh_mstore_path(cfg, path, sizeof path);
  pthread_mutex_lock(&ms->mu);
  struct pol_trust *own = mh__own_trust(ms, k->ifname, 1);
  struct pol_trust next;
  if (own)
    next = *own;
  int rc = own ? pol_trust_note(&next, dest, st, now_us) : -1;
  if (rc == 1 && def >= 0 && k->netns) {
    struct mh__change c = {.keys = k, .n = 1, .dest = dest, .st = st};
    int w = mh__rmw(ms, path, def, &c, now_us);
    rc = w < 0 ? w : rc;
  }
  if (rc == 1)
    *own = next; /* kept only once shared: a failed write is tried again at the next note */
  pthread_mutex_unlock(&ms->mu);
  return rc;
}

int mh_mstore_trust(struct mh_mstore *ms, const struct mh_config *cfg, const struct pol_store_key *keys, unsigned n,
                    uint64_t dest, uint64_t now_us, enum pol_trust_state *out) {
  for (unsigned i = 0; i < n; i++)
    out[i] = POL_TRUST_UNKNOWN;
  char path[256];
  int def = mh_mstore_path(cfg, path, sizeof path);
  if (pthread_mutex_trylock(&ms->mu) != 0)
    return -EBUSY; /* unknown: nothing is trusted on a guess */
  if (def >= 0)
    mh__refresh(ms, path, def, now_us);
  for (unsigned i = 0; i < n; i++) {
    struct pol_trust t;
    memset(&t, 0, sizeof t);
    if (def >= 0 && keys[i].netns)
      pol_store_trust_get(&ms->copy, &keys[i], &t);
    const struct pol_trust *own = mh__own_trust(ms, keys[i].ifname, 0);
    if (own)
      pol_trust_merge(&t, own);
    out[i] = pol_trust_get(&t, dest, now_us);
  }
  pthread_mutex_unlock(&ms->mu);
  return 0;
}

void mh_mstore_invalidate(struct mh_mstore *ms) {
  pthread_mutex_lock(&ms->mu);
  ms->copy_at = 0;
  pthread_mutex_unlock(&ms->mu);
}
