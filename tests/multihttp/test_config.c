/* Configuration parsing: defaults, file lines, environment precedence, and one clear line per bad value. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mh_config.h"
#include "mh_log.h"
#include "mh_rwnd.h"

#include "fakeenv.h"

Test(config, defaults) {
  struct mh_config c;
  mh_config_defaults(&c);
  cr_assert(mh_config_port_eligible(&c, 80));
  cr_assert(mh_config_port_eligible(&c, 8080));
  cr_assert(!mh_config_port_eligible(&c, 443));
  cr_assert(!c.disabled);
  cr_assert_eq(c.log_level, MH_LOG_ERROR);
  cr_assert_str_eq(c.log_file, "");
  cr_assert_eq(c.window, 24u << 20, "the window plus the engine's own memory stays under 32 MiB");
}

Test(config, ports_list_and_star) {
  struct mh_config c;
  char err[MH_CONFIG_ERR_MAX];
  mh_config_defaults(&c);
  cr_assert_eq(mh_config_set(&c, "ports", " 81, 8000 ,65535", "t", err, sizeof err), 0);
  cr_assert(mh_config_port_eligible(&c, 81) && mh_config_port_eligible(&c, 8000));
  cr_assert(mh_config_port_eligible(&c, 65535));
  cr_assert(!mh_config_port_eligible(&c, 80), "a list replaces the default");
  cr_assert_eq(mh_config_set(&c, "ports", "*", "t", err, sizeof err), 0);
  cr_assert(mh_config_port_eligible(&c, 443) && mh_config_port_eligible(&c, 1));
}

Test(config, bad_ports_leave_previous_value) {
  static const char *bad[] = {"", "0", "65536", "80,", ",80", "80;81", "http", "8O", "*,80", "123456"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct mh_config c;
    char err[MH_CONFIG_ERR_MAX] = "";
    mh_config_defaults(&c);
    cr_assert_eq(mh_config_set(&c, "ports", bad[i], "MHTTP_PORTS", err, sizeof err), -1, "'%s'", bad[i]);
    cr_assert(strstr(err, "MHTTP_PORTS") && strstr(err, "ports"), "message names the source: %s", err);
    cr_assert(!strchr(err, '\n'), "one line");
    cr_assert(mh_config_port_eligible(&c, 80), "default kept after '%s'", bad[i]);
  }
}

Test(config, log_levels_and_bools) {
  struct mh_config c;
  char err[MH_CONFIG_ERR_MAX];
  mh_config_defaults(&c);
  cr_assert_eq(mh_config_set(&c, "log", "debug", "t", err, sizeof err), 0);
  cr_assert_eq(c.log_level, MH_LOG_DEBUG);
  cr_assert_eq(mh_config_set(&c, "log", "INFO", "t", err, sizeof err), 0);
  cr_assert_eq(c.log_level, MH_LOG_INFO);
  cr_assert_eq(mh_config_set(&c, "log", "verbose", "t", err, sizeof err), -1);
  cr_assert(strstr(err, "verbose"));
  cr_assert_eq(mh_config_set(&c, "disable", "yes", "t", err, sizeof err), 0);
  cr_assert(c.disabled);
  cr_assert_eq(mh_config_set(&c, "disable", "2", "t", err, sizeof err), -1);
  cr_assert_eq(mh_config_parse_bool("On"), 1);
  cr_assert_eq(mh_config_parse_bool("0"), 0);
  cr_assert_eq(mh_config_parse_bool("maybe"), -1);
}

Test(config, file_text) {
  struct mh_config c;
  char err[MH_CONFIG_ERR_MAX];
  mh_config_defaults(&c);
  const char *text = "# libmhttp\n\n  ports = 80, 9000  # two\nlog=info\r\nlog_file = /tmp/x.log\n"
                     "policy = eaf\n"; /* a later module's key: ignored here */
  cr_assert_eq(mh_config_parse_text(&c, text, strlen(text), "/etc/mhttp.conf", err, sizeof err), 0, "%s", err);
  cr_assert(mh_config_port_eligible(&c, 9000) && !mh_config_port_eligible(&c, 8080));
  cr_assert_eq(c.log_level, MH_LOG_INFO);
  cr_assert_str_eq(c.log_file, "/tmp/x.log");
}

