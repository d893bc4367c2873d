/* Turning the program's own resolver answers (addrinfo, hostent) into address arrays for mdns_note_program. */
#ifndef MHTTP_MULTIDNS_ANSWER_H
#define MHTTP_MULTIDNS_ANSWER_H

#include <netdb.h>
#include <stddef.h>
#include <sys/socket.h>

/* Pure and thread-safe: the shim calls these on the program's thread, right after the real
 * getaddrinfo/gethostbyname* returned, to copy the answer into its message to the engine
 * (the program keeps ownership of `res`/`he` and may free it as soon as this returns). */

/* Copies the AF_INET/AF_INET6 addresses of a getaddrinfo() result, in its order, skipping
 * repeats (getaddrinfo lists one entry per socket type: TCP, UDP, raw). Ports are zeroed.
 * Returns the number written to out[0..max-1]. `res` may be NULL (0). */
size_t mdns_answer_from_addrinfo(const struct addrinfo *res, struct sockaddr_storage *out, size_t max);

/* The same for a gethostbyname*() / gethostbyname2() result (h_addrtype AF_INET or AF_INET6,
 * h_addr_list NULL-terminated). Returns the number written. `he` may be NULL (0). */
size_t mdns_answer_from_hostent(const struct hostent *he, struct sockaddr_storage *out, size_t max);

#endif
