/* SHA-1 and base64 for the WebSocket handshake (sha1.h). */
#include "sha1.h"

#include <string.h>

static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void block(uint32_t h[5], const uint8_t b[64]) {
  uint32_t w[80];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 | (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
  for (int i = 16; i < 80; i++)
    w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; i++) {
    uint32_t f, k;
    if (i < 20) {
      f = (bb & c) | (~bb & d);
      k = 0x5A827999;
    } else if (i < 40) {
      f = bb ^ c ^ d;
      k = 0x6ED9EBA1;
    } else if (i < 60) {
      f = (bb & c) | (bb & d) | (c & d);
      k = 0x8F1BBCDC;
    } else {
      f = bb ^ c ^ d;
      k = 0xCA62C1D6;
    }
    uint32_t t = rol(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rol(bb, 30);
    bb = a;
    a = t;
  }
  h[0] += a;
  h[1] += bb;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

void dmn_sha1(const void *p, size_t len, uint8_t out[20]) {
  uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  const uint8_t *s = p;
  size_t i = 0;
  for (; len - i >= 64; i += 64)
    block(h, s + i);
  uint8_t tail[128] = {0};
  size_t rest = len - i;
  memcpy(tail, s + i, rest);
  tail[rest] = 0x80;
  size_t tl = rest + 9 <= 64 ? 64 : 128;
  uint64_t bits = (uint64_t)len * 8;
  for (int k = 0; k < 8; k++)
    tail[tl - 1 - k] = (uint8_t)(bits >> (8 * k));
  block(h, tail);
  if (tl == 128)
    block(h, tail + 64);
  for (int k = 0; k < 5; k++)
    for (int j = 0; j < 4; j++)
      out[4 * k + j] = (uint8_t)(h[k] >> (24 - 8 * j));
}

static const char tab64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t dmn_base64(const uint8_t *p, size_t len, char *out) {
  const char *tab = tab64;
  size_t o = 0;
  for (size_t i = 0; i < len; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < len ? p[i + 2] : 0);
    out[o++] = tab[v >> 18 & 63];
    out[o++] = tab[v >> 12 & 63];
    out[o++] = i + 1 < len ? tab[v >> 6 & 63] : '=';
    out[o++] = i + 2 < len ? tab[v & 63] : '=';
  }
  out[o] = '\0';
  return o;
}

size_t dmn_base64_decode(const char *s, size_t len, uint8_t *out) {
  uint32_t acc = 0;
  unsigned bits = 0;
  size_t o = 0;
  for (size_t i = 0; i < len && s[i] != '='; i++) {
    const char *c = s[i] ? strchr(tab64, s[i]) : NULL;
    if (!c)
      continue; /* line breaks and spaces inside the text, as aria2 skips them */
    acc = acc << 6 | (uint32_t)(c - tab64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (uint8_t)(acc >> bits);
    }
  }
  return o;
}

int dmn_ws_accept(const char *key, char out[29]) {
  static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  char buf[128];
  size_t kl = strlen(key);
  if (kl > 64)
    return -1;
  memcpy(buf, key, kl);
  memcpy(buf + kl, guid, sizeof guid - 1);
  uint8_t d[20];
  dmn_sha1(buf, kl + sizeof guid - 1, d);
  dmn_base64(d, 20, out);
  return 0;
}
