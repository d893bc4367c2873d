/* Parsing of Repr-Digest / Content-Digest (RFC 9530) and Digest (RFC 3230) field values, and checking bytes against the digest they name. */
#include "mh_digest.h"

#include <string.h>
#include <strings.h>

static int mh__b64val(char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Standard base64 (RFC 4648 §4) of exactly want bytes, '=' padding optional: 0, or -1. */
static int mh__b64_decode(const char *s, size_t n, uint8_t *out, size_t want) {
  while (n && s[n - 1] == '=')
    n--;
  if (n != (want * 4 + 2) / 3)
    return -1;
  uint32_t acc = 0;
  size_t bits = 0, k = 0;
  for (size_t i = 0; i < n; i++) {
    int v = mh__b64val(s[i]);
    if (v < 0)
      return -1;
    acc = acc << 6 | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[k++] = (uint8_t)(acc >> bits);
    }
  }
  return k == want ? 0 : -1;
}

static int mh__alg_of(const char *k, size_t n) {
  if (n == 7 && !strncasecmp(k, "sha-256", 7))
    return MH_DIGEST_SHA256;
  if (n == 7 && !strncasecmp(k, "sha-512", 7))
    return MH_DIGEST_SHA512;
  return MH_DIGEST_NONE;
}

static size_t mh__alg_len(int alg) { return alg == MH_DIGEST_SHA512 ? 64 : 32; }

static int mh__ows(char c) { return c == ' ' || c == '\t'; }

/* One member [p, e) of a list, trimmed: key=value (*vn and *v set), or a key alone (*v NULL). */
static void mh__member(const char *p, const char *e, const char **k, size_t *kn, const char **v, size_t *vn) {
  while (p < e && mh__ows(*p))
    p++;
  while (e > p && mh__ows(e[-1]))
    e--;
  const char *eq = memchr(p, '=', (size_t)(e - p));
  *k = p, *kn = (size_t)((eq ? eq : e) - p);
  *v = eq ? eq + 1 : NULL, *vn = eq ? (size_t)(e - eq - 1) : 0;
}

/* An RFC 8941 dictionary key: lcalpha or '*', then lcalpha, DIGIT, '_', '-', '.', '*'. */
static int mh__sf_key(const char *k, size_t n) {
  if (!n || !((k[0] >= 'a' && k[0] <= 'z') || k[0] == '*'))
    return 0;
  for (size_t i = 1; i < n; i++)
    if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= '0' && k[i] <= '9') || strchr("_-.*", k[i])))
      return 0;
  return 1;
}

/* A byte sequence `:BASE64:` with optional `;param` after it: its base64 in *b, *bn. */
static int mh__sf_bytes(const char *v, size_t n, const char **b, size_t *bn) {
  if (n < 2 || v[0] != ':')
    return -1;
  const char *close = memchr(v + 1, ':', n - 1);
  if (!close || (close + 1 < v + n && close[1] != ';'))
    return -1;
  *b = v + 1, *bn = (size_t)(close - v - 1);
  return 0;
}

/* Keeps the member's digest in out when it is of a known algorithm and decodes; the strongest
 * algorithm seen wins. 1 kept, 0 unknown, -1 malformed. */
static int mh__take(int alg, const char *b, size_t bn, struct mh_digest *out) {
  if (alg == MH_DIGEST_NONE)
    return 0;
  uint8_t d[64];
  if (mh__b64_decode(b, bn, d, mh__alg_len(alg)) < 0)
    return -1;
  if (alg >= out->alg) {
    out->alg = alg;
    memcpy(out->d, d, mh__alg_len(alg));
  }
  return 1;
}

/* The members of a comma-separated list, each through one of the two syntaxes. */
static int mh__parse(const char *v, size_t len, int sf, struct mh_digest *out, int *malformed) {
  struct mh_digest got = *out;
  int kept = 0;
  const char *p = v, *end = v + len;
  while (p < end) {
    const char *c = memchr(p, ',', (size_t)(end - p)), *e = c ? c : end, *k, *val, *b;
    size_t kn, vn, bn;
    int rc;
    mh__member(p, e, &k, &kn, &val, &vn);
    if (!val) /* a key alone: an RFC 8941 boolean, nothing to check; else malformed */
      rc = sf && mh__sf_key(k, kn) ? 0 : -1;
    else if (sf)
      rc = mh__sf_key(k, kn) && mh__sf_bytes(val, vn, &b, &bn) == 0 ? mh__take(mh__alg_of(k, kn), b, bn, &got) : -1;
    else
      rc = mh__take(mh__alg_of(k, kn), val, vn, &got);
    if (rc < 0)
      ++*malformed;
    kept |= rc > 0;
    p = c ? c + 1 : end;
  }
  if (kept)
    *out = got;
  return kept;
}

int mh_digest_parse_sf(const char *v, size_t len, struct mh_digest *out, int *malformed) {
  return mh__parse(v, len, 1, out, malformed);
}

int mh_digest_parse_3230(const char *v, size_t len, struct mh_digest *out, int *malformed) {
  return mh__parse(v, len, 0, out, malformed);
}

/* Every line of the field name in h, into out (0 when none named a usable digest). */
static int mh__field(const struct mh_hdr *h, size_t n, const char *name, int sf, struct mh_digest *out,
                     int *malformed) {
  int found = 0;
  for (size_t i = 0; i < n; i++)
    if (h[i].name_len == strlen(name) && !strncasecmp(h[i].name, name, h[i].name_len))
      found |= mh__parse(h[i].value, h[i].value_len, sf, out, malformed);
  return found;
}

int mh_digest_of_head(const struct mh_hdr *h, size_t n, int content_is_whole, struct mh_digest *out, const char **field,
                      int *malformed) {
  static const struct {
    const char *name;
    int sf, whole_only;
  } order[] = {{"Repr-Digest", 1, 0}, {"Digest", 0, 0}, {"Content-Digest", 1, 1}};
  memset(out, 0, sizeof *out);
  *field = NULL;
  for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
    if (order[k].whole_only && !content_is_whole)
      continue;
    if (mh__field(h, n, order[k].name, order[k].sf, out, malformed)) {
      *field = order[k].name;
      return 1;
    }
  }
  return 0;
}

const char *mh_digest_alg_name(int alg) {
  return alg == MH_DIGEST_SHA256 ? "sha-256" : alg == MH_DIGEST_SHA512 ? "sha-512" : "none";
}

void mh_digest_run_init(struct mh_digest_run *r, int alg) {
  r->alg = alg;
  if (alg == MH_DIGEST_SHA512)
    mh_sha512_init(&r->u.s512);
  else
    mh_sha256_init(&r->u.s256);
}

void mh_digest_run_update(struct mh_digest_run *r, const void *p, size_t len) {
  if (r->alg == MH_DIGEST_SHA512)
    mh_sha512_update(&r->u.s512, p, len);
  else
    mh_sha256_update(&r->u.s256, p, len);
}

int mh_digest_run_check(struct mh_digest_run *r, const struct mh_digest *want) {
  uint8_t d[64];
  if (r->alg != want->alg || want->alg == MH_DIGEST_NONE)
    return -1;
  if (r->alg == MH_DIGEST_SHA512)
    mh_sha512_final(&r->u.s512, d);
  else
    mh_sha256_final(&r->u.s256, d);
  return memcmp(d, want->d, mh__alg_len(want->alg)) ? -1 : 0;
}
