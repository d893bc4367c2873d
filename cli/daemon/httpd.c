/* The RPC server: connections, HTTP framing with llhttp, CORS, the WebSocket upgrade and frames (httpd.h). */
#include "httpd.h"

#include <llhttp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "page.h"
#include "sha1.h"
#include "ws.h"

#define HEADER_MAX 16384 /* bytes of a request's line and headers */

struct dmn_conn {
  uv_tcp_t tcp;
  uv_timer_t idle;
  struct dmn_httpd *h;
  struct dmn_conn *next, *prev;
  llhttp_t parser;
  int ws; /* 1 once upgraded to a WebSocket */
  int closing;
  int open_handles;
  size_t head_bytes;
  char url[8192]; /* a GET call carries its params in the query */
  size_t url_len;
  int url_long; /* the request target did not fit: 414 */
  char field[64], value[256];
  size_t field_len, value_len;
  char ws_key[64], acrh[256];
  int ws_upgrade, ws_version_ok;
  char *body; /* the request body, at most cfg.max_body */
  size_t body_len, body_cap;
  int finishing; /* a shutdown is queued: nothing more is read or answered */
  int too_big;
  uint8_t *in; /* WebSocket bytes not yet parsed */
  size_t in_len;
  char *msg; /* a fragmented WebSocket message being joined */
  size_t msg_len;
};

struct wreq {
  uv_write_t req;
  char data[];
};

static void on_handle_closed(uv_handle_t *hd) {
  struct dmn_conn *c = hd->data;
  if (--c->open_handles > 0)
    return;
  free(c->body);
  free(c->in);
  free(c->msg);
  free(c);
}

static void conn_close(struct dmn_conn *c) {
  if (c->closing)
    return;
  c->closing = 1;
  if (c->prev)
    c->prev->next = c->next;
  else
    c->h->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  c->h->nconns--;
  uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
  uv_close((uv_handle_t *)&c->idle, on_handle_closed);
}

static void on_written(uv_write_t *req, int status) {
  (void)status;
  free(req);
}

/* queues a then b (either may be empty) as one write */
static void conn_write(struct dmn_conn *c, const void *a, size_t alen, const void *b, size_t blen) {
  if (c->closing)
    return;
  struct wreq *w = malloc(sizeof *w + alen + blen);
  if (!w) {
    conn_close(c);
    return;
  }
  memcpy(w->data, a, alen);
  if (blen)
    memcpy(w->data + alen, b, blen);
  uv_buf_t buf = uv_buf_init(w->data, (unsigned)(alen + blen));
  if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, on_written) < 0) {
    free(w);
    conn_close(c);
  }
}

/* a closing write: shut the connection once what was queued went out */
static void on_shutdown(uv_shutdown_t *req, int status) {
  (void)status;
  conn_close(req->data);
  free(req);
}

static void conn_finish(struct dmn_conn *c) {
  if (c->finishing)
    return;
  c->finishing = 1;
  uv_shutdown_t *s = malloc(sizeof *s);
  if (!s || c->closing || uv_shutdown(s, (uv_stream_t *)&c->tcp, on_shutdown) < 0) {
    free(s);
    conn_close(c);
    return;
  }
  s->data = c;
  uv_read_stop((uv_stream_t *)&c->tcp);
}

/* an HTTP answer: status line, CORS when configured, extra header lines, the body */
static void respond(struct dmn_conn *c, const char *status, const char *extra, const char *ctype, const char *body,
                    size_t blen) {
  char head[1024];
  int keep = llhttp_should_keep_alive(&c->parser);
  int n = snprintf(head, sizeof head,
                   "HTTP/1.1 %s\r\n%s%s%s%s%sContent-Length: %zu\r\nCache-Control: no-cache\r\n"
                   "Connection: %s\r\n\r\n",
                   status, c->h->cfg.allow_origin_all ? "Access-Control-Allow-Origin: *\r\n" : "", extra,
                   ctype ? "Content-Type: " : "", ctype ? ctype : "", ctype ? "\r\n" : "", blen,
                   keep ? "keep-alive" : "close");
  if (n < 0 || (size_t)n >= sizeof head) { /* cannot happen with the bounded header copies */
    conn_close(c);
    return;
  }
  conn_write(c, head, (size_t)n, body, blen);
  if (!keep)
    conn_finish(c);
}

