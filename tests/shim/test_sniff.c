/* First-write sniffing: which first bytes start a takeover and which leave the socket alone. */
#include <criterion/criterion.h>

#include <string.h>

#include "shim_sniff.h"

static enum shim_sniff sniff(const char *s) { return shim_sniff_http(s, strlen(s)); }

Test(sniff, http_requests) {
  cr_assert_eq(sniff("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), SHIM_SNIFF_HTTP);
  cr_assert_eq(sniff("HEAD /x HTTP/1.0\r\n"), SHIM_SNIFF_HTTP);
  cr_assert_eq(sniff("POST /form HTTP/1.1\n"), SHIM_SNIFF_HTTP);
  cr_assert_eq(sniff("OPTIONS * HTTP/1.1\r\n"), SHIM_SNIFF_HTTP);
  cr_assert_eq(sniff("GET http://proxy.example/ HTTP/1.1\r\n"), SHIM_SNIFF_HTTP);
  cr_assert_eq(sniff("GET /a/very/long/path/without/line/end/yet"), SHIM_SNIFF_HTTP);
}

Test(sniff, byte_by_byte_prefixes) {
  cr_assert_eq(sniff("G"), SHIM_SNIFF_HTTP);
  cr_assert_eq(sniff("GE"), SHIM_SNIFF_HTTP);
  cr_assert_eq(sniff("GET "), SHIM_SNIFF_HTTP);
  cr_assert_eq(sniff("DELE"), SHIM_SNIFF_HTTP);
  cr_assert_eq(shim_sniff_http("", 0), SHIM_SNIFF_MORE);
}

Test(sniff, not_http) {
  cr_assert_eq(sniff("\x16\x03\x01\x02\x00\x01"), SHIM_SNIFF_NO); /* TLS ClientHello */
  cr_assert_eq(sniff("SSH-2.0-OpenSSH\r\n"), SHIM_SNIFF_NO);
  cr_assert_eq(sniff("CONNECT host:443 HTTP/1.1\r\n"), SHIM_SNIFF_NO); /* tunnels are left alone */
  cr_assert_eq(sniff("PRI * HTTP/2.0\r\n"), SHIM_SNIFF_NO);
  cr_assert_eq(sniff("GET / HTTP/2.0\r\n"), SHIM_SNIFF_NO);
  cr_assert_eq(sniff("GET / FOO\r\n"), SHIM_SNIFF_NO);
  cr_assert_eq(sniff("GET  /\r\n"), SHIM_SNIFF_NO);
  cr_assert_eq(sniff("get / HTTP/1.1\r\n"), SHIM_SNIFF_NO);
  cr_assert_eq(sniff("GETX"), SHIM_SNIFF_NO);
  cr_assert_eq(sniff("hello"), SHIM_SNIFF_NO);
}
