/* The host-wide store's file glue: write then read back, the metrics_store key, damaged or foreign files refused and replaced, the namespace cookie. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mh_config.h"
#include "mh_mstore.h"

#define S (1000000ULL)
#define T0 (5000 * S)

static char dir[64], file[96];
static struct mh_config cfg;
static struct pol_store_key k;
static struct mh_mstore *ms; /* the copy an engine would own */

static void setup(void) {
  strcpy(dir, "/tmp/mstore-test.XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  snprintf(file, sizeof file, "%s/metrics", dir);
  mh_config_defaults(&cfg);
  char err[MH_CONFIG_ERR_MAX];
  cr_assert_eq(mh_config_set(&cfg, "metrics_store", file, "t", err, sizeof err), 0, "%s", err);
  struct sockaddr_storage a;
  memset(&a, 0, sizeof a);
  a.ss_family = AF_INET;
  inet_pton(AF_INET, "10.0.2.2", &((struct sockaddr_in *)&a)->sin_addr);
  mh_mstore_key(&k, 42, "lte0", 5, &a);
  if (!ms)
    cr_assert_eq(mh_mstore_new(&ms), 0);
  mh_mstore_invalidate(ms);
}
static void teardown(void) {
  unlink(file);
  rmdir(dir);
}
TestSuite(mstore, .init = setup, .fini = teardown);

static int lookup(uint64_t now, struct pol_store_obs *o) {
  mh_mstore_invalidate(ms);
  return mh_mstore_lookup(ms, &cfg, &k, 1, now, o);
}

static void put_one(uint64_t now) {
  struct pol_store_obs o = {.srtt_min_us = 100000, .srtt_med_us = 110000, .max_rate = 2e6};
  cr_assert_eq(mh_mstore_put(ms, &cfg, &k, &o, 1, now), 0);
}

Test(mstore, write_then_read_back_0600) {
  struct pol_store_obs o;
  cr_assert_eq(lookup(T0, &o), 0, "no file yet");
  put_one(T0);
  struct stat st;
  cr_assert_eq(stat(file, &st), 0);
  cr_assert_eq(st.st_mode & 0777, 0600);
  cr_assert_eq(st.st_size, POL_STORE_FILE_SIZE);
  cr_assert_eq(lookup(T0 + S, &o), 1);
  cr_assert_eq(o.srtt_min_us, 100000);
  cr_assert_eq(o.max_rate, 2e6);
  cr_assert_eq(lookup(T0 + 301 * S, &o), 0, "5 minutes later it is gone");
}

Test(mstore, off_reads_and_writes_nothing) {
  char err[MH_CONFIG_ERR_MAX];
  cr_assert_eq(mh_config_set(&cfg, "metrics_store", "off", "t", err, sizeof err), 0);
  put_one(T0);
  cr_assert_eq(access(file, F_OK), -1);
  struct pol_store_obs o;
  cr_assert_eq(lookup(T0, &o), 0);
}

Test(mstore, config_key_wants_off_or_an_absolute_path) {
  char err[MH_CONFIG_ERR_MAX] = "";
  cr_assert_eq(mh_config_set(&cfg, "metrics_store", "rel/path", "MHTTP_METRICS_STORE", err, sizeof err), -1);
  cr_assert(strstr(err, "MHTTP_METRICS_STORE: metrics_store: bad value 'rel/path'"), "%s", err);
  cr_assert_str_eq(cfg.metrics_store, file, "the previous value stays");
  cr_assert_eq(mh_config_set(&cfg, "metrics_store", "", "t", err, sizeof err), -1);
  char buf[256];
  struct mh_config d;
  mh_config_defaults(&d);
  cr_assert_eq(mh_mstore_path(&d, buf, sizeof buf), 1, "a default path");
  cr_assert_eq(mh_mstore_path(&cfg, buf, sizeof buf), 0);
  cr_assert_str_eq(buf, file);
}

Test(mstore, garbage_is_ignored_then_replaced) {
  int fd = open(file, O_WRONLY | O_CREAT, 0600);
  cr_assert_geq(fd, 0);
  char junk[POL_STORE_FILE_SIZE + 100];
  memset(junk, 0x5a, sizeof junk);
  cr_assert_eq(write(fd, junk, sizeof junk), (ssize_t)sizeof junk);
  close(fd);
  struct pol_store_obs o;
  cr_assert_eq(lookup(T0, &o), 0);
  put_one(T0);
  cr_assert_eq(lookup(T0 + S, &o), 1);
  cr_assert_eq(o.srtt_min_us, 100000);
}

Test(mstore, a_file_of_another_user_is_neither_read_nor_written) {
  put_one(T0);
  if (geteuid() != 0)
    cr_skip_test("needs root to give the file away");
  cr_assert_eq(chown(file, 65534, 65534), 0);
  struct pol_store_obs o;
  cr_assert_eq(lookup(T0 + S, &o), 0);
  struct pol_store_obs w = {.srtt_min_us = 1};
  cr_assert_eq(mh_mstore_put(ms, &cfg, &k, &w, 1, T0 + S), -EPERM);
}

Test(mstore, a_symlink_is_not_followed) {
  char target[128];
  snprintf(target, sizeof target, "%s/real", dir);
  cr_assert_eq(symlink(target, file), 0);
  struct pol_store_obs w = {.srtt_min_us = 1000};
  cr_assert_lt(mh_mstore_put(ms, &cfg, &k, &w, 1, T0), 0);
  cr_assert_eq(access(target, F_OK), -1, "nothing created through the link");
  unlink(target);
}

Test(mstore, another_namespace_cookie_sees_nothing) {
  put_one(T0);
  k.netns = 43;
  struct pol_store_obs o;
  cr_assert_eq(lookup(T0 + S, &o), 0);
  k.netns = 42;
  cr_assert_eq(lookup(T0 + S, &o), 1);
}

Test(mstore, the_kernel_gives_a_namespace_cookie) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  cr_assert_geq(fd, 0);
  cr_assert_neq(mh_mstore_netns(fd), 0);
  close(fd);
  cr_assert_eq(mh_mstore_netns(-1), 0);
}
