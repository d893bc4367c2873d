/* Digest fields (Repr-Digest, Content-Digest, Digest) parsed to one expected hash, and SHA-256/SHA-512 against known vectors, table-driven. */
#include "mh_digest.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hex(const uint8_t *d, size_t n, char *out) {
  for (size_t i = 0; i < n; i++)
    sprintf(out + 2 * i, "%02x", d[i]);
}

/* FIPS 180-4 examples (NIST CSRC), the empty string, and a message over many block edges. */
struct vec {
  const char *msg;
  size_t repeat;
  const char *sha256, *sha512;
};
/* clang-format off */
static const struct vec vecs[] = {
    {"", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
     "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"},
    {"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
     "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
     "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c33596fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445"},
    {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu", 1,
     "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
     "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"},
    {"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
     "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b"},
};
/* clang-format on */

/* Each vector fed whole, and in pieces of 1..200 bytes that straddle every block edge. */
Test(digest, known_vectors) {
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++) {
    size_t n = strlen(vecs[i].msg) * vecs[i].repeat;
    char *m = malloc(n + 1);
    for (size_t r = 0; r < vecs[i].repeat; r++)
      memcpy(m + r * strlen(vecs[i].msg), vecs[i].msg, strlen(vecs[i].msg));
    for (size_t step = 0; step <= 200; step += 37) {
      struct mh_sha256 a;
      struct mh_sha512 b;
      mh_sha256_init(&a);
      mh_sha512_init(&b);
      for (size_t off = 0; off < n;) {
        size_t k = step ? (off % step) + 1 : n;
        k = k > n - off ? n - off : k;
        mh_sha256_update(&a, m + off, k);
        mh_sha512_update(&b, m + off, k);
        off += k;
      }
      uint8_t d[64];
      char h[129];
      mh_sha256_final(&a, d);
      hex(d, 32, h);
      cr_expect_str_eq(h, vecs[i].sha256, "sha-256 of vector %zu, steps %zu", i, step);
      mh_sha512_final(&b, d);
      hex(d, 64, h);
      cr_expect_str_eq(h, vecs[i].sha512, "sha-512 of vector %zu, steps %zu", i, step);
    }
    free(m);
  }
}

/* sha-256 / sha-512 of "hello", base64 */
#define H256 "LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ="
#define H512 "m3HSJL1i83hdltRq0+o9czGb+8KJDKra4t/3JRlnPKcjI8PZm6XBHXx6zG4UuMXaDEZjR1wuXDre9G9zvN7AQw=="

struct pcase {
  int sf;
  const char *v;
  int ret;
  int alg;
  int malformed;
};
/* clang-format off */
static const struct pcase pcases[] = {
    {1, "sha-256=:" H256 ":", 1, MH_DIGEST_SHA256, 0},
    {1, "sha-512=:" H512 ":", 1, MH_DIGEST_SHA512, 0},
    {1, "sha-256=:" H256 ":, sha-512=:" H512 ":", 1, MH_DIGEST_SHA512, 0},  /* the stronger */
    {1, "sha-512=:" H512 ":,sha-256=:" H256 ":", 1, MH_DIGEST_SHA512, 0},
    {1, "md5=:XrY7u+Ae7tCTyyK7j1rNww==:, unixsum=:MTIz:, sha-256=:" H256 ":", 1, MH_DIGEST_SHA256, 0},
    {1, "md5=:XrY7u+Ae7tCTyyK7j1rNww==:", 0, MH_DIGEST_NONE, 0},            /* unknown only */
    {1, "sha-256=:" H256 ":;p=1", 1, MH_DIGEST_SHA256, 0},                 /* a parameter */
    {1, "sha-256=:not base64!:, sha-512=:" H512 ":", 1, MH_DIGEST_SHA512, 1},
    {1, "sha-256=:" H512 ":", 0, MH_DIGEST_NONE, 1},                       /* wrong length */
    {1, "sha-256=" H256, 0, MH_DIGEST_NONE, 1},                             /* a token, not bytes */
    {1, "SHA-256=:" H256 ":", 0, MH_DIGEST_NONE, 1},                       /* keys are lowercase */
    {1, "sha-256=:" H256, 0, MH_DIGEST_NONE, 1},                            /* unterminated */
    {1, "sha-256=:" H256 ":x", 0, MH_DIGEST_NONE, 1},
    {1, "flag, sha-256=:" H256 ":", 1, MH_DIGEST_SHA256, 0},                /* a boolean member */
    {1, "", 0, MH_DIGEST_NONE, 0},
    {1, " , ", 0, MH_DIGEST_NONE, 2},
    {0, "SHA-256=" H256, 1, MH_DIGEST_SHA256, 0},
    {0, "sha-512=" H512 ", SHA-256=" H256, 1, MH_DIGEST_SHA512, 0},
    {0, "MD5=XrY7u+Ae7tCTyyK7j1rNww==, SHA-256=" H256, 1, MH_DIGEST_SHA256, 0},
    {0, "SHA-256=:" H256 ":", 0, MH_DIGEST_NONE, 1},                        /* 9530 syntax in Digest */
    {0, "SHA-256", 0, MH_DIGEST_NONE, 1},
    {0, "SHA-256=" H256 "A", 0, MH_DIGEST_NONE, 1},
};
/* clang-format on */

