/* JSON-RPC 2.0 framing as aria2 does it: single and batch requests over POST, GET and JSONP, the token, GID prefixes, system.* (rpc.h). */
#include "rpc.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha1.h"

static void set_err(struct dmn_err *e, int code, const char *msg) {
  e->code = code;
  snprintf(e->msg, sizeof e->msg, "%s", msg);
}

void dmn_gid_fmt(uint64_t gid, char out[17]) { snprintf(out, 17, "%016" PRIx64, gid); }

int dmn_gid_parse(const char *s, uint64_t *gid) {
  if (!s || strlen(s) != 16 || strspn(s, "0123456789abcdefABCDEF") != 16)
    return -1;
  *gid = strtoull(s, NULL, 16);
  return 0;
}

/* the download of gid prefix p (shifted to the top bits, mask over its digits) in list l: counts
 * matches into *n, the last one into *found */
static void match_prefix(const struct dmn_list *l, uint64_t p, uint64_t mask, size_t *n, struct dmn_dl **found) {
  for (size_t i = 0; i < l->n; i++)
    if ((l->v[i]->gid & mask) == p) {
      ++*n;
      *found = l->v[i];
    }
}

struct dmn_dl *dmn_gid_expand(const struct dmn_q *q, const char *s, struct dmn_err *e) {
  size_t len = strlen(s), n = 0;
  struct dmn_dl *found = NULL;
  if (len == 0 || len > 16 || strspn(s, "0123456789abcdefABCDEF") != len) {
    snprintf(e->msg, sizeof e->msg, "Invalid GID %s", s);
    e->code = 1;
    return NULL;
  }
  unsigned shift = 64 - 4 * (unsigned)len; /* 0 to 60 */
  uint64_t p = strtoull(s, NULL, 16) << shift, mask = ~((UINT64_C(1) << shift) - 1);
  match_prefix(&q->active, p, mask, &n, &found);
  match_prefix(&q->waiting, p, mask, &n, &found);
  match_prefix(&q->stopped, p, mask, &n, &found);
  if (n == 1)
    return found;
  snprintf(e->msg, sizeof e->msg, n ? "GID %s is not unique" : "GID %s is not found", s);
  e->code = 1;
  return NULL;
}

int dmn_rpc_secret_eq(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  unsigned diff = la != lb;
  /* every byte of the secret a is read whatever b is */
  for (size_t i = 0; i < la; i++)
    diff |= (unsigned char)a[i] ^ (unsigned char)(i < lb ? b[i] : 0);
  return diff == 0;
}

/* params without a leading "token:..." string; -1 (Unauthorized) when a secret is set and the
 * token is missing or wrong. Returns a new reference in *out. */
static int strip_token(struct dmn_rpc *r, json_t *params, int needs, json_t **out) {
  const char *t = json_string_value(json_array_get(params, 0));
  int has = t && !strncmp(t, "token:", 6);
  if (needs && r->secret && *r->secret && !(has && dmn_rpc_secret_eq(r->secret, t + 6)))
    return -1;
  *out = json_array();
  for (size_t i = has ? 1 : 0; i < json_array_size(params); i++)
    json_array_append(*out, json_array_get(params, i));
  return 0;
}

static json_t *multicall(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  json_t *calls = json_array_get(params, 0);
  if (!json_is_array(calls)) {
    set_err(e, 1,
            json_array_size(params) ? "The parameter at 0 has wrong type."
                                    : "The parameter at 0 is required but missing.");
    return NULL;
  }
  json_t *res = json_array();
  for (size_t i = 0; i < json_array_size(calls); i++) {
    json_t *c = json_array_get(calls, i);
    const char *m = json_string_value(json_object_get(c, "methodName"));
    json_t *p = json_object_get(c, "params");
    struct dmn_err ce = {0, ""};
    json_t *v = NULL;
    if (!m || (p && !json_is_array(p)))
      set_err(&ce, 1, "Missing methodName or params");
    else if (!strcmp(m, "system.multicall"))
      set_err(&ce, 1, "Recursive system.multicall forbidden.");
    else {
      json_t *empty = p ? NULL : json_array();
      v = dmn_rpc_call(r, m, p ? p : empty, &ce);
      json_decref(empty);
    }
    json_array_append_new(res, v ? json_pack("[o]", v)
                                 : json_pack("{s:i, s:s}", r->xml ? "faultCode" : "code", ce.code,
                                             r->xml ? "faultString" : "message", ce.msg));
  }
  return res;
}

