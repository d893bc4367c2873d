/* SHA-1 (FIPS 180-4) of a short message and base64: SHA-1 only for the WebSocket handshake's Sec-WebSocket-Accept (RFC 6455 fixes SHA-1 there; it protects nothing); base64 also for JSON-RPC over GET and XML-RPC's <base64>. */
#ifndef DMN_SHA1_H
#define DMN_SHA1_H
#include <stddef.h>
#include <stdint.h>

/* The 20-byte SHA-1 digest of p[0..len). */
void dmn_sha1(const void *p, size_t len, uint8_t out[20]);
/* Standard base64 (RFC 4648, with padding) of p[0..len) into out, NUL-terminated; out has room
 * for 4 * ((len + 2) / 3) + 1 bytes. Returns the length written. */
size_t dmn_base64(const uint8_t *p, size_t len, char *out);
/* Decodes base64 text s[0..len) into out (room for 3 * len / 4 + 3 bytes), skipping characters
 * outside the alphabet and stopping at '=' (aria2's lenient decoding). Returns the bytes written. */
size_t dmn_base64_decode(const char *s, size_t len, uint8_t *out);
/* Sec-WebSocket-Accept for a client's Sec-WebSocket-Key: base64(sha1(key + GUID)), 28 chars
 * and a NUL. -1 when the key is longer than a handshake's key can be (it is 24 chars). */
int dmn_ws_accept(const char *key, char out[29]);

#endif