/* dns_<iface>: per-interface servers for multiDNS; a later line for the same interface
 * replaces the earlier one; a ninth interface or an over-long name is refused by name. */
Test(config, dns_servers_per_interface) {
  struct mh_config c;
  char err[MH_CONFIG_ERR_MAX];
  mh_config_defaults(&c);
  const char *text = "dns_lte0 = 10.202.1.1, 10.202.1.9\ndns_wifi0=10.201.1.1\ndns_lte0 = 10.202.1.1\n";
  cr_assert_eq(mh_config_parse_text(&c, text, strlen(text), "m.conf", err, sizeof err), 0, "%s", err);
  cr_assert_str_eq(mh_config_dns(&c, "lte0"), "10.202.1.1");
  cr_assert_str_eq(mh_config_dns(&c, "wifi0"), "10.201.1.1");
  cr_assert_null(mh_config_dns(&c, "eth0"));
  cr_assert_eq(c.ndns, 2);
  cr_assert_eq(mh_config_set(&c, "dns_averyveryverylongifname", "1.1.1.1", "m.conf", err, sizeof err), -1);
  cr_assert(strstr(err, "dns_averyveryverylongifname"), "%s", err);
  char key[16];
  for (int i = 0; i < 6; i++) {
    snprintf(key, sizeof key, "dns_if%d", i);
    cr_assert_eq(mh_config_set(&c, key, "1.1.1.1", "m.conf", err, sizeof err), 0, "%s", err);
  }
  cr_assert_eq(mh_config_set(&c, "dns_if9", "1.1.1.1", "m.conf", err, sizeof err), -1, "nine interfaces");
  cr_assert_eq(mh_config_set(&c, "dns_if0", "9.9.9.9", "m.conf", err, sizeof err), 0, "a known one is replaced");
  cr_assert_str_eq(mh_config_dns(&c, "if0"), "9.9.9.9");
}

Test(config, file_errors_name_the_line) {
  struct mh_config c;
  char err[MH_CONFIG_ERR_MAX];
  mh_config_defaults(&c);
  const char *text = "log = info\nports 80\n";
  cr_assert_eq(mh_config_parse_text(&c, text, strlen(text), "f.conf", err, sizeof err), -1);
  cr_assert(strstr(err, "f.conf:2"), "%s", err);
  const char *text2 = "log = info\n\nports = eighty\n";
  cr_assert_eq(mh_config_parse_text(&c, text2, strlen(text2), "f.conf", err, sizeof err), -1);
  cr_assert(strstr(err, "f.conf:3") && strstr(err, "eighty"), "%s", err);
}

Test(config, environment_overrides_file) {
  struct mh_config c;
  char err[MH_CONFIG_ERR_MAX];
  memset(env_tab, 0, sizeof env_tab);
  mh_config_defaults(&c);
  const char *text = "ports = 9000\nlog = debug\n";
  mh_config_parse_text(&c, text, strlen(text), "f", err, sizeof err);
  set_env("MHTTP_PORTS", "*");
  set_env("MHTTP_LOG", "off");
  cr_assert_eq(mh_config_apply_env(&c, fake_getenv, err, sizeof err), 0);
  cr_assert(c.all_ports);
  cr_assert_eq(c.log_level, MH_LOG_OFF);
  set_env("MHTTP_LOG_FILE", "");
  cr_assert_eq(mh_config_apply_env(&c, fake_getenv, err, sizeof err), -1);
  cr_assert(strstr(err, "MHTTP_LOG_FILE"), "%s", err);
}

