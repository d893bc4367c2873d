/* cli/exitcode.c: every mhttp_code has curl's exit code, and the messages read as curl's. */
#include <criterion/criterion.h>

#include "exitcode.h"

Test(exitcode, every_code) {
  static const int want[] = {
      [MHTTP_OK] = 0,          [MHTTP_E_INVAL] = 2,      [MHTTP_E_OPTION] = 2,    [MHTTP_E_NOMEM] = 27,
      [MHTTP_E_URL] = 3,       [MHTTP_E_RESOLVE] = 6,    [MHTTP_E_CONNECT] = 7,   [MHTTP_E_PROTOCOL] = 8,
      [MHTTP_E_PARTIAL] = 18,  [MHTTP_E_HTTP] = 22,      [MHTTP_E_WRITE] = 23,    [MHTTP_E_TIMEOUT] = 28,
      [MHTTP_E_TLS] = 35,      [MHTTP_E_CERT] = 60,      [MHTTP_E_CHECKSUM] = 32, [MHTTP_E_RESUME] = 36,
      [MHTTP_E_CANCELED] = 42, [MHTTP_E_REDIRECTS] = 47, [MHTTP_E_SYSTEM] = 2,    [MHTTP_E_BUSY] = 2,
  };
  for (int c = 0; c <= MHTTP_E_BUSY; c++)
    cr_expect_eq(cli_exit_code((mhttp_code)c), want[c], "code %d", c);
  cr_expect_eq(cli_exit_code((mhttp_code)999), 2);
}

static void expect_msg(mhttp_code c, const char *host, int status, const char *detail, int code, const char *want) {
  char buf[256];
  struct cli_failure f = {
      .code = c, .host = host, .port = 80, .http_status = status, .detail = detail, .total = UINT64_MAX};
  cr_expect_eq(cli_exit_message(&f, buf, sizeof buf), code);
  cr_expect_str_eq(buf, want);
}

Test(exitcode, messages) {
  expect_msg(MHTTP_E_RESOLVE, "example.org", 0, "", 6, "mhttp: (6) Could not resolve host: example.org");
  expect_msg(MHTTP_E_CONNECT, "a.test", 0, "could not connect to a.test (10.0.0.1): Connection refused", 7,
             "mhttp: (7) Failed to connect to a.test port 80 after 0 ms: Connection refused");
  expect_msg(MHTTP_E_CONNECT, "a.test", 0, NULL, 7,
             "mhttp: (7) Failed to connect to a.test port 80 after 0 ms: Couldn't connect to server");
  expect_msg(MHTTP_E_HTTP, "a.test", 404, "HTTP 404", 22, "mhttp: (22) The requested URL returned error: 404");
  expect_msg(MHTTP_E_PARTIAL, "a.test", 200, "", 18, "mhttp: (18) Transferred a partial file");
  expect_msg(MHTTP_E_WRITE, NULL, 0, "No space left on device", 23,
             "mhttp: (23) Failure writing output to destination: No space left on device");
  expect_msg(MHTTP_E_TIMEOUT, "a.test", 0, NULL, 28,
             "mhttp: (28) Operation timed out after 0 milliseconds with 0 bytes received");
  /* curl's TLS text already begins with curl's words: not repeated */
  expect_msg(MHTTP_E_CERT, "a.test", 0, "SSL certificate problem: unable to get local issuer certificate", 60,
             "mhttp: (60) SSL certificate problem: unable to get local issuer certificate");
  expect_msg(MHTTP_E_TLS, "a.test", 0, "OpenSSL: wrong version number", 35,
             "mhttp: (35) SSL connect error: OpenSSL: wrong version number");
  expect_msg(MHTTP_E_CHECKSUM, "a.test", 200, "", 32, "mhttp: (32) Checksum validation failed");
  expect_msg(MHTTP_E_CANCELED, "a.test", 200, "", 42, "mhttp: (42) Operation was aborted");
  expect_msg(MHTTP_E_REDIRECTS, "a.test", 301, "after 10", 47, "mhttp: (47) Maximum redirects followed: after 10");
  expect_msg(MHTTP_E_PROTOCOL, "a.test", 0, "", 8, "mhttp: (8) Weird server reply");
  expect_msg(MHTTP_E_URL, "", 0, "ftp://x", 3, "mhttp: (3) URL using bad/illegal format or missing URL: ftp://x");
  /* the library's detail repeating curl's words (in any case) is said once */
  expect_msg(MHTTP_E_RESOLVE, "", 0, "could not resolve host: x.test (unknown node)", 6,
             "mhttp: (6) Could not resolve host: x.test (unknown node)");
}

/* curl's words with the figures curl gives: the port and time of a refused connection, the
 * bytes received at a timeout (of the known length or not), a connection that timed out. */
Test(exitcode, curls_figures) {
  char buf[256];
  struct cli_failure f = {.code = MHTTP_E_CONNECT,
                          .host = "127.0.0.1",
                          .port = 9,
                          .elapsed = 0.0114,
                          .detail = "could not connect to 127.0.0.1 (127.0.0.1): Connection refused"};
  cr_expect_eq(cli_exit_message(&f, buf, sizeof buf), 7);
  cr_expect_str_eq(buf, "mhttp: (7) Failed to connect to 127.0.0.1 port 9 after 11 ms: Connection refused");
  f = (struct cli_failure){.code = MHTTP_E_TIMEOUT,
                           .elapsed = 1.0012,
                           .received = 193536,
                           .total = 3000000,
                           .detail = "operation timed out after 1001 ms"};
  cr_expect_eq(cli_exit_message(&f, buf, sizeof buf), 28);
  cr_expect_str_eq(buf,
                   "mhttp: (28) Operation timed out after 1001 milliseconds with 193536 out of 3000000 bytes received");
  f.total = UINT64_MAX;
  cli_exit_message(&f, buf, sizeof buf);
  cr_expect_str_eq(buf, "mhttp: (28) Operation timed out after 1001 milliseconds with 193536 bytes received");
  f.detail = "connection to a.test (10.0.0.1) timed out";
  cli_exit_message(&f, buf, sizeof buf);
  cr_expect_str_eq(buf, "mhttp: (28) Connection timed out after 1001 milliseconds");
}

Test(exitcode, url_port) {
  cr_expect_eq(cli_url_port("http://a.test/x"), 80);
  cr_expect_eq(cli_url_port("HTTPS://a.test/x"), 443);
  cr_expect_eq(cli_url_port("http://u:p@a.test:8080/x"), 8080);
  cr_expect_eq(cli_url_port("https://[::1]:8443/"), 8443);
  cr_expect_eq(cli_url_port("https://[::1]/"), 443);
  cr_expect_eq(cli_url_port("not a url"), 0);
}

Test(exitcode, url_host) {
  char h[64];
  struct {
    const char *url, *host;
  } t[] = {
      {"http://a.test/x", "a.test"},
      {"https://user:pw@b.test:8443/", "b.test"},
      {"http://[fd00::1]:80/f", "fd00::1"},
      {"http://c.test", "c.test"},
      {"http://d.test?q", "d.test"},
      {"not a url", ""},
      {"http://[broken/", ""},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    cli_url_host(t[i].url, h, sizeof h);
    cr_expect_str_eq(h, t[i].host, "%s", t[i].url);
  }
}