json_t *dmn_rpc_call(struct dmn_rpc *r, const char *method, json_t *params, struct dmn_err *e) {
  int sys = !strncmp(method, "system.", 7);
  if (!strcmp(method, "system.multicall"))
    return multicall(r, params, e);
  if (!strcmp(method, "system.listMethods"))
    return dmn_method_names();
  if (!strcmp(method, "system.listNotifications"))
    return json_pack("[s, s, s, s, s, s]", "aria2.onDownloadStart", "aria2.onDownloadPause", "aria2.onDownloadStop",
                     "aria2.onDownloadComplete", "aria2.onDownloadError", "aria2.onBtDownloadComplete");
  dmn_method_fn fn = sys ? NULL : dmn_method_find(method);
  if (!fn) {
    snprintf(e->msg, sizeof e->msg, "No such method: %s", method);
    e->code = 1;
    return NULL;
  }
  json_t *p;
  if (strip_token(r, params, 1, &p) < 0) {
    set_err(e, 1, "Unauthorized");
    return NULL;
  }
  json_t *v = fn(r, p, e);
  json_decref(p);
  return v;
}

/* the answer object to one request object */
static json_t *answer(struct dmn_rpc *r, json_t *req) {
  json_t *id = json_object_get(req, "id");
  json_t *ans = json_pack("{s:O?, s:s}", "id", id ? id : json_null(), "jsonrpc", "2.0");
  const char *m = json_string_value(json_object_get(req, "method"));
  json_t *params = json_object_get(req, "params");
  struct dmn_err e = {0, ""};
  json_t *v = NULL;
  if (!json_is_object(req) || !m)
    set_err(&e, -32600, "Invalid Request.");
  else if (params && !json_is_array(params))
    set_err(&e, -32602, "Invalid params.");
  else {
    json_t *empty = params ? NULL : json_array();
    v = dmn_rpc_call(r, m, params ? params : empty, &e);
    json_decref(empty);
  }
  if (v)
    json_object_set_new(ans, "result", v);
  else
    json_object_set_new(ans, "error", json_pack("{s:i, s:s}", "code", e.code, "message", e.msg));
  return ans;
}

/* aria2's HTTP status for a single request's answer: by its error code */
static int status_of(const json_t *ans) {
  json_t *err = json_object_get(ans, "error");
  json_int_t code = json_integer_value(json_object_get(err, "code"));
  if (!err)
    return 200;
  return code == 1 || code == -32600 ? 400 : code == -32601 ? 404 : 500;
}

/* the answer to a parsed body (NULL: it did not parse), wrapped in callback(...) when given */
static char *handle(struct dmn_rpc *r, json_t *req, const char *callback, int *status) {
  json_t *out;
  *status = 200;
  if (!req) {
    out = json_pack("{s:n, s:s, s:{s:i, s:s}}", "id", "jsonrpc", "2.0", "error", "code", -32700, "message",
                    "Parse error.");
    *status = 500;
  } else if (json_is_array(req)) {
    out = json_array();
    for (size_t i = 0; i < json_array_size(req); i++)
      json_array_append_new(out, answer(r, json_array_get(req, i)));
  } else {
    out = answer(r, req);
    *status = status_of(out);
  }
  char *s = json_dumps(out, JSON_COMPACT), *w = NULL;
  json_decref(out);
  if (s && callback && asprintf(&w, "%s(%s)", callback, s) < 0)
    w = NULL;
  if (callback) {
    free(s);
    s = w;
  }
  return s;
}

