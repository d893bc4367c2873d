/* The daemon's RPC server on the libuv loop: HTTP/1.1 framed by llhttp (POST and GET /jsonrpc, POST /rpc (XML-RPC), OPTIONS preflight, CORS as aria2's --rpc-allow-origin-all) and WebSocket at /jsonrpc (RFC 6455), with the request size, the frame size and the connection count bounded. Loop thread only. */
#ifndef DMN_HTTPD_H
#define DMN_HTTPD_H
#include <stddef.h>
#include <uv.h>

/* What a request carries: a JSON-RPC body (POST /jsonrpc, a WebSocket message), JSON-RPC over
 * GET (/jsonrpc?method=...: the input is the request target's query from its '?', or ""), an
 * XML-RPC body (POST /rpc). */
enum dmn_rpc_kind { DMN_RPC_JSON, DMN_RPC_JSON_GET, DMN_RPC_XML };
/* Answers one request: the answer's text, which the server frees (NULL: the status alone, no
 * body), its HTTP status and its Content-Type. */
typedef char *(*dmn_rpc_cb)(void *arg, enum dmn_rpc_kind kind, const char *in, size_t len, int *status,
                            const char **ctype);

struct dmn_httpd_cfg {
  int port;
  int listen_all;       /* every address, else 127.0.0.1 and ::1 */
  int allow_origin_all; /* Access-Control-Allow-Origin: * and the preflight answer */
  size_t max_body;      /* largest request body and WebSocket message */
  unsigned max_conns;   /* connections at once; more are closed at accept */
  unsigned idle_ms;     /* an HTTP connection without a request this long is closed */
  dmn_rpc_cb rpc;
  void *arg;
};

struct dmn_conn;
struct dmn_httpd {
  uv_loop_t *loop;
  struct dmn_httpd_cfg cfg;
  uv_tcp_t lsn[2];
  int nlsn;
  struct dmn_conn *conns; /* every open connection, a list */
  unsigned nconns;
};

/* Listens on the configured addresses. 0, or -1 with err (no address could be bound). */
int dmn_httpd_start(struct dmn_httpd *h, uv_loop_t *loop, const struct dmn_httpd_cfg *cfg, char *err, size_t errlen);
/* Sends text as a text frame to every WebSocket client. */
void dmn_httpd_broadcast(struct dmn_httpd *h, const char *text);
/* Stops listening and ends every connection once what was queued to it is sent (their
 * handles close on the loop). */
void dmn_httpd_close(struct dmn_httpd *h);

#endif
