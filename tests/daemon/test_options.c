/* aria2c's command line and configuration file (cli/daemon/options.c), file names and error codes (naming.c), and the session format (session.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "naming.h"
#include "options.h"
#include "rpc.h"
#include "session.h"

static const char *get(json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

/* parses argv (NULL-terminated, after "daemon"); warnings into warn */
static int parse(const char **args, json_t *o, json_t *uris, char *warn, size_t wl, char *err) {
  char *argv[32] = {"daemon"};
  int argc = 1;
  while (*args)
    argv[argc++] = (char *)*args++;
  FILE *w = fmemopen(warn, wl, "w");
  int rc = dmn_opt_parse_args(argc, argv, o, uris, w, err, 256);
  fclose(w);
  return rc;
}

Test(options, aria2c_command_line) {
  json_t *o = dmn_opt_defaults(), *uris = json_array();
  char warn[512] = "", err[256] = "";
  const char *a[] = {"--enable-rpc",
                     "--rpc-listen-port",
                     "6801",
                     "--rpc-secret=abc",
                     "-D",
                     "--rpc-allow-origin-all=true",
                     "-j",
                     "3",
                     "-d/tmp/x",
                     "--continue",
                     "--max-connection-per-server=16",
                     "--bt-max-peers=5",
                     "--no-netrc",
                     "http://h/f",
                     "--rpc-listen-all=false",
                     NULL};
  cr_assert_eq(parse(a, o, uris, warn, sizeof warn, err), 0, "%s", err);
  cr_expect_str_eq(get(o, "rpc-listen-port"), "6801");
  cr_expect_str_eq(get(o, "rpc-secret"), "abc");
  cr_expect_str_eq(get(o, "daemon"), "true");
  cr_expect_str_eq(get(o, "rpc-allow-origin-all"), "true");
  cr_expect_str_eq(get(o, "max-concurrent-downloads"), "3");
  cr_expect_str_eq(get(o, "dir"), "/tmp/x");
  cr_expect_str_eq(get(o, "continue"), "true");
  cr_expect_str_eq(get(o, "rpc-listen-all"), "false");
  cr_expect_str_eq(get(o, "max-connection-per-server"), "16");
  cr_expect(strstr(warn, "--bt-max-peers is not supported") && strstr(warn, "--no-netrc is not supported"), "%s", warn);
  cr_expect_eq(json_array_size(uris), 1);
  json_decref(o);
  json_decref(uris);
}

Test(options, bad_values_and_help) {
  static const char *bad[][3] = {{"--rpc-listen-port=80", NULL},
                                 {"--rpc-listen-port=x", NULL},
                                 {"-j", "0", NULL},
                                 {"--continue=maybe", NULL},
                                 {"--dir", NULL}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    json_t *o = json_object(), *u = json_array();
    char warn[64], err[256] = "";
    cr_expect_eq(parse(bad[i], o, u, warn, sizeof warn, err), -1, "%s accepted", bad[i][0]);
    cr_expect(*err, "no message for %s", bad[i][0]);
    json_decref(o);
    json_decref(u);
  }
  json_t *o = json_object(), *u = json_array();
  char warn[64], err[256];
  const char *h[] = {"-h", NULL};
  cr_expect_eq(parse(h, o, u, warn, sizeof warn, err), 1);
  json_decref(o);
  json_decref(u);
}

Test(options, conf_file) {
  char path[] = "/tmp/dmn_conf_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  const char *text = "# aria2.conf as Motrix writes it\n\nrpc-listen-port=16800\n  rpc-secret = s e "
                     "\ncontinue=true\nfile-allocation=none\n";
  cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  json_t *o = json_object();
  char warn[256] = "", err[256] = "";
  FILE *w = fmemopen(warn, sizeof warn, "w");
  cr_assert_eq(dmn_opt_parse_conf(path, o, w, err, sizeof err), 0, "%s", err);
  fclose(w);
  cr_expect_str_eq(get(o, "rpc-listen-port"), "16800");
  cr_expect_str_eq(get(o, "rpc-secret"), "s e");
  cr_expect_str_eq(get(o, "continue"), "true");
  cr_expect(strstr(warn, "--file-allocation is not supported"), "%s", warn);
  char *argv[] = {"daemon", "--conf-path", path, NULL};
  cr_expect_str_eq(dmn_opt_conf_path(3, argv), path);
  unlink(path);
  cr_expect_eq(dmn_opt_parse_conf(path, o, NULL, err, sizeof err), -1, "a missing file");
  json_decref(o);
}

