/* Configuration parsing: defaults, file lines, environment precedence, and one clear line per bad value. */
#include <criterion/criterion.h>
#include <stdio.h>

#include <string.h>

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
                     "policy = eaf\n";  /* a later module's key: ignored here */
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
