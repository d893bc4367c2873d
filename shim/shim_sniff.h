/* Decides from a connection's first written bytes whether they begin an HTTP/1.x request (pure). */
#ifndef SHIM_SNIFF_H
#define SHIM_SNIFF_H
#include <stddef.h>

enum shim_sniff {
  SHIM_SNIFF_NO = 0,   /* not HTTP/1.x: the fd is never touched */
  SHIM_SNIFF_HTTP = 1, /* begins a request line we relay */
  SHIM_SNIFF_MORE = 2, /* no bytes at all: decide on the next write */
};

/* p/n: the first bytes the program writes (any prefix length). A write shorter than the
 * method counts as HTTP when it is a prefix of "METHOD " (byte-by-byte writers); the engine
 * relays raw if the rest turns out not to be HTTP. CONNECT is not taken (tunnels carry TLS). */
enum shim_sniff shim_sniff_http(const char *p, size_t n);

#endif
