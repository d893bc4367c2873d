/* cli/opts.c: every option of the mhttp command, the API names it passes them under, URLs paired with outputs and mirrors as curl pairs them, curl's habits (-L, -o -, the default scheme, -s/-S), bad usage in curl's words, -O's file name. */
#include <criterion/criterion.h>
#include <string.h>

#include "opts.h"

static struct cli_opts o;
static char err[CLI_ERR_MAX];

#define PARSE(...)                                                                  \
  ({                                                                                \
    char *argv_[] = {"mhttp", __VA_ARGS__, NULL};                                   \
    cli_opts_parse(sizeof argv_ / sizeof argv_[0] - 1, argv_, &o, err, sizeof err); \
  })

static void expect_api(unsigned i, enum cli_level level, const char *name, const char *value) {
  cr_assert_lt(i, o.napi);
  cr_expect_eq(o.api[i].level, level, "%s level", name);
  cr_expect_str_eq(o.api[i].name, name);
  cr_expect_str_eq(o.api[i].value, value);
}

Test(opts, url_to_stdout) {
  cr_assert_eq(PARSE("http://a.test/f"), 0);
  cr_expect_eq(o.mode, CLI_GET);
  cr_expect_eq(o.nurls, 1);
  cr_expect_str_eq(o.urls[0].url, "http://a.test/f");
  cr_expect_eq(o.urls[0].nmirrors, 0);
  cr_expect_null(o.urls[0].output);
  cr_expect_not(o.urls[0].to_stdout);
  cr_expect_eq(o.napi, 0);
  cr_expect_eq(o.progress, CLI_PROGRESS_BAR);
}

/* Several URLs are several downloads (curl): the n-th -o/-O goes to the n-th URL wherever it
 * stands, the rest to stdout; outputs beyond the URLs are counted (curl warns and ignores them). */
Test(opts, several_urls_paired_with_outputs_as_curl) {
  cr_assert_eq(PARSE("-O", "http://a.test/1.bin", "-O", "http://a.test/2.bin"), 0, "%s", err);
  cr_expect_eq(o.nurls, 2);
  cr_expect_str_eq(o.urls[0].output, "1.bin");
  cr_expect_str_eq(o.urls[1].output, "2.bin");
  cr_assert_eq(PARSE("-O", "http://a.test/1.bin", "http://a.test/2.bin"), 0);
  cr_expect_str_eq(o.urls[0].output, "1.bin");
  cr_expect_null(o.urls[1].output); /* stdout, as curl */
  cr_expect_eq(o.urls[1].nmirrors, 0);
  cr_assert_eq(PARSE("http://a.test/1", "-o", "x", "http://a.test/2", "-O"), 0);
  cr_expect_str_eq(o.urls[0].output, "x");
  cr_expect_str_eq(o.urls[1].output, "2");
  cr_expect_eq(o.extra_outputs, 0);
  /* -o x -o y with one URL: the first wins, y is left over */
  cr_assert_eq(PARSE("-o", "x", "-o", "y", "http://a.test/f"), 0);
  cr_expect_str_eq(o.urls[0].output, "x");
  cr_expect_eq(o.extra_outputs, 1);
  cr_assert_eq(PARSE("-O", "-o", "x", "http://a/f.bin"), 0);
  cr_expect_str_eq(o.urls[0].output, "f.bin");
  cr_expect_eq(o.extra_outputs, 1);
}

/* --mirror belongs to the URL before it (before any URL: to the first). */
Test(opts, mirrors_belong_to_the_url_before) {
  cr_assert_eq(PARSE("--mirror", "http://m0.test/f", "http://a.test/f", "--mirror=http://m1.test/f", "http://b.test/g",
                     "--mirror", "http://m2.test/g", "--mirror", "m3.test/g"),
               0, "%s", err);
  cr_expect_eq(o.nurls, 2);
  cr_expect_eq(o.urls[0].nmirrors, 2);
  cr_expect_str_eq(o.urls[0].mirrors[0], "http://m0.test/f");
  cr_expect_str_eq(o.urls[0].mirrors[1], "http://m1.test/f");
  cr_expect_eq(o.urls[1].nmirrors, 2);
  cr_expect_str_eq(o.urls[1].mirrors[0], "http://m2.test/g");
  cr_expect_str_eq(o.urls[1].mirrors[1], "http://m3.test/g");
}

/* curl's daily habits: -L and -f are always on, "-o -" is stdout asked for, a URL without a
 * scheme is http://, -s is silent (no errors unless -S). */