static void respond_error(struct dmn_conn *c, const char *status) {
  respond(c, status, "", "text/plain", status, strlen(status));
}

static void preflight(struct dmn_conn *c) {
  char extra[512] = "";
  if (c->h->cfg.allow_origin_all)
    snprintf(extra, sizeof extra,
             "Access-Control-Allow-Methods: POST, GET, OPTIONS\r\n"
             "Access-Control-Allow-Headers: %s\r\nAccess-Control-Max-Age: 1728000\r\n",
             c->acrh[0] ? c->acrh : "Content-Type");
  respond(c, "200 OK", extra, NULL, "", 0);
}

static void upgrade(struct dmn_conn *c) {
  char accept[29], head[256];
  if (!c->ws_version_ok || dmn_ws_accept(c->ws_key, accept) < 0) {
    respond(c, "400 Bad Request", "Sec-WebSocket-Version: 13\r\n", "text/plain", "bad handshake", 13);
    return;
  }
  int n = snprintf(head, sizeof head,
                   "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Accept: %s\r\n\r\n",
                   accept);
  conn_write(c, head, (size_t)n, NULL, 0);
  c->ws = 1;
  uv_timer_stop(&c->idle); /* a WebSocket stays open while the front end runs */
}

static int path_is(const struct dmn_conn *c, const char *path) {
  size_t n = strcspn(c->url, "?#");
  return n == strlen(path) && !strncmp(c->url, path, n);
}

static const char *status_line(int st) {
  switch (st) {
  case 200: return "200 OK";
  case 400: return "400 Bad Request";
  case 404: return "404 Not Found";
  default: return "500 Internal Server Error";
  }
}

/* one RPC call over HTTP: a JSON or XML body, or a GET's query */
static void rpc_answer(struct dmn_conn *c, enum dmn_rpc_kind kind) {
  const char *in = c->body ? c->body : "", *ctype = NULL;
  size_t len = c->body_len;
  int st = 500;
  if (kind == DMN_RPC_JSON_GET) {
    c->url[strcspn(c->url, "#")] = '\0';
    in = strchr(c->url, '?') ? strchr(c->url, '?') : "";
    len = strlen(in);
  }
  char *ans = c->h->cfg.rpc(c->h->cfg.arg, kind, in, len, &st, &ctype);
  respond(c, status_line(st), "", ans ? ctype : NULL, ans ? ans : "", ans ? strlen(ans) : 0);
  free(ans);
}

/* GET of a status page file (page.c): answered, 1; else 0 */
static int serve_page(struct dmn_conn *c) {
  struct dmn_page_file f;
  if (llhttp_get_method(&c->parser) != HTTP_GET || c->ws_upgrade || !dmn_page_find(c->url, &f))
    return 0;
  respond(c, "200 OK", dmn_page_headers, f.ctype, f.body, f.len);
  return 1;
}

static void handle_request(struct dmn_conn *c) {
  int method = llhttp_get_method(&c->parser);
  int json = path_is(c, "/jsonrpc"), xml = path_is(c, "/rpc");
  if (c->finishing || c->closing)
    return;
  if (!c->too_big && serve_page(c))
    return;
  if (c->too_big)
    respond_error(c, "413 Request Entity Too Large");
  else if (c->url_long)
    respond_error(c, "414 URI Too Long");
  else if (method == HTTP_OPTIONS)
    preflight(c);
  else if (json && method == HTTP_GET && c->ws_upgrade)
    upgrade(c);
  else if ((json || xml) && (method == HTTP_POST || (json && method == HTTP_GET)))
    rpc_answer(c, xml ? DMN_RPC_XML : method == HTTP_GET ? DMN_RPC_JSON_GET : DMN_RPC_JSON);
  else if (json || xml)
    respond_error(c, "405 Method Not Allowed");
  else
    respond_error(c, "404 Not Found");
}

static struct dmn_conn *of(llhttp_t *p) { return p->data; }