/* The names aria2c 1.36 gives: each row checked against Debian's /usr/bin/aria2c 1.36 (aria2c
 * --dir=D URL, and aria2.addUri + tellStatus files[].path on aria2c --enable-rpc) fetching from a
 * python3 server on 127.0.0.1 (or ::1), the host written h here; the rows marked "mhttp" are URIs
 * aria2c does not fetch. aria2's rule (util.cc: percentDecode, isUtf8, createSafePath): the
 * decoded last segment as it is when it is UTF-8 without control characters but \b \t \n \f \r,
 * a '/' written "%2F" and those five "%XX"; any other bytes percent-encoded whole but for
 * A-Z a-z 0-9 - . _ ~. "." and ".." stay: a directory, renamed "..1" and "..1." or failed with
 * errorCode 15 or 16 (names_that_are_directories). */
Test(naming, names_from_uris) {
  static const char *t[][2] = {
      {"http://h/dir/file.iso", "file.iso"},
      {"http://h/a%20b.txt?x=1#f", "a b.txt"},
      {"http://h/", "index.html"},
      {"http://h", "index.html"},
      {"http://h/d/..", ".."},
      {"http://h/d/%2E%2E", ".."},
      {"http://h/d/.", "."},
      {"http://h/%2e", "."},
      {"http://h/...", "..."},
      {"http://h/%2E%2E%FF", "..%FF"},
      {"http://h/x%2F..%2Fy", "x%2F..%2Fy"},
      {"http://h/x%2f..%2fy", "x%2F..%2Fy"},
      {"http://h/a%2F", "a%2F"},
      {"http://h/%2F", "%2F"},
      {"http://h/a%00b", "a%00b"},
      {"http://h/a%01b", "a%01b"},
      {"http://h/a%0Ab", "a%0Ab"},
      {"http://h/a%09b", "a%09b"},
      {"http://h/a%0Db", "a%0Db"},
      {"http://h/a%08b", "a%08b"},
      {"http://h/a%0Cb", "a%0Cb"},
      {"http://h/a%0B", "a%0B"},
      {"http://h/a%7Fb", "a%7Fb"},
      {"http://h/a%20b%01", "a%20b%01"}, /* not UTF-8: all of it encoded, the space too */
      {"http://h/a%09b%FF", "a%09b%FF"},
      {"http://h/%FF", "%FF"},
      {"http://h/caf%C3%A9%FF", "caf%C3%A9%FF"},
      {"http://h/caf%C3", "caf%C3"},
      {"http://h/a%25%FF", "a%25%FF"},
      {"http://h/a%zz%FF", "a%25zz%FF"},
      {"http://h/x%2F%FF", "x%2F%FF"},
      {"http://h/%C0%AF", "%C0%AF"},       /* an overlong '/' */
      {"http://h/%E0%80%AF", "%E0%80%AF"}, /* another one */
      {"http://h/%ED%A0%80", "%ED%A0%80"}, /* a surrogate */
      {"http://h/%F4%90%80%80", "%F4%90%80%80"},
      {"http://h/%F4%8F%BF%BF", "\xf4\x8f\xbf\xbf"},
      {"http://h/%C3%A9", "\xc3\xa9"},
      {"http://h/a%25b", "a%b"},
      {"http://h/a%7E%2D", "a~-"},
      {"http://h/a%22%3C%3E", "a\"<>"},
      {"http://h/a~b!$&%27()*+,=:@", "a~b!$&'()*+,=:@"},
      {"http://h/a%2", "a%2"},
      {"http://h/%", "%"},
      {"https://h:8443/p/q?r=/s", "q"},
      {"http://h/a/b.iso?x=1#f", "b.iso"},
      {"http://h/a/b.iso#f/g", "b.iso"},
      {"http://h?x=/y", "index.html"},
      {"http://h#/frag", "index.html"},
      {"http://u?p@h/x", "index.html"}, /* mhttp: the host is "u" */
      {"http://u%2Fp@h/x", "x"},
      {"http://[::1]:8080/x", "x"},
      {"http://h/d/", "index.html"},
      {"http://h/a/b/../c", "c"},
      {"http://h/a%5Cb", "a\\b"},
      {"http://h/a\\b", "a\\b"},
      {"http://h/a;p=1", "a;p=1"},
      {"http://h/a%zz", "a%zz"},
      {"http://h/a b", "a b"},
      {"HTTP://h/UP", "UP"},               /* mhttp: aria2 fetches no upper-case scheme */
      {"http://bad host/x", "index.html"}, /* mhttp: libcurl cannot read it */
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    char out[64];
    dmn_name_from_uri(t[i][0], out, sizeof out);
    cr_expect_str_eq(out, t[i][1], "%s", t[i][0]);
  }
  char out[8];
  dmn_name_from_uri("http://h/%FF%FF%FF", out, sizeof out);
  cr_expect_str_eq(out, "%FF%FF", "truncated, never inside a %%XX");
  dmn_name_from_uri("http://h/abcdefghij", out, sizeof out);
  cr_expect_str_eq(out, "abcdefg");
}