Test(opts, curl_habits) {
  cr_assert_eq(PARSE("-fsSL", "-o", "-", "a.test:8080/f"), 0, "%s", err);
  cr_expect_str_eq(o.urls[0].url, "http://a.test:8080/f");
  cr_expect_null(o.urls[0].output);
  cr_expect(o.urls[0].to_stdout);
  cr_expect(o.quiet);
  cr_expect_not(o.silent);
  cr_assert_eq(PARSE("--location", "--fail", "--silent", "https://a.test/f"), 0);
  cr_expect_str_eq(o.urls[0].url, "https://a.test/f");
  cr_expect(o.silent);
  cr_expect(o.quiet);
  cr_assert_eq(PARSE("-s", "--show-error", "HTTP://A.test/"), 0);
  cr_expect_str_eq(o.urls[0].url, "HTTP://A.test/");
  cr_expect_not(o.silent);
}

/* The URL each argument becomes: http:// put before one libcurl reads only without a scheme
 * (curl 7.88 fetches these over http, checked against a loopback server), any other as typed. */
Test(opts, default_scheme) {
  static char *const t[][2] = {
      {"a.test/f", "http://a.test/f"},
      {"a.test:8080/f", "http://a.test:8080/f"},
      {"a.test", "http://a.test"},
      {"[::1]:8080/x", "http://[::1]:8080/x"},
      {"user:pw@a.test/x", "http://user:pw@a.test/x"},
      {"a.test/x://y", "http://a.test/x://y"},
      {"http:8080/x", "http://http:8080/x"},   /* the host "http", port 8080 */
      {"ftp.a.test/x", "http://ftp.a.test/x"}, /* curl would guess ftp://: mhttp fetches http */
      {"a.test/x y", "http://a.test/x y"},     /* the library refuses the space */
      {"http://a.test/f", "http://a.test/f"},
      {"https://a.test/f", "https://a.test/f"},
      {"HTTP://A.test/", "HTTP://A.test/"},
      {"ftp://a.test/f", "ftp://a.test/f"}, /* refused by the library, as typed */
      {"svn+ssh://x", "svn+ssh://x"},
      {"http:/a.test/x", "http:/a.test/x"}, /* a scheme, with one slash */
      {"://x", "://x"},                     /* libcurl cannot read it: refused as typed */
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    cr_assert_eq(PARSE(t[i][0]), 0, "%s: %s", t[i][0], err);
    cr_expect_str_eq(o.urls[0].url, t[i][1], "%s", t[i][0]);
  }
}

/* Every API option, short and long, with = and with a separate value. */
Test(opts, every_api_option_by_its_api_name) {
  cr_assert_eq(PARSE("-c", "-i", "wifi0", "--interface=lte0", "--dns-server", "wifi0=10.0.0.1", "--policy=eaf",
                     "--checksum=sha-256=ab", "--cacert", "/ca.pem", "-k", "--connect-timeout", "3", "-m", "60",
                     "--max-redirs=5", "-A", "ua/1", "--user-agent=ua/2", "-H", "X-A: 1", "--header=X-B: 2",
                     "--insecure", "--continue", "--max-time=7", "-o", "f", "http://a.test/f"),
               0, "%s", err);
  unsigned i = 0;
  cr_expect(o.resume); /* -c goes to the URLs written to files: the command passes it */
  cr_expect_str_eq(o.cacert, "/ca.pem");
  expect_api(i++, CLI_SESSION, "interface", "wifi0");
  expect_api(i++, CLI_SESSION, "interface", "lte0");
  expect_api(i++, CLI_SESSION, "dns-server", "wifi0=10.0.0.1");
  expect_api(i++, CLI_SESSION, "policy", "eaf");
  expect_api(i++, CLI_XFER, "checksum", "sha-256=ab");
  expect_api(i++, CLI_XFER, "cacert", "/ca.pem");
  expect_api(i++, CLI_XFER, "insecure", "1");
  expect_api(i++, CLI_XFER, "connect-timeout", "3");
  expect_api(i++, CLI_XFER, "max-time", "60");
  expect_api(i++, CLI_XFER, "max-redirs", "5");
  expect_api(i++, CLI_XFER, "user-agent", "ua/1");
  expect_api(i++, CLI_XFER, "user-agent", "ua/2");
  expect_api(i++, CLI_XFER, "header", "X-A: 1");
  expect_api(i++, CLI_XFER, "header", "X-B: 2");
  expect_api(i++, CLI_XFER, "insecure", "1");
  expect_api(i++, CLI_XFER, "max-time", "7");
  cr_expect_eq(o.napi, i);
  cr_expect_str_eq(o.urls[0].output, "f");
}

