/* SHA-512 (FIPS 180-4) of a byte stream: digest headers' sha-512 (no crypto library is a dependency). */
#ifndef MH_SHA512_H
#define MH_SHA512_H
#include <stddef.h>
#include <stdint.h>

struct mh_sha512 {
  uint64_t h[8];
  uint64_t len;     /* bytes hashed so far (a 2^64-byte stream is out of reach) */
  uint8_t buf[128]; /* a block being filled */
  size_t nbuf;
};

void mh_sha512_init(struct mh_sha512 *c);
void mh_sha512_update(struct mh_sha512 *c, const void *p, size_t len);
void mh_sha512_final(struct mh_sha512 *c, uint8_t out[64]);

#endif