/* Safety: whatever the last segment's bytes (every one- and two-byte name), the name holds no
 * '/', no NUL and no control character, so it stays in the download directory; the only names
 * that are not a file's, "." and "..", are aria2's too and dmn_names_dir says so. */
Test(naming, names_stay_in_dir) {
  for (unsigned a = 0; a < 256; a++)
    for (unsigned b = 0; b < 257; b++) { /* 256: a one-byte name */
      char uri[32], out[64];
      if (b < 256)
        snprintf(uri, sizeof uri, "http://h/d/%%%02X%%%02X", a, b);
      else
        snprintf(uri, sizeof uri, "http://h/d/%%%02X", a);
      dmn_name_from_uri(uri, out, sizeof out);
      cr_assert(*out, "%s: empty", uri);
      for (const char *c = out; *c; c++)
        cr_assert(*c != '/' && (unsigned char)*c >= 0x20 && *c != 0x7f, "%s -> %s", uri, out);
      int dots = a == '.' && (b == 256 || b == '.');
      cr_assert_eq(dmn_names_dir(out), dots, "%s -> %s", uri, out);
      cr_assert(dots || (strcmp(out, ".") && strcmp(out, "..")), "%s -> %s", uri, out);
    }
}

/* What aria2c 1.36 does with a name "." or "..", checked on aria2c --enable-rpc: with dir existing,
 * renamed "..1" and "..1." (aria2.tellStatus files[].path D/..1., complete); dir not existing
 * (aria2 makes it): error 16 "Download aborted.", files[].path D/..; allow-overwrite=true: 16;
 * continue=true (a download of 100000 bytes, over the directory's 4096): 15. */
Test(naming, names_that_are_directories) {
  cr_expect(dmn_names_dir("/d/.."));
  cr_expect(dmn_names_dir("/d/."));
  cr_expect(dmn_names_dir(".."));
  cr_expect(dmn_names_dir("."));
  cr_expect(!dmn_names_dir("/d/..."));
  cr_expect(!dmn_names_dir("/d/..1."));
  cr_expect(!dmn_names_dir("/d/a.."));
  cr_expect(!dmn_names_dir("/d/x%2F.."));
  cr_expect(!dmn_names_dir("/d/"));
  cr_expect_eq(dmn_dir_name_error(1, 0, 0), 0);
  cr_expect_eq(dmn_dir_name_error(0, 0, 0), 16);
  cr_expect_eq(dmn_dir_name_error(0, 1, 0), 16);
  cr_expect_eq(dmn_dir_name_error(0, 0, 1), 16);
  cr_expect_eq(dmn_dir_name_error(1, 0, 1), 16);
  cr_expect_eq(dmn_dir_name_error(1, 1, 0), 15);
  cr_expect_eq(dmn_dir_name_error(1, 1, 1), 15);
  char out[64];
  cr_expect_eq(dmn_renamed("/d/..", 1, out, sizeof out), 0);
  cr_expect_str_eq(out, "/d/..1.");
  cr_expect(!dmn_names_dir(out));
  cr_expect_eq(dmn_renamed("/d/.", 1, out, sizeof out), 0);
  cr_expect_str_eq(out, "/d/..1");
  cr_expect(!dmn_names_dir(out));
}

Test(naming, renamed) {
  char out[64];
  cr_expect_eq(dmn_renamed("/d/file.iso", 1, out, sizeof out), 0);
  cr_expect_str_eq(out, "/d/file.1.iso");
  dmn_renamed("/d.x/file", 2, out, sizeof out);
  cr_expect_str_eq(out, "/d.x/file.2");
  dmn_renamed("/d/.hidden", 3, out, sizeof out);
  cr_expect_str_eq(out, "/d/.hidden.3");
  cr_expect_eq(dmn_renamed("/d/file", 1, out, 8), -1);
}

Test(naming, aria2_error_codes) {
  cr_expect_eq(dmn_aria2_error(MHTTP_E_HTTP, 404), 3);
  cr_expect_eq(dmn_aria2_error(MHTTP_E_HTTP, 403), 24);
  cr_expect_eq(dmn_aria2_error(MHTTP_E_HTTP, 500), 22);
  cr_expect_eq(dmn_aria2_error(MHTTP_E_RESOLVE, 0), 19);
  cr_expect_eq(dmn_aria2_error(MHTTP_E_CONNECT, 0), 6);
  cr_expect_eq(dmn_aria2_error(MHTTP_E_TIMEOUT, 0), 2);
  cr_expect_eq(dmn_aria2_error(MHTTP_E_CHECKSUM, 0), 32);
  cr_expect_eq(dmn_aria2_error(MHTTP_E_TLS, 0), 1);
}