Test(config, preconnect_default_env_and_bad_value) {
  struct mh_config c;
  char err[MH_CONFIG_ERR_MAX];
  mh_config_defaults(&c);
  cr_assert_eq(c.preconnect, 1);
  memset(env_tab, 0, sizeof env_tab);
  set_env("MHTTP_PRECONNECT", "off");
  cr_assert_eq(mh_config_apply_env(&c, fake_getenv, err, sizeof err), 0);
  cr_assert_eq(c.preconnect, 0);
  cr_assert_eq(mh_config_set(&c, "preconnect", "maybe", "f.conf", err, sizeof err), -1);
  cr_assert(strstr(err, "preconnect") && strstr(err, "maybe"), "%s", err);
  cr_assert_eq(c.preconnect, 0);
  memset(env_tab, 0, sizeof env_tab);
}

Test(config, rwnd_clamp_default_env_off_and_bad_values) {
  struct mh_config c;
  char err[MH_CONFIG_ERR_MAX];
  mh_config_defaults(&c);
  cr_assert_eq(c.rwnd_k, MH_RWND_K_DEFAULT);
  cr_assert_eq(c.rwnd_k, 0.0, "off by default");
  memset(env_tab, 0, sizeof env_tab);
  set_env("MHTTP_RWND_CLAMP", "2");
  cr_assert_eq(mh_config_apply_env(&c, fake_getenv, err, sizeof err), 0);
  cr_assert_eq(c.rwnd_k, 2.0);
  cr_assert_eq(mh_config_set(&c, "rwnd_clamp", "off", "f.conf", err, sizeof err), 0);
  cr_assert_eq(c.rwnd_k, 0.0);
  cr_assert_eq(mh_config_set(&c, "rwnd_clamp", "1.5", "f.conf", err, sizeof err), 0);
  static const char *bad[] = {"0.5", "17", "x", "2x", "nan", "inf", "-2", "yes"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err[0] = 0;
    cr_assert_eq(mh_config_set(&c, "rwnd_clamp", bad[i], "f.conf", err, sizeof err), -1, "%s", bad[i]);
    cr_assert(strstr(err, "rwnd_clamp") && strstr(err, bad[i]), "%s", err);
    cr_assert_eq(c.rwnd_k, 1.5, "a bad value leaves the previous one");
  }
  memset(env_tab, 0, sizeof env_tab);
}

Test(config, path_conns_default_env_and_bad_values) {
  struct mh_config c;
  char err[MH_CONFIG_ERR_MAX];
  mh_config_defaults(&c);
  cr_assert_eq(c.path_conns, 2);
  memset(env_tab, 0, sizeof env_tab);
  set_env("MHTTP_PATH_CONNS", "1");
  cr_assert_eq(mh_config_apply_env(&c, fake_getenv, err, sizeof err), 0);
  cr_assert_eq(c.path_conns, 1);
  cr_assert_eq(mh_config_set(&c, "path_conns", "8", "f.conf", err, sizeof err), 0);
  cr_assert_eq(c.path_conns, 8);
  static const char *bad[] = {"0", "9", "x", "2x", "-1", ""};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err[0] = 0;
    cr_assert_eq(mh_config_set(&c, "path_conns", bad[i], "f.conf", err, sizeof err), -1, "'%s'", bad[i]);
    cr_assert(strstr(err, "path_conns"), "%s", err);
    cr_assert_eq(c.path_conns, 8, "a bad value leaves the previous one");
  }
  memset(env_tab, 0, sizeof env_tab);
}

/* A config file decides where traffic goes and where logs land: one that someone other than
 * root or the user can rewrite is refused, with one line naming the path and the fix. */