Test(opts, command_settings) {
  cr_assert_eq(PARSE("-q", "--progress=none", "--progress-json", "--stats", "/tmp/s.json", "http://a/f"), 0);
  cr_expect(o.quiet);
  cr_expect_eq(o.progress, CLI_PROGRESS_NONE);
  cr_expect(o.progress_json);
  cr_expect_str_eq(o.stats, "/tmp/s.json");
  cr_expect_eq(o.napi, 0);
  cr_assert_eq(PARSE("--progress", "bar", "http://a/f"), 0);
  cr_expect_eq(o.progress, CLI_PROGRESS_BAR);
}

Test(opts, output_forms) {
  cr_assert_eq(PARSE("-o", "out.bin", "http://a/f"), 0);
  cr_expect_str_eq(o.urls[0].output, "out.bin");
  cr_assert_eq(PARSE("-oout2.bin", "http://a/f"), 0);
  cr_expect_str_eq(o.urls[0].output, "out2.bin");
  cr_assert_eq(PARSE("--output=o3", "http://a/f"), 0);
  cr_expect_str_eq(o.urls[0].output, "o3");
  cr_assert_eq(PARSE("-O", "http://a.test/dir/file.iso?x=1#frag"), 0);
  cr_expect_str_eq(o.urls[0].output, "file.iso");
  cr_expect_eq(o.napi, 0);
}

Test(opts, clustered_short_flags) {
  cr_assert_eq(PARSE("-kqcOi", "wlan0", "http://a/f.bin"), 0, "%s", err);
  cr_expect(o.quiet);
  cr_expect(o.resume);
  expect_api(0, CLI_XFER, "insecure", "1");
  expect_api(1, CLI_SESSION, "interface", "wlan0");
  cr_expect_str_eq(o.urls[0].output, "f.bin");
}

Test(opts, double_dash_ends_options) {
  cr_assert_eq(PARSE("--", "-weird-url", "run"), 0);
  cr_expect_str_eq(o.urls[0].url, "http://-weird-url");
  cr_expect_str_eq(o.urls[1].url, "http://run");
}

Test(opts, help_and_version) {
  cr_assert_eq(PARSE("--help"), 0);
  cr_expect_eq(o.mode, CLI_HELP);
  cr_assert_eq(PARSE("-h"), 0);
  cr_expect_eq(o.mode, CLI_HELP);
  cr_assert_eq(PARSE("-V"), 0);
  cr_expect_eq(o.mode, CLI_VERSION);
  cr_assert_eq(PARSE("--version"), 0);
  cr_expect_eq(o.mode, CLI_VERSION);
  cr_expect(strstr(cli_opts_help(), "--progress-json"));
}

Test(opts, bad_usage_in_curls_words) {
  cr_expect_eq(PARSE("--frobnicate", "http://a/f"), 2);
  cr_expect_str_eq(err, "option --frobnicate: is unknown");
  cr_expect_eq(PARSE("--frob=1", "http://a/f"), 2);
  cr_expect_str_eq(err, "option --frob=1: is unknown");
  cr_expect_eq(PARSE("-kZ", "http://a/f"), 2);
  cr_expect_str_eq(err, "option -Z: is unknown");
  cr_expect_eq(PARSE("http://a/f", "-o"), 2);
  cr_expect_str_eq(err, "option -o: requires parameter");
  cr_expect_eq(PARSE("http://a/f", "--max-time"), 2);
  cr_expect_str_eq(err, "option --max-time: requires parameter");
  cr_expect_eq(PARSE("--insecure=1", "http://a/f"), 2);
  cr_expect_str_eq(err, "option --insecure: takes no value");
  cr_expect_eq(PARSE("--progress=fancy", "http://a/f"), 2);
  cr_expect_str_eq(err, "option --progress: expected bar or none, not 'fancy'");
  cr_expect_eq(PARSE("-q"), 2);
  cr_expect_str_eq(err, "no URL specified!");
  cr_expect_eq(PARSE("-c", "http://a/f"), 2);
  cr_expect_str_eq(err, "option --continue: needs -o FILE or -O");
  /* -O with nothing to name the file after: curl's 23 */
  cr_expect_eq(PARSE("-O", "http://a.test/"), 23);
  cr_expect_str_eq(err, "Remote file name has no length!");
  cr_expect_eq(PARSE("http://a/f", "-o", "x", "run"), 0); /* a URL came first: not a sub-command */
  cr_expect_str_eq(o.urls[1].url, "http://run");
  cr_expect_eq(PARSE("-c", "http://a/f", "-o", "-"), 2);
  cr_expect_str_eq(err, "option --continue: needs -o FILE or -O");
}