static int append(char *dst, size_t *len, size_t cap, const char *at, size_t n) {
  size_t room = cap - 1 - *len;
  memcpy(dst + *len, at, n < room ? n : room);
  *len += n < room ? n : room;
  dst[*len] = '\0';
  return 0;
}

static int head_budget(struct dmn_conn *c, size_t n) {
  c->head_bytes += n;
  return c->head_bytes > HEADER_MAX ? -1 : 0;
}

static int on_message_begin(llhttp_t *p) {
  struct dmn_conn *c = of(p);
  c->head_bytes = c->url_len = c->field_len = c->value_len = c->body_len = 0;
  c->url[0] = c->ws_key[0] = c->acrh[0] = '\0';
  c->ws_upgrade = c->ws_version_ok = c->too_big = c->url_long = 0;
  uv_timer_again(&c->idle);
  return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t n) {
  struct dmn_conn *c = of(p);
  c->url_long |= c->url_len + n >= sizeof c->url;
  return head_budget(c, n) ? -1 : append(c->url, &c->url_len, sizeof c->url, at, n);
}

static int on_field(llhttp_t *p, const char *at, size_t n) {
  struct dmn_conn *c = of(p);
  return head_budget(c, n) ? -1 : append(c->field, &c->field_len, sizeof c->field, at, n);
}

static int on_value(llhttp_t *p, const char *at, size_t n) {
  struct dmn_conn *c = of(p);
  return head_budget(c, n) ? -1 : append(c->value, &c->value_len, sizeof c->value, at, n);
}