Test(config, file_others_can_rewrite_is_refused) {
  char err[MH_CONFIG_ERR_MAX];
  cr_assert_eq(mh_config_check_owner("/etc/mhttp.conf", 0100644, 0, 0, 1000, err, sizeof err), 0);
  cr_assert_eq(mh_config_check_owner("/home/u/m.conf", 0100600, 1000, 1000, 1000, err, sizeof err), 0);
  cr_assert_eq(mh_config_check_owner("/etc/mhttp.conf", 0100664, 0, 0, 1000, err, sizeof err), 0,
               "group root: root's to give");
  err[0] = 0;
  cr_assert_eq(mh_config_check_owner("/etc/mhttp.conf", 0100666, 0, 0, 1000, err, sizeof err), -1);
  cr_assert_str_eq(err, "/etc/mhttp.conf: writable by others (mode 0666): refused (chmod o-w)");
  cr_assert_eq(mh_config_check_owner("/etc/mhttp.conf", 0100602, 0, 0, 0, err, sizeof err), -1,
               "o+w alone, even for root");
  cr_assert_eq(mh_config_check_owner("/home/u/m.conf", 0100664, 1000, 100, 1000, err, sizeof err), -1);
  cr_assert_str_eq(err, "/home/u/m.conf: writable by group 100 (mode 0664): refused (chmod g-w)");
  cr_assert_eq(mh_config_check_owner("/tmp/m.conf", 0100644, 1001, 1001, 1000, err, sizeof err), -1);
  cr_assert_str_eq(err, "/tmp/m.conf: owned by uid 1001, not by root or the user (uid 1000): refused");
  cr_assert_null(strchr(err, '\n'), "one line");
}

/* mh_config_load, as the shim and `mhttp ifaces` both load: the file MHTTP_CONFIG names, then
 * the variables over it; a file others may rewrite is refused with its one line; an explicit
 * path that cannot be read is an error. */
Test(config, load_reads_the_named_file_then_the_environment) {
  char path[] = "/tmp/mh_conf_XXXXXX", err[MH_CONFIG_ERR_MAX];
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  const char text[] = "max_conns = 7\nwindow = 4m\n";
  cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
  close(fd);
  struct mh_config c;
  setenv("MHTTP_CONFIG", path, 1);
  setenv("MHTTP_WINDOW", "8m", 1);
  cr_assert_eq(mh_config_load(&c, NULL, err, sizeof err), 0, "%s", err);
  cr_assert_eq(c.max_conns, 7, "from the file");
  cr_assert_eq(c.window, 8u << 20, "the variable over the file");
  unsetenv("MHTTP_WINDOW");
  cr_assert_eq(chmod(path, 0666), 0);
  cr_assert_eq(mh_config_load(&c, NULL, err, sizeof err), -1);
  cr_assert(strstr(err, "writable by others"), "%s", err);
  unlink(path);
  cr_assert_eq(mh_config_load(&c, NULL, err, sizeof err), -1);
  cr_assert(strstr(err, "MHTTP_CONFIG: cannot read"), "%s", err);
  unsetenv("MHTTP_CONFIG");
}

/* One row per kind of key in mh_config_set's table: a good value lands in its field (checked
 * by `ok`), a bad one gives exactly this line and leaves the field as it was. */
static int ok_bool(const struct mh_config *c) { return c->probe_move == 0; }
static int ok_path(const struct mh_config *c) { return !strcmp(c->stats, "/tmp/s.jsonl"); }
static int ok_ifaces(const struct mh_config *c) { return !strcmp(c->ifaces, "wlan0,eth1"); }
static int ok_metered(const struct mh_config *c) { return !strcmp(c->metered, ""); }
static int ok_size(const struct mh_config *c) { return c->window == 8u << 20; }
static int ok_size_set(const struct mh_config *c) { return c->init_chunk == 16384 && c->init_chunk_set; }
static int ok_count(const struct mh_config *c) { return c->max_conns == 64; }
static int ok_ports(const struct mh_config *c) {
  return mh_config_port_eligible(c, 8081) && !mh_config_port_eligible(c, 80);
}
static int ok_log(const struct mh_config *c) { return c->log_level == MH_LOG_OFF; }
static int ok_rwnd(const struct mh_config *c) { return c->rwnd_k == 2.5; }
static int ok_policy(const struct mh_config *c) { return c->pol.kind == POL_ROUND_ROBIN; }
static int ok_gain(const struct mh_config *c) { return c->pol.split_gain == 0.25; }
static int ok_intent(const struct mh_config *c) { return c->intent_hint == 65536 && !strcmp(c->intent_size, "64k"); }
static int ok_store(const struct mh_config *c) { return !strcmp(c->metrics_store, "off"); }
static int ok_dns(const struct mh_config *c) { return c->ndns == 1 && !strcmp(mh_config_dns(c, "lte0"), "10.0.0.1"); }