char *dmn_rpc_handle(struct dmn_rpc *r, const char *body, size_t len, int *status) {
  json_error_t je;
  json_t *req = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
  char *s = handle(r, req, NULL, status);
  json_decref(req);
  return s;
}

/* %XX sequences of s[0..n) decoded into a new string (aria2's percentDecode: '+' stays) */
static char *percent_decode(const char *s, size_t n) {
  char *o = malloc(n + 1);
  size_t k = 0;
  for (size_t i = 0; o && i < n; i++) {
    if (s[i] == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) && isxdigit((unsigned char)s[i + 2])) {
      char hex[3] = {s[i + 1], s[i + 2], 0};
      o[k++] = (char)strtol(hex, NULL, 16);
      i += 2;
    } else
      o[k++] = s[i];
  }
  if (o)
    o[k] = '\0';
  return o;
}

/* the value of name= in the query (after '?', '&'-separated): a pointer and its length */
static const char *query_get(const char *q, const char *name, size_t *len) {
  size_t nl = strlen(name);
  for (const char *p = q; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL)
    if (!strncmp(p, name, nl) && p[nl] == '=') {
      *len = strcspn(p + nl + 1, "&");
      return p + nl + 1;
    }
  return NULL;
}

/* the params= value: percent-decoded, then base64-decoded; a new string */
static char *get_params(const char *q) {
  size_t n = 0;
  const char *v = query_get(q, "params", &n);
  char *pd = percent_decode(v ? v : "", v ? n : 0);
  char *out = pd ? malloc(strlen(pd) / 4 * 3 + 4) : NULL;
  if (out)
    out[dmn_base64_decode(pd, strlen(pd), (uint8_t *)out)] = '\0';
  free(pd);
  return out;
}

/* the request object aria2 builds from method=, id= (always a string) and params=; a query
 * without method and id is the params text itself (a batch). NULL: it does not parse. */
static json_t *get_request(const char *q) {
  size_t ml = 0, il = 0;
  const char *m = query_get(q, "method", &ml), *id = query_get(q, "id", &il);
  size_t pl = 0;
  int given = query_get(q, "params", &pl) && pl > 0; /* then it must parse, even if empty */
  char *params = get_params(q);
  json_error_t je;
  json_t *req = NULL, *p = NULL;
  if (!params)
    return NULL;
  if (!ml && !il)
    req = json_loads(params, JSON_REJECT_DUPLICATES, &je);
  else if (ml && (!given || (p = json_loads(params, JSON_REJECT_DUPLICATES, &je)))) {
    req = json_pack("{s:s%}", "method", m, ml); /* method first: "{,"id"..." is aria2's parse error */
    if (il)
      json_object_set_new(req, "id", json_stringn(id, il));
    if (p)
      json_object_set_new(req, "params", p);
  }
  free(params);
  return req;
}

/* a JSONP callback names a function: letters, digits, '_', '$' and '.' only */
static int callback_ok(const char *c, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)c[i]) && !strchr("_$.", c[i]))
      return 0;
  return n > 0 && n <= 128;
}

char *dmn_rpc_handle_get(struct dmn_rpc *r, const char *query, int *status, int *script) {
  const char *q = *query == '?' ? query + 1 : "";
  size_t cl = 0;
  const char *cb = query_get(q, "jsoncallback", &cl);
  char callback[129];
  json_t *req = get_request(q);
  *script = cb && cl > 0;
  if (*script && !callback_ok(cb, cl)) {
    json_decref(req); /* answered Invalid Request, without the callback */
    req = NULL;
    *script = 0;
  }
  if (!req) /* aria2 1.36 loses a GET's parse error: it answers Invalid Request */
    req = json_object();
  snprintf(callback, sizeof callback, "%.*s", (int)cl, cb ? cb : "");
  char *s = handle(r, req, *script ? callback : NULL, status);
  json_decref(req);
  return s;
}
