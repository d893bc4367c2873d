/* SHA-256 (FIPS 180-4) of a byte stream: the API's checksum option (no crypto library is a dependency). */
#ifndef MH_SHA256_H
#define MH_SHA256_H
#include <stddef.h>
#include <stdint.h>

struct mh_sha256 {
  uint32_t h[8];
  uint64_t len;    /* bytes hashed so far */
  uint8_t buf[64]; /* a block being filled */
  size_t nbuf;
};

void mh_sha256_init(struct mh_sha256 *c);
void mh_sha256_update(struct mh_sha256 *c, const void *p, size_t len);
void mh_sha256_final(struct mh_sha256 *c, uint8_t out[32]);
/* Parses 64 hex digits (either case) into out: 0, or -1 when it is not exactly that. */
int mh_sha256_parse_hex(const char *hex, uint8_t out[32]);
/* Formats a digest as 64 lowercase hex digits and a NUL (out has room for 65). */
void mh_sha256_hex(const uint8_t d[32], char out[65]);

#endif