Test(config, one_row_per_kind_of_key) {
  static const struct {
    const char *key, *good;
    int (*ok)(const struct mh_config *);
    const char *bad, *msg;
  } rows[] = {
      {"probe_move", "off", ok_bool, "perhaps", "src: probe_move: bad value 'perhaps' (expected on or off)"},
      {"stats", "/tmp/s.jsonl", ok_path, "", "src: stats: bad value '' (expected a path shorter than 256)"},
      {"ifaces", "wlan0,eth1", ok_ifaces, "wlan0,,eth1",
       "src: ifaces: bad value 'wlan0,,eth1' (expected a comma list of interface names)"},
      {"metered", "", ok_metered, "a b", "src: metered: bad value 'a b' (expected a comma list of interface names)"},
      {"window", "8M", ok_size, "1k",
       "src: window: bad value '1k' (expected a size such as 32k or 4M, 1048576..4294967296 bytes)"},
      {"init_chunk", "16KiB", ok_size_set, "16x",
       "src: init_chunk: bad value '16x' (expected a size such as 32k or 4M, 1024..67108864 bytes)"},
      {"max_conns", "64", ok_count, "65", "src: max_conns: bad value '65' (expected 1..64)"},
      {"ports", "8081", ok_ports, "8081,", "src: ports: bad value '8081,' (expected a comma list of 1-65535, or *)"},
      {"log", "off", ok_log, "loud", "src: log: bad value 'loud' (expected off, error, info or debug)"},
      {"rwnd_clamp", "2.5", ok_rwnd, "17", "src: rwnd_clamp: bad value '17' (expected off or a factor 1..16)"},
      {"policy", "round-robin", ok_policy, "fastest", NULL},
      {"split_gain", "25%", ok_gain, "1.5", NULL},
      {"intent_size", "64k", ok_intent, "lots", NULL},
      {"metrics_store", "off", ok_store, "rel/path",
       "src: metrics_store: bad value 'rel/path' (expected off or an absolute path shorter than 256)"},
      {"dns_lte0", "10.0.0.1", ok_dns, "10.0.0.1", NULL},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    struct mh_config c, before;
    char err[MH_CONFIG_ERR_MAX] = "";
    mh_config_defaults(&c);
    cr_assert_eq(mh_config_set(&c, rows[i].key, rows[i].good, "src", err, sizeof err), 0, "%s: %s", rows[i].key, err);
    cr_assert(rows[i].ok(&c), "%s = %s", rows[i].key, rows[i].good);
    if (!strncmp(rows[i].key, "dns_", 4)) { /* the ninth interface is one too many */
      static const char *const more[] = {"a0", "a1", "a2", "a3", "a4", "a5", "a6"};
      char k[16];
      for (size_t j = 0; j < 7; j++) {
        snprintf(k, sizeof k, "dns_%s", more[j]);
        cr_assert_eq(mh_config_set(&c, k, "10.0.0.2", "src", err, sizeof err), 0);
      }
      cr_assert_eq(mh_config_set(&c, "dns_a7", "10.0.0.3", "src", err, sizeof err), -1);
      cr_assert(strstr(err, "src: dns_a7: bad value '10.0.0.3'"), "%s", err);
      continue;
    }
    before = c;
    cr_assert_eq(mh_config_set(&c, rows[i].key, rows[i].bad, "src", err, sizeof err), -1, "%s = %s", rows[i].key,
                 rows[i].bad);
    if (rows[i].msg)
      cr_assert_str_eq(err, rows[i].msg);
    else
      cr_assert(!strncmp(err, "src: ", 5) && strstr(err, rows[i].key) && !strchr(err, '\n'), "%s", err);
    cr_assert(!memcmp(&c, &before, sizeof c), "%s: a bad value leaves the config as it was", rows[i].key);
    cr_assert(rows[i].ok(&c));
  }
  struct mh_config c;
  char err[MH_CONFIG_ERR_MAX];
  mh_config_defaults(&c);
  cr_assert_eq(mh_config_set(&c, "colour", "blue", "src", err, sizeof err), 1, "an unknown key is left to others");
}
