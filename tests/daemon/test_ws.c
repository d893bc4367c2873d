/* WebSocket framing and the handshake's SHA-1/base64 (cli/daemon/ws.c, sha1.c): RFC 6455's and FIPS 180's own examples, and every frame a server must refuse. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "sha1.h"
#include "ws.h"

static void hex(const uint8_t *d, size_t n, char *out) {
  for (size_t i = 0; i < n; i++)
    sprintf(out + 2 * i, "%02x", d[i]);
}

Test(sha1, fips_vectors) {
  static const struct {
    const char *in, *want;
  } t[] = {
      {"", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
      {"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    uint8_t d[20];
    char h[41];
    dmn_sha1(t[i].in, strlen(t[i].in), d);
    hex(d, 20, h);
    cr_expect_str_eq(h, t[i].want, "sha1(\"%s\")", t[i].in);
  }
  char big[1000];
  memset(big, 'a', sizeof big);
  uint8_t d[20];
  char h[41];
  dmn_sha1(big, sizeof big, d); /* several blocks and a padding block of its own */
  hex(d, 20, h);
  cr_expect_str_eq(h, "291e9a6c66994949b57ba5e650361e98fc36b1ba");
}

Test(sha1, base64_and_accept) {
  char out[64];
  static const struct {
    const char *in, *want;
  } t[] = {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foobar", "Zm9vYmFy"}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    dmn_base64((const uint8_t *)t[i].in, strlen(t[i].in), out);
    cr_expect_str_eq(out, t[i].want);
  }
  char acc[29];
  cr_assert_eq(dmn_ws_accept("dGhlIHNhbXBsZSBub25jZQ==", acc), 0);
  cr_expect_str_eq(acc, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="); /* RFC 6455 section 1.3 */
  char longkey[100];
  memset(longkey, 'k', 99);
  longkey[99] = '\0';
  cr_expect_eq(dmn_ws_accept(longkey, acc), -1);
}

Test(ws, rfc_masked_hello) {
  uint8_t f[] = {0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58};
  struct dmn_ws_frame fr;
  for (size_t n = 0; n < sizeof f; n++)
    cr_expect_eq(dmn_ws_parse(f, n, 1024, &fr), 0, "%zu bytes: more needed", n);
  cr_assert_eq(dmn_ws_parse(f, sizeof f, 1024, &fr), (long)sizeof f);
  cr_expect_eq(fr.opcode, DMN_WS_TEXT);
  cr_expect_eq(fr.fin, 1);
  cr_expect_eq(fr.len, 5);
  cr_expect_eq(memcmp(fr.payload, "Hello", 5), 0);
}

/* a masked frame (mask 0) of opcode and length len, with flags in the first byte */
static size_t make(uint8_t *buf, uint8_t first, uint64_t len) {
  size_t h = dmn_ws_header(buf, first & 0x0f, len);
  buf[0] = first;
  buf[1] |= 0x80;
  memset(buf + h, 0, 4);
  memset(buf + h + 4, 'x', len);
  return h + 4 + len;
}

Test(ws, lengths_and_refusals) {
  static uint8_t buf[70000];
  struct dmn_ws_frame fr;
  size_t n = make(buf, 0x81, 300); /* 16-bit length */
  cr_expect_eq(dmn_ws_parse(buf, n, 1024, &fr), (long)n);
  cr_expect_eq(fr.len, 300);
  n = make(buf, 0x82, 66000); /* 64-bit length */
  cr_expect_eq(dmn_ws_parse(buf, n, 70000, &fr), (long)n);
  cr_expect_eq(dmn_ws_parse(buf, n, 65999, &fr), -1, "over the maximum");
  n = make(buf, 0x89, 126);
  cr_expect_eq(dmn_ws_parse(buf, n, 1024, &fr), -1, "a control frame over 125 bytes");
  n = make(buf, 0x09, 4);
  cr_expect_eq(dmn_ws_parse(buf, n, 1024, &fr), -1, "a fragmented control frame");
  n = make(buf, 0xc1, 4);
  cr_expect_eq(dmn_ws_parse(buf, n, 1024, &fr), -1, "a reserved bit");
  n = make(buf, 0x83, 4);
  cr_expect_eq(dmn_ws_parse(buf, n, 1024, &fr), -1, "a reserved opcode");
  n = make(buf, 0x81, 4);
  buf[1] &= 0x7f;
  cr_expect_eq(dmn_ws_parse(buf, n, 1024, &fr), -1, "an unmasked client frame");
  n = make(buf, 0x01, 4);
  cr_expect_eq(dmn_ws_parse(buf, n, 1024, &fr), (long)n);
  cr_expect_eq(fr.fin, 0, "a text fragment");
}

Test(ws, header_sizes) {
  uint8_t h[10];
  cr_expect_eq(dmn_ws_header(h, DMN_WS_TEXT, 125), 2);
  cr_expect_eq(h[0], 0x81);
  cr_expect_eq(h[1], 125);
  cr_expect_eq(dmn_ws_header(h, DMN_WS_TEXT, 126), 4);
  cr_expect(h[1] == 126 && h[2] == 0 && h[3] == 126);
  cr_expect_eq(dmn_ws_header(h, DMN_WS_PONG, 65536), 10);
  cr_expect(h[0] == 0x8a && h[1] == 127 && h[7] == 1 && h[8] == 0 && h[9] == 0);
}