static int f_start(void *c, struct dmn_dl *d, char *e, size_t n) {
  (void)c, (void)d, (void)e, (void)n;
  return 0;
}
static void f_stop(void *c, struct dmn_dl *d) { (void)c, (void)d; }

Test(session, format_and_parse) {
  struct dmn_engine_ops ops = {f_start, f_stop, NULL, NULL, NULL, NULL};
  struct dmn_q q;
  dmn_q_init(&q, &ops, NULL, NULL);
  q.max_active = 1;
  dmn_q_add(&q,
            dmn_dl_new(0xabc, json_pack("[s, s]", "http://h/a", "http://m/a"),
                       json_pack("{s:s, s:[s, s]}", "out", "a.bin", "header", "A: 1", "B: 2")),
            -1);
  struct dmn_dl *p = dmn_dl_new(0xdef, json_pack("[s]", "http://h/b"), json_pack("{s:s}", "dir", "/d"));
  dmn_q_add(&q, p, -1);
  dmn_q_pause(&q, p);
  char *text = dmn_session_format(&q);
  cr_expect_str_eq(text, "http://h/a\thttp://m/a\n gid=0000000000000abc\n out=a.bin\n header=A: 1\n header=B: 2\n"
                         "http://h/b\n gid=0000000000000def\n dir=/d\n pause=true\n");
  json_t *e = dmn_session_parse(text);
  cr_assert_eq(json_array_size(e), 2);
  json_t *o0 = json_object_get(json_array_get(e, 0), "opts");
  cr_expect_eq(json_array_size(json_object_get(json_array_get(e, 0), "uris")), 2);
  cr_expect_str_eq(get(o0, "gid"), "0000000000000abc");
  cr_expect_eq(json_array_size(json_object_get(o0, "header")), 2);
  cr_expect_str_eq(get(json_object_get(json_array_get(e, 1), "opts"), "pause"), "true");
  json_decref(e);
  e = dmn_session_parse(" orphan=1\n# c\r\n\nhttp://x/y\r\n out=z\r\n");
  cr_assert_eq(json_array_size(e), 1);
  cr_expect_str_eq(get(json_object_get(json_array_get(e, 0), "opts"), "out"), "z");
  json_decref(e);
  free(text);
  dmn_q_free(&q);
}

/* The daemon rewrites the session file whenever its text changes (daemon.c, save_if_changed):
 * each transition that decides what a restart queues must change it, progress must not. */
Test(session, text_follows_transitions_not_progress) {
  struct dmn_engine_ops ops = {f_start, f_stop, NULL, NULL, NULL, NULL};
  struct dmn_q q;
  dmn_q_init(&q, &ops, NULL, NULL);
  q.max_active = 1;
  struct dmn_dl *a = dmn_dl_new(0xa, json_pack("[s]", "http://h/a"), json_object());
  struct dmn_dl *b = dmn_dl_new(0xb, json_pack("[s]", "http://h/b"), json_object());
  struct dmn_dl *c = dmn_dl_new(0xc, json_pack("[s]", "http://h/c"), json_object());
  dmn_q_add(&q, a, -1);
  char *t0 = dmn_session_format(&q);
  cr_expect_str_eq(t0, "http://h/a\n gid=000000000000000a\n");
  a->done = 123456, a->total = 1 << 20, a->rate = 1e6, a->connections = 2;
  char *t1 = dmn_session_format(&q);
  cr_expect_str_eq(t1, t0, "progress changed the text");
  dmn_q_add(&q, b, -1);
  dmn_q_add(&q, c, -1);
  char *t2 = dmn_session_format(&q);
  cr_expect_str_eq(t2, "http://h/a\n gid=000000000000000a\nhttp://h/b\n gid=000000000000000b\n"
                       "http://h/c\n gid=000000000000000c\n");
  dmn_q_ended(&q, a, 1, 0, NULL); /* a complete: gone; b starts */
  dmn_q_remove(&q, c);            /* a waiting one removed: gone */
  char *t3 = dmn_session_format(&q);
  cr_expect_str_eq(t3, "http://h/b\n gid=000000000000000b\n");
  dmn_q_ended(&q, b, 0, 3, "404"); /* failed: kept for a retry, as aria2 keeps it */
  char *t4 = dmn_session_format(&q);
  cr_expect_str_eq(t4, t3);
  dmn_q_purge(&q);
  char *t5 = dmn_session_format(&q);
  cr_expect_str_eq(t5, "");
  free(t0), free(t1), free(t2), free(t3), free(t4), free(t5);
  dmn_q_free(&q);
}
