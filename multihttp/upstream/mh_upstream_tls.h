/* TLS upstream through libcurl (connect-only easy handles on the owner's loop): the transport an owner puts in struct mh_tls for https. */
#ifndef MH_UPSTREAM_TLS_H
#define MH_UPSTREAM_TLS_H
#include <stddef.h>
#include <sys/socket.h>
#include <uv.h>

#include "mh_upstream.h"

/* How an owner (an API transfer) fetches an https object with the split (the whole of it:
 * tests/harness/tls_split.c does exactly this):
 *   struct mh_tls tls;  mh_tls_init(&tls, url_host, url_port, cafile_or_NULL, insecure);
 *   up = mh_upstream_tls_connect(loop, env, src, ifname, replica, &tls, on_event, owner, &err);
 *   up->ops->watch(up, UV_WRITABLE);  -> on_event: mh_upstream_error(up) < 0: report
 *     MH_UPQ_CURL_CODE / MH_UPQ_ERRMSG (60 certificate, 35 handshake...), nothing written;
 *   else: struct mh_split_owner own = {.kick, .arg, .tls = &tls};
 *         mh_split_start(&own, loop, up, request_head, len, sink, &sp), events of up
 *         forwarded to mh_split_up_event as for a plain connection.
 *   After the split: a replacement for the next request (result.replace: mh_pool_dial on
 *   result.route with the same tls, after mh_split_free) may still be connecting; a TLS upstream tells its addresses (which mh_split_start needs) only once
 *   its handshake ended, so the next split starts from its UV_WRITABLE outcome as above.
 * env must be given (its tls slot holds the loop's multi handle); link the static library
 * mhttp_tls. */
#define MH_TLS_CONNECT_TIMEOUT_MS 15000

/* Fills t for a connection to https://host:port with this transport (t->connect =
 * mh_upstream_tls_connect). cafile NULL: libcurl's default bundle; insecure 1: no certificate
 * or host check. The strings stay the caller's. Any thread. */
void mh_tls_init(struct mh_tls *t, const char *host, unsigned port, const char *cafile, int insecure);

/* Opens a TLS connection to dst (the replica the engine chose) for tls->host:tls->port from
 * src (port ignored; NULL = any) on device ifname (SO_BINDTODEVICE when permitted; the source
 * address picks the path otherwise), like mh_upstream_tcp_connect: libcurl connects, shakes
 * hands (SNI and the certificate check are tls->host's, never dst's), and the outcome arrives
 * as a UV_WRITABLE event once the owner watches for it; then mh_upstream_error() tells
 * (-ECONNREFUSED, -ETIMEDOUT, -EPROTO for TLS, -EKEYREJECTED for the certificate...), and
 * MH_UPQ_CURL_CODE / MH_UPQ_ERRMSG give libcurl's code and text for reporting as curl does.
 * Then recv/send carry the plaintext; splice_to is NULL. The handshake is bounded by
 * MH_TLS_CONNECT_TIMEOUT_MS (a split gives up on a leg sooner by itself). Returns NULL with *err = -errno on an immediate
 * failure (-ENOMEM without env). One curl multi handle per env drives every such connection
 * on its loop (made with the first, freed with the last; env->tls). Loop thread. */
struct mh_upstream *mh_upstream_tls_connect(uv_loop_t *loop, struct mh_upstream_env *env, const struct sockaddr *src,
                                            const char *ifname, const struct sockaddr *dst, const struct mh_tls *tls,
                                            mh_upstream_event_cb on_event, void *owner, int *err);

/* Pure, for libcurl's options (tested): CURLOPT_CONNECT_TO's "HOST:PORT:ADDR:PORT" pinning
 * tls's host to dst ([v6] bracketed), and CURLOPT_INTERFACE's "host!ADDR" for src ("" when
 * src is NULL). 0 or -ENAMETOOLONG. */
int mh_tls_connect_to(char *buf, size_t cap, const struct mh_tls *tls, const struct sockaddr *dst);
int mh_tls_interface(char *buf, size_t cap, const struct sockaddr *src);

/* Pure: whether a TLS upstream owes its owner a readable event it makes up itself. TLS holds
 * decrypted bytes the socket will never signal again: after a read that was not told "nothing
 * more" (rx_more), an owner watching for readable gets one event from the loop, and then only
 * after another such read (so an owner that does not read cannot spin the loop). */
int mh_tls_owes_readable(int watching, int rx_more);

#endif
