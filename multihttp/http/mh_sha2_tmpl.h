/* Template of one SHA-2 size (FIPS 180-4 §5.1, §6.2, §6.4), included by mh_sha2.c once per size: the two sizes differ only in word width, rounds, rotations and constants. */
/* No include guard: each inclusion makes one size. The includer defines MH__T (word type), MH__WB
 * (its bytes), MH__R (rounds), MH__ROT (the rotations of Σ0, Σ1, σ0, σ1, the last of each σ a
 * shift), MH__F(x) (the size's names), MH__C (its context struct), and MH__F(k), MH__F(iv). */

static const unsigned char MH__F(rot)[12] = {MH__ROT};

static inline MH__T MH__F(ror)(MH__T x, int n) { return x >> n | x << (8 * MH__WB - n); }

/* Σ (shift = 0: three rotations) or σ (the third a shift) of x with rotations r[0..2]. */
static inline MH__T MH__F(sig)(MH__T x, const unsigned char *r, int shift) {
  return MH__F(ror)(x, r[0]) ^ MH__F(ror)(x, r[1]) ^ (shift ? x >> r[2] : MH__F(ror)(x, r[2]));
}

/* One block of 16 words into the state. */
static void MH__F(block)(MH__T h[8], const uint8_t *p) {
  const unsigned char *r = MH__F(rot);
  MH__T w[MH__R];
  for (int i = 0; i < 16; i++) {
    w[i] = 0;
    for (int j = 0; j < MH__WB; j++)
      w[i] = w[i] << 8 | p[MH__WB * i + j];
  }
  for (int i = 16; i < MH__R; i++)
    w[i] = w[i - 16] + MH__F(sig)(w[i - 15], r + 6, 1) + w[i - 7] + MH__F(sig)(w[i - 2], r + 9, 1);
  MH__T a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < MH__R; i++) {
    MH__T t1 = k + MH__F(sig)(e, r + 3, 0) + ((e & f) ^ (~e & g)) + MH__F(k)[i] + w[i];
    MH__T t2 = MH__F(sig)(a, r, 0) + ((a & b) ^ (a & c) ^ (b & c));
    k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void MH__F(init)(MH__C *c) {
  memcpy(c->h, MH__F(iv), sizeof c->h);
  c->len = 0;
  c->nbuf = 0;
}

void MH__F(update)(MH__C *c, const void *data, size_t len) {
  const size_t bs = 16 * MH__WB;
  const uint8_t *p = data;
  c->len += len;
  if (c->nbuf) {
    size_t k = bs - c->nbuf < len ? bs - c->nbuf : len;
    memcpy(c->buf + c->nbuf, p, k);
    c->nbuf += k, p += k, len -= k;
    if (c->nbuf < bs)
      return;
    MH__F(block)(c->h, c->buf);
    c->nbuf = 0;
  }
  for (; len >= bs; p += bs, len -= bs)
    MH__F(block)(c->h, p);
  memcpy(c->buf, p, len);
  c->nbuf = len;
}

/* Padding (§5.1): a 1 bit, zeros, the length in bits as a big-endian number of 2 words (its
 * bits above 64 are 0: len counts bytes in 64 bits). */
void MH__F(final)(MH__C *c, uint8_t out[8 * MH__WB]) {
  enum { BS = 16 * MH__WB, LEN = 2 * MH__WB };
  uint64_t bits = c->len * 8;
  uint8_t pad[BS + LEN] = {0x80};
  size_t n = (c->nbuf < BS - LEN ? BS - LEN : 2 * BS - LEN) - c->nbuf;
  for (int i = 0; i < 8; i++)
    pad[n + LEN - 8 + i] = (uint8_t)(bits >> (56 - 8 * i));
  MH__F(update)(c, pad, n + LEN);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < MH__WB; j++)
      out[MH__WB * i + j] = (uint8_t)(c->h[i] >> (8 * (MH__WB - 1 - j)));
}