Test(opts, subcommands) {
  char *run[] = {"mhttp", "run", "--", "wget", "-q", "http://a/f", NULL}; /* lives on: run_argv points into it */
  cr_assert_eq(cli_opts_parse(6, run, &o, err, sizeof err), 0);
  cr_expect_eq(o.mode, CLI_RUN);
  cr_expect_str_eq(o.run_argv[0], "wget");
  cr_expect_str_eq(o.run_argv[1], "-q");
  cr_expect_null(o.run_argv[3]);
  char *run2[] = {"mhttp", "run", "curl", "-o", "x", NULL};
  cr_assert_eq(cli_opts_parse(5, run2, &o, err, sizeof err), 0);
  cr_expect_str_eq(o.run_argv[0], "curl");
  cr_expect_eq(PARSE("run", "--"), 2);
  cr_expect_eq(PARSE("run"), 2);
  cr_assert_eq(PARSE("ifaces"), 0);
  cr_expect_eq(o.mode, CLI_IFACES);
  cr_expect_eq(PARSE("ifaces", "extra"), 2);
  /* -i before a sub-command is for it (MHTTP_IFACES); nothing else is */
  char buf[64];
  cr_assert_eq(PARSE("-i", "wifi0", "--interface=lte0", "ifaces"), 0, "%s", err);
  cr_expect_eq(o.mode, CLI_IFACES);
  cr_assert_eq(cli_opts_ifaces(&o, buf, sizeof buf), 0);
  cr_expect_str_eq(buf, "wifi0,lte0");
  cr_expect_eq(cli_opts_ifaces(&o, buf, 5), -1);
  char *run3[] = {"mhttp", "-i", "wifi0", "run", "wget", "-O", "x", NULL};
  cr_assert_eq(cli_opts_parse(7, run3, &o, err, sizeof err), 0, "%s", err);
  cr_expect_eq(o.mode, CLI_RUN);
  cr_expect_str_eq(o.run_argv[0], "wget");
  cr_expect_eq(PARSE("-k", "ifaces"), 2);
  cr_expect_str_eq(err, "option --insecure: not for the 'ifaces' sub-command (only -i is)");
  cr_assert_eq(PARSE("http://a/f"), 0);
  cr_expect_eq(cli_opts_ifaces(&o, buf, sizeof buf), -1);
}

/* -O's names as curl 7.88's -O gives them (each checked with curl -O against a loopback server):
 * the path's last segment as written, after a backslash too; none for an empty one. */
Test(opts, remote_name_derivation) {
  char b[16];
  struct {
    const char *url, *name;
  } ok[] = {
      {"http://a.test/f.bin", "f.bin"},
      {"https://a.test/d/e/f.tar.gz", "f.tar.gz"},
      {"http://a.test/x?y=/z", "x"},
      {"http://a.test/x#/frag", "x"},
      {"http://a.test:8080/%20a", "%20a"},
      {"http://u@a.test/..x", "..x"},
      {"http://h/a/b.iso?x=1#f", "b.iso"},
      {"http://h/a/b.iso#f/g", "b.iso"},
      {"http://u%2Fp@h/x", "x"},
      {"http://[::1]:8080/x", "x"},
      {"HTTP://h/UP", "UP"},
      {"http://h/%20a%2Fb", "%20a%2Fb"},
      {"http://h/d/%2E%2E", "%2E%2E"},
      {"http://h/a/b/../c", "c"},
      {"http://h/a\\b", "b"},
      {"http://h/\xc3\xa9", "\xc3\xa9"},
      {"http://h/a;p=1", "a;p=1"},
      {"a.test/f", "f"},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    cr_assert_eq(cli_opts_remote_name(ok[i].url, b, sizeof b), 0, "%s", ok[i].url);
    cr_expect_str_eq(b, ok[i].name, "%s", ok[i].url);
  }
  const char *none[] = {"http://a.test",   "http://a.test/",     "http://a.test/d/",
                        "http://a.test/.", "http://a.test/d/..", "http://a.test/?x=/y",
                        "http://h?x=/y",   "http://h#/frag",     "http://u?p@h/x",
                        "http://h/x/.",    "http://h/a\\..",     "http://a.test/a-name-too-long-for-b"};
  for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
    cr_expect_eq(cli_opts_remote_name(none[i], b, sizeof b), -1, "%s", none[i]);
  const char *unreadable[] = {"http://h/a b", "://x", "http://bad host/"};
  for (size_t i = 0; i < sizeof unreadable / sizeof unreadable[0]; i++)
    cr_expect_eq(cli_opts_remote_name(unreadable[i], b, sizeof b), -2, "%s", unreadable[i]);
  /* curl -O: "Failed to extract a sensible file name", then its 3 */
  cr_expect_eq(PARSE("-O", "http://a.test/a b"), 3);
  cr_expect_str_eq(err, "URL using bad/illegal format or missing URL: http://a.test/a b");
}
