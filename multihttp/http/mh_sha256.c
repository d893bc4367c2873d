/* SHA-256 (FIPS 180-4 §6.2) over a stream, and its hex form: the API's checksum option. */
#include "mh_sha256.h"

#include <string.h>

static const uint32_t mh__k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static inline uint32_t mh__ror(uint32_t x, int n) { return x >> n | x << (32 - n); }

/* One 64-byte block into the state (§6.2.2). */
static void mh__block(uint32_t h[8], const uint8_t *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = mh__ror(w[i - 15], 7) ^ mh__ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = mh__ror(w[i - 2], 17) ^ mh__ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = k + (mh__ror(e, 6) ^ mh__ror(e, 11) ^ mh__ror(e, 25)) + ((e & f) ^ (~e & g)) + mh__k[i] + w[i];
    uint32_t t2 = (mh__ror(a, 2) ^ mh__ror(a, 13) ^ mh__ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void mh_sha256_init(struct mh_sha256 *c) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(c->h, iv, sizeof iv);
  c->len = 0;
  c->nbuf = 0;
}

void mh_sha256_update(struct mh_sha256 *c, const void *data, size_t len) {
  const uint8_t *p = data;
  c->len += len;
  if (c->nbuf) {
    size_t k = 64 - c->nbuf < len ? 64 - c->nbuf : len;
    memcpy(c->buf + c->nbuf, p, k);
    c->nbuf += k, p += k, len -= k;
    if (c->nbuf < 64)
      return;
    mh__block(c->h, c->buf);
    c->nbuf = 0;
  }
  for (; len >= 64; p += 64, len -= 64)
    mh__block(c->h, p);
  memcpy(c->buf, p, len);
  c->nbuf = len;
}

/* Padding (§5.1.1): a 1 bit, zeros, the length in bits as a big-endian 64-bit number. */
void mh_sha256_final(struct mh_sha256 *c, uint8_t out[32]) {
  uint64_t bits = c->len * 8;
  uint8_t pad[72] = {0x80};
  size_t n = (c->nbuf < 56 ? 56 : 120) - c->nbuf;
  for (int i = 0; i < 8; i++)
    pad[n + i] = (uint8_t)(bits >> (56 - 8 * i));
  mh_sha256_update(c, pad, n + 8);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 4; j++)
      out[4 * i + j] = (uint8_t)(c->h[i] >> (24 - 8 * j));
}

static int mh__hexval(char ch) {
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if (ch >= 'a' && ch <= 'f')
    return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F')
    return ch - 'A' + 10;
  return -1;
}

int mh_sha256_parse_hex(const char *hex, uint8_t out[32]) {
  if (!hex || strlen(hex) != 64)
    return -1;
  for (int i = 0; i < 32; i++) {
    int hi = mh__hexval(hex[2 * i]), lo = mh__hexval(hex[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return -1;
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  return 0;
}

void mh_sha256_hex(const uint8_t d[32], char out[65]) {
  static const char x[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++)
    out[2 * i] = x[d[i] >> 4], out[2 * i + 1] = x[d[i] & 15];
  out[64] = 0;
}