static void copy(char *dst, size_t cap, const char *src, size_t n) {
  n = n < cap - 1 ? n : cap - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* keeps what the server acts on: the WebSocket handshake and the preflight's headers */
static int on_value_complete(llhttp_t *p) {
  struct dmn_conn *c = of(p);
  if (!strcasecmp(c->field, "Upgrade"))
    c->ws_upgrade = !strcasecmp(c->value, "websocket");
  else if (!strcasecmp(c->field, "Sec-WebSocket-Key"))
    copy(c->ws_key, sizeof c->ws_key, c->value, c->value_len);
  else if (!strcasecmp(c->field, "Sec-WebSocket-Version"))
    c->ws_version_ok = !strcmp(c->value, "13");
  else if (!strcasecmp(c->field, "Access-Control-Request-Headers"))
    copy(c->acrh, sizeof c->acrh, c->value, c->value_len);
  c->field_len = c->value_len = 0;
  c->field[0] = c->value[0] = '\0';
  return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t n) {
  struct dmn_conn *c = of(p);
  if (c->too_big || c->body_len + n > c->h->cfg.max_body) {
    c->too_big = 1; /* answered 413 at the end; the bytes are not kept */
    return 0;
  }
  if (c->body_len + n > c->body_cap) {
    size_t cap = c->body_cap ? c->body_cap : 4096;
    while (cap < c->body_len + n)
      cap *= 2;
    char *b = realloc(c->body, cap);
    if (!b)
      return -1;
    c->body = b;
    c->body_cap = cap;
  }
  memcpy(c->body + c->body_len, at, n);
  c->body_len += n;
  return 0;
}

static int on_message_complete(llhttp_t *p) {
  handle_request(of(p));
  return 0;
}

static llhttp_settings_t settings;
static void settings_init(void) {
  llhttp_settings_init(&settings);
  settings.on_message_begin = on_message_begin;
  settings.on_url = on_url;
  settings.on_header_field = on_field;
  settings.on_header_value = on_value;
  settings.on_header_value_complete = on_value_complete;
  settings.on_body = on_body;
  settings.on_message_complete = on_message_complete;
}

static void ws_send(struct dmn_conn *c, int op, const void *p, size_t n) {
  uint8_t hdr[10];
  size_t hl = dmn_ws_header(hdr, op, n);
  conn_write(c, hdr, hl, p, n);
}

/* a close frame with code (RFC 6455 7.4), then the connection ends */
static void ws_close(struct dmn_conn *c, unsigned code) {
  uint8_t b[2] = {(uint8_t)(code >> 8), (uint8_t)code};
  ws_send(c, DMN_WS_CLOSE, b, 2);
  conn_finish(c);
}

static void ws_message(struct dmn_conn *c, const char *p, size_t n) {
  int status;
  const char *ctype;
  char *ans = c->h->cfg.rpc(c->h->cfg.arg, DMN_RPC_JSON, p, n, &status, &ctype);
  if (ans)
    ws_send(c, DMN_WS_TEXT, ans, strlen(ans));
  free(ans);
}

/* joins a fragment to the message being built; 0, or the close code */
static unsigned ws_fragment(struct dmn_conn *c, const struct dmn_ws_frame *f) {
  if (c->msg_len + f->len > c->h->cfg.max_body)
    return 1009;
  char *m = realloc(c->msg, c->msg_len + f->len + 1);
  if (!m)
    return 1011;
  c->msg = m;
  memcpy(c->msg + c->msg_len, f->payload, f->len);
  c->msg_len += f->len;
  if (f->fin) {
    ws_message(c, c->msg, c->msg_len);
    free(c->msg);
    c->msg = NULL;
    c->msg_len = 0;
  }
  return 0;
}

/* one frame: 0 to go on, or the close code to end with (-1: closed already) */
static int ws_frame(struct dmn_conn *c, const struct dmn_ws_frame *f) {
  switch (f->opcode) {
  case DMN_WS_PING: ws_send(c, DMN_WS_PONG, f->payload, f->len); return 0;
  case DMN_WS_PONG: return 0;
  case DMN_WS_CLOSE:
    ws_send(c, DMN_WS_CLOSE, f->payload, f->len >= 2 ? 2 : 0);
    conn_finish(c);
    return -1;
  case DMN_WS_BIN: return 1003;
  case DMN_WS_TEXT:
    if (c->msg)
      return 1002;
    if (f->fin) {
      ws_message(c, (const char *)f->payload, f->len);
      return 0;
    }
    c->msg = malloc(1);
    if (!c->msg)
      return 1011;
    return (int)ws_fragment(c, f);
  default: /* continuation */ return c->msg ? (int)ws_fragment(c, f) : 1002;
  }
}

static void ws_input(struct dmn_conn *c, const char *data, size_t n) {
  size_t cap = c->h->cfg.max_body + 14; /* one whole frame and its header */
  if (c->in_len + n > cap) {
    ws_close(c, 1009);
    return;
  }
  uint8_t *in = realloc(c->in, c->in_len + n);
  if (!in) {
    ws_close(c, 1011);
    return;
  }
  c->in = in;
  memcpy(c->in + c->in_len, data, n);
  c->in_len += n;
  size_t off = 0;
  while (!c->finishing && !c->closing) {
    struct dmn_ws_frame f;
    long r = dmn_ws_parse(c->in + off, c->in_len - off, c->h->cfg.max_body, &f);
    if (r == 0)
      break;
    int code = r < 0 ? 1002 : ws_frame(c, &f);
    if (code > 0)
      ws_close(c, (unsigned)code);
    if (code)
      return;
    off += (size_t)r;
  }
  memmove(c->in, c->in + off, c->in_len - off);
  c->in_len -= off;
}

/* a request that does not parse, or whose head is too large: answered, then closed */
static void http_refuse(struct dmn_conn *c, const char *status) {
  char head[256];
  int n = snprintf(head, sizeof head, "HTTP/1.1 %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status);
  conn_write(c, head, (size_t)n, NULL, 0);
  conn_finish(c);
}

static void http_input(struct dmn_conn *c, const char *data, size_t n) {
  llhttp_errno_t err = llhttp_execute(&c->parser, data, n);
  if (err == HPE_OK || c->closing)
    return;
  if (err == HPE_PAUSED_UPGRADE && c->ws) {
    size_t used = (size_t)(llhttp_get_error_pos(&c->parser) - data);
    if (used < n)
      ws_input(c, data + used, n - used);
  } else if (err == HPE_PAUSED_UPGRADE)
    conn_finish(c); /* an upgrade to something else was answered as a plain request */
  else
    http_refuse(c, c->head_bytes > HEADER_MAX ? "431 Request Header Fields Too Large" : "400 Bad Request");
}

static void on_alloc(uv_handle_t *hd, size_t suggested, uv_buf_t *b) {
  (void)hd, (void)suggested;
  b->base = malloc(65536);
  b->len = b->base ? 65536 : 0;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  struct dmn_conn *c = s->data;
  if (n < 0)
    conn_close(c);
  else if (n > 0 && !c->finishing && c->ws)
    ws_input(c, buf->base, (size_t)n);
  else if (n > 0 && !c->finishing)
    http_input(c, buf->base, (size_t)n);
  free(buf->base);
}

static void on_idle(uv_timer_t *t) {
  struct dmn_conn *c = t->data;
  if (!c->ws)
    conn_close(c);
}

static void on_connection(uv_stream_t *srv, int status) {
  struct dmn_httpd *h = srv->data;
  struct dmn_conn *c = status < 0 ? NULL : calloc(1, sizeof *c);
  if (!c)
    return;
  c->h = h;
  uv_tcp_init(h->loop, &c->tcp);
  c->tcp.data = c;
  c->open_handles = 1;
  if (uv_accept(srv, (uv_stream_t *)&c->tcp) < 0 || h->nconns >= h->cfg.max_conns) {
    c->closing = 1; /* over the limit: closed at once, never read */
    uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
    return;
  }
  uv_timer_init(h->loop, &c->idle);
  c->idle.data = c;
  c->open_handles = 2;
  c->next = h->conns;
  if (h->conns)
    h->conns->prev = c;
  h->conns = c;
  h->nconns++;
  llhttp_init(&c->parser, HTTP_REQUEST, &settings);
  c->parser.data = c;
  uv_timer_start(&c->idle, on_idle, h->cfg.idle_ms, h->cfg.idle_ms);
  uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

/* listens on one address; 0, or a negative libuv error */
static int listen_on(struct dmn_httpd *h, const char *ip, int v6) {
  uv_tcp_t *l = &h->lsn[h->nlsn];
  struct sockaddr_storage sa;
  int rc = v6 ? uv_ip6_addr(ip, h->cfg.port, (struct sockaddr_in6 *)&sa)
              : uv_ip4_addr(ip, h->cfg.port, (struct sockaddr_in *)&sa);
  if (rc < 0)
    return rc;
  uv_tcp_init(h->loop, l);
  l->data = h;
  rc = uv_tcp_bind(l, (struct sockaddr *)&sa, v6 ? UV_TCP_IPV6ONLY : 0);
  if (rc == 0)
    rc = uv_listen((uv_stream_t *)l, 128, on_connection);
  if (rc < 0) {
    uv_close((uv_handle_t *)l, NULL);
    return rc;
  }
  h->nlsn++;
  return 0;
}

int dmn_httpd_start(struct dmn_httpd *h, uv_loop_t *loop, const struct dmn_httpd_cfg *cfg, char *err, size_t errlen) {
  memset(h, 0, sizeof *h);
  h->loop = loop;
  h->cfg = *cfg;
  settings_init();
  int r4 = listen_on(h, cfg->listen_all ? "0.0.0.0" : "127.0.0.1", 0);
  int r6 = listen_on(h, cfg->listen_all ? "::" : "::1", 1);
  if (r4 < 0 && h->nlsn == 0) {
    snprintf(err, errlen, "cannot listen on port %d: %s", cfg->port, uv_strerror(r4));
    return -1;
  }
  (void)r6; /* a host without IPv6 serves IPv4 only */
  return 0;
}

void dmn_httpd_broadcast(struct dmn_httpd *h, const char *text) {
  for (struct dmn_conn *c = h->conns; c; c = c->next)
    if (c->ws && !c->finishing)
      ws_send(c, DMN_WS_TEXT, text, strlen(text));
}

void dmn_httpd_close(struct dmn_httpd *h) {
  for (int i = 0; i < h->nlsn; i++)
    uv_close((uv_handle_t *)&h->lsn[i], NULL);
  h->nlsn = 0;
  /* each connection ends once its queued answers went out (the shutdown call's "OK") */
  for (struct dmn_conn *c = h->conns; c; c = c->next)
    conn_finish(c);
}
