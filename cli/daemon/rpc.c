/* JSON-RPC 2.0 framing as aria2 does it: single and batch requests, the token, system.* (rpc.h). */
#include "rpc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    set_err(e, 1, json_array_size(params) ? "The parameter at 0 has wrong type."
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
    json_array_append_new(res, v ? json_pack("[o]", v) : json_pack("{s:i, s:s}", "code", ce.code, "message", ce.msg));
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
    return json_pack("[s, s, s, s, s, s]", "aria2.onDownloadStart", "aria2.onDownloadPause",
                     "aria2.onDownloadStop", "aria2.onDownloadComplete", "aria2.onDownloadError",
                     "aria2.onBtDownloadComplete");
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

char *dmn_rpc_handle(struct dmn_rpc *r, const char *body, size_t len, int *status) {
  json_error_t je;
  json_t *req = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je), *out;
  *status = 200;
  if (!req) {
    out = json_pack("{s:n, s:s, s:{s:i, s:s}}", "id", "jsonrpc", "2.0", "error", "code", -32700,
                    "message", "Parse error.");
    *status = 500;
  } else if (json_is_array(req)) {
    out = json_array();
    for (size_t i = 0; i < json_array_size(req); i++)
      json_array_append_new(out, answer(r, json_array_get(req, i)));
  } else {
    out = answer(r, req);
    *status = json_object_get(out, "error") ? 400 : 200;
  }
  char *s = json_dumps(out, JSON_COMPACT);
  json_decref(out);
  json_decref(req);
  return s;
}