Test(digest, parse_fields) {
  static const uint8_t hello256[32] = {0x2c, 0xf2, 0x4d, 0xba, 0x5f, 0xb0, 0xa3, 0x0e};
  for (size_t i = 0; i < sizeof pcases / sizeof pcases[0]; i++) {
    const struct pcase *c = &pcases[i];
    struct mh_digest d = {0};
    int bad = 0;
    /* the value is not NUL-terminated where the parser reads it: copy it without one */
    size_t n = strlen(c->v);
    char *v = malloc(n ? n : 1);
    memcpy(v, c->v, n);
    int r = c->sf ? mh_digest_parse_sf(v, n, &d, &bad) : mh_digest_parse_3230(v, n, &d, &bad);
    free(v);
    cr_expect_eq(r, c->ret, "case %zu (%s): returns %d", i, c->v, r);
    cr_expect_eq(d.alg, c->alg, "case %zu (%s): alg %d", i, c->v, d.alg);
    cr_expect_eq(bad, c->malformed, "case %zu (%s): %d malformed", i, c->v, bad);
    if (d.alg == MH_DIGEST_SHA256)
      cr_expect(!memcmp(d.d, hello256, 8), "case %zu: the decoded bytes", i);
  }
}

/* Two lines of one field: the second adds to the first; nothing usable keeps what was. */
Test(digest, lines_accumulate) {
  struct mh_digest d = {0};
  int bad = 0;
  const char *a = "sha-256=:" H256 ":", *b = "md5=:AAAA:";
  cr_assert_eq(mh_digest_parse_sf(a, strlen(a), &d, &bad), 1);
  cr_assert_eq(mh_digest_parse_sf(b, strlen(b), &d, &bad), 0);
  cr_expect_eq(d.alg, MH_DIGEST_SHA256);
}

Test(digest, running_check) {
  struct mh_digest want = {0};
  int bad = 0;
  const char *f = "sha-512=:" H512 ":";
  cr_assert_eq(mh_digest_parse_sf(f, strlen(f), &want, &bad), 1);
  struct mh_digest_run r;
  mh_digest_run_init(&r, want.alg);
  mh_digest_run_update(&r, "hel", 3);
  mh_digest_run_update(&r, "lo", 2);
  cr_expect_eq(mh_digest_run_check(&r, &want), 0);
  mh_digest_run_init(&r, want.alg);
  mh_digest_run_update(&r, "hellO", 5);
  cr_expect_eq(mh_digest_run_check(&r, &want), -1);
  cr_expect_str_eq(mh_digest_alg_name(MH_DIGEST_SHA256), "sha-256");
  cr_expect_str_eq(mh_digest_alg_name(MH_DIGEST_SHA512), "sha-512");
}
