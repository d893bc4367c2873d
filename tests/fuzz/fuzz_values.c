/* Fuzz target: the header value parsers of mh_range.c (Content-Range, HTTP-date), the If-Range validator choice, and the digest fields of mh_digest.c. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "fuzz.h"
#include "mh_digest.h"
#include "mh_range.h"

#define DATE_MAX 253402300799LL /* 9999-12-31 23:59:59: a four-digit year at most */

/* Accepted only when first <= last < total, and then its canonical form reads the same. */
static void fuzz__content_range(const char *p, size_t n) {
  uint64_t f = 1, l = 2, t = 3;
  int rc = mh_rr_parse_content_range(p, n, &f, &l, &t);
  FUZZ_CHECK(rc == 0 || rc == -EINVAL);
  if (rc)
    return;
  FUZZ_CHECK(f <= l && l < t);
  char canon[80];
  int cn = snprintf(canon, sizeof canon, "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, f, l, t);
  uint64_t f2, l2, t2;
  FUZZ_CHECK(mh_rr_parse_content_range(canon, (size_t)cn, &f2, &l2, &t2) == 0 && f2 == f && l2 == l && t2 == t);
}

/* Accepted dates lie in 1970..9999 and their IMF-fixdate (via gmtime_r) reads back the same;
 * the asctime and RFC 850 spellings of the same instant give the same value too. */
static void fuzz__date(const char *p, size_t n) {
  int64_t t;
  int rc = mh_rr_parse_http_date(p, n, &t);
  FUZZ_CHECK(rc == 0 || rc == -EINVAL);
  if (rc)
    return;
  /* a leap second on 9999-12-31 23:59 normalises one second past the four-digit years */
  FUZZ_CHECK(t >= 0 && t <= DATE_MAX + 1);
  if (t > DATE_MAX)
    return;
  time_t tt = (time_t)t;
  struct tm tm;
  FUZZ_CHECK(gmtime_r(&tt, &tm) != NULL);
  static const char wk[] = "SunMonTueWedThuFriSat", mo[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
  char s[3][80];
  int sn[3];
  sn[0] = snprintf(s[0], sizeof s[0], "%.3s, %02d %.3s %04d %02d:%02d:%02d GMT", wk + 3 * tm.tm_wday, tm.tm_mday,
                   mo + 3 * tm.tm_mon, tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  sn[1] = snprintf(s[1], sizeof s[1], "%.3s %.3s %2d %02d:%02d:%02d %04d", wk + 3 * tm.tm_wday, mo + 3 * tm.tm_mon,
                   tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, tm.tm_year + 1900);
  int rfc850 = tm.tm_year >= 70 && tm.tm_year < 170; /* two-digit years cover 1970..2069 */
  sn[2] = snprintf(s[2], sizeof s[2], "Sunday, %02d-%.3s-%02d %02d:%02d:%02d GMT", tm.tm_mday, mo + 3 * tm.tm_mon,
                   tm.tm_year % 100, tm.tm_hour, tm.tm_min, tm.tm_sec);
  for (int i = 0; i < 2 + rfc850; i++) {
    int64_t back;
    if (mh_rr_parse_http_date(s[i], (size_t)sn[i], &back) != 0 || back != t) {
      fprintf(stderr, "date %" PRId64 " spelled '%s' reads back differently\n", t, s[i]);
      FUZZ_CHECK(0);
    }
  }
}

/* A probe whose ETag / Last-Modified / Date come from the input (three '\n'-separated parts,
 * an empty part meaning "absent"): If-Range must be a strong ETag, else a Last-Modified at
 * least one second older than Date when there is no ETag, else nothing. */
static void fuzz__if_range(const char *p, size_t n) {
  const char *part[3] = {NULL, NULL, NULL};
  size_t len[3] = {0, 0, 0};
  for (int i = 0; i < 3 && p; i++) {
    const char *nl = memchr(p, '\n', n);
    size_t l = nl ? (size_t)(nl - p) : n;
    if (l)
      part[i] = p, len[i] = l;
    p = nl ? nl + 1 : NULL;
    n = nl ? n - l - 1 : 0;
  }
  struct mh_hdr h[5] = {{"Content-Range", 13, "bytes 0-9/100", 13}};
  size_t nh = 1;
  static const char *const names[3] = {"ETag", "Last-Modified", "Date"};
  for (int i = 0; i < 3; i++)
    if (part[i])
      h[nh++] = (struct mh_hdr){names[i], strlen(names[i]), part[i], len[i]};
  struct mh_probe_info info;
  FUZZ_CHECK(mh_rr_classify_probe(206, h, nh, &info) == MH_PROBE_MANAGED);
  FUZZ_CHECK(info.first == 0 && info.last == 9 && info.total == 100);
  size_t vl = 99;
  const char *v = mh_rr_if_range(&info, &vl);
  int strong_etag = part[0] && len[0] >= 2 && part[0][0] == '"' && part[0][len[0] - 1] == '"' &&
                    !memchr(part[0] + 1, '"', len[0] - 2);
  int64_t lm, date;
  int strong_lm = !part[0] && part[1] && part[2] && mh_rr_parse_http_date(part[1], len[1], &lm) == 0 &&
                  mh_rr_parse_http_date(part[2], len[2], &date) == 0 && date - lm >= 1;
  if (strong_etag)
    FUZZ_CHECK(v == part[0] && vl == len[0]);
  else if (strong_lm)
    FUZZ_CHECK(v == part[1] && vl == len[1]);
  else
    FUZZ_CHECK(v == NULL && vl == 0);
  /* the validator we would send is also what a consistent further range must repeat */
  if (v) {
    struct mh_hdr r[5];
    memcpy(r, h, sizeof r);
    r[0].value = "bytes 10-99/100";
    r[0].value_len = 15;
    FUZZ_CHECK(mh_rr_check_range_response(&info, 206, r, nh, 10, 99) == 0);
  }
}

static size_t fuzz__b64(const uint8_t *d, size_t n, char *out) {
  static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t k = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) | (i + 2 < n ? d[i + 2] : 0);
    out[k++] = a[v >> 18 & 63], out[k++] = a[v >> 12 & 63];
    out[k++] = i + 1 < n ? a[v >> 6 & 63] : '=';
    out[k++] = i + 2 < n ? a[v & 63] : '=';
  }
  return k;
}

/* A Repr-Digest (sf) or Digest value: nothing usable leaves out untouched; a usable one is
 * sha-256 or sha-512, and its canonical spelling parses back to the same bytes. */
static void fuzz__digest(int sf, const char *p, size_t n) {
  struct mh_digest d = {0};
  int bad = 0;
  int rc = sf ? mh_digest_parse_sf(p, n, &d, &bad) : mh_digest_parse_3230(p, n, &d, &bad);
  FUZZ_CHECK((rc == 0 || rc == 1) && bad >= 0);
  if (!rc) {
    FUZZ_CHECK(d.alg == MH_DIGEST_NONE);
    return;
  }
  FUZZ_CHECK(d.alg == MH_DIGEST_SHA256 || d.alg == MH_DIGEST_SHA512);
  size_t len = d.alg == MH_DIGEST_SHA512 ? 64 : 32;
  char canon[128];
  int k = snprintf(canon, sizeof canon, sf ? "%s=:" : "%s=", mh_digest_alg_name(d.alg));
  k += (int)fuzz__b64(d.d, len, canon + k);
  if (sf)
    canon[k++] = ':';
  struct mh_digest back = {0};
  int bad2 = 0;
  FUZZ_CHECK((sf ? mh_digest_parse_sf(canon, (size_t)k, &back, &bad2)
                 : mh_digest_parse_3230(canon, (size_t)k, &back, &bad2)) == 1);
  FUZZ_CHECK(bad2 == 0 && back.alg == d.alg && memcmp(back.d, d.d, len) == 0);
}

/* Input: a selector byte (which parser), then the header value. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const char *p = (const char *)data + 1;
  size_t n = size - 1;
  switch (data[0] % 4) {
  case 0: fuzz__content_range(p, n); break;
  case 1: fuzz__date(p, n); break;
  case 2: fuzz__if_range(p, n); break;
  default: fuzz__digest(!(data[0] & 4), p, n); break; /* 3: Repr-Digest, 7: Digest */
  }
  return 0;
}
