/* aria2's JSON-RPC 2.0 on the daemon's queue: one body (a request or a batch) in, its answer out; the secret token, system.multicall and aria2's error codes and messages. Pure apart from the hooks it is given. Runs on the daemon's loop thread. */
#ifndef DMN_RPC_H
#define DMN_RPC_H
#include <jansson.h>
#include <stdint.h>

#include "queue.h"

struct dmn_rpc {
  struct dmn_q *q;
  json_t *global;                         /* the global options (aria2 names, string values) */
  const char *secret;                     /* rpc-secret, NULL or "" when none */
  const char *version;                    /* the daemon's version, shown beside aria2's */
  char session_id[41];                    /* 40 hex digits (getSessionInfo) */
  uint64_t (*new_gid)(void *arg);         /* a fresh GID (never 0) */
  void (*shutdown)(void *arg, int force); /* shutdown / forceShutdown */
  int (*save)(void *arg);                 /* saveSession: 0, or -1 */
  void *arg;
  int xml; /* the call came over XML-RPC: system.multicall's errors are
              faultCode/faultString structs (set by xmlrpc.c) */
};

/* One error: aria2 answers almost every failure with code 1 and a sentence. */
struct dmn_err {
  int code;
  char msg[320];
};

/* Handles a JSON-RPC body of len bytes. Returns the answer's text (the caller frees it) and in
 * *status the HTTP status aria2 sends it with: 200, 400 for a single request's error, 500 for
 * a body that is not JSON. */
char *dmn_rpc_handle(struct dmn_rpc *r, const char *body, size_t len, int *status);
/* Handles JSON-RPC over GET as aria2 does: query is the request target's part from '?'
 * (method=, id=, params= base64 of the params array, or of a whole batch without method and
 * id; jsoncallback= for JSONP). Returns the answer's text (callback(...) with JSONP; the caller
 * frees it), *status as dmn_rpc_handle and *script set when it is JSONP (text/javascript). A
 * query that does not parse, or a callback that is not a name, answers Invalid Request (400),
 * as aria2 1.36 does. */
char *dmn_rpc_handle_get(struct dmn_rpc *r, const char *query, int *status, int *script);
/* Runs one call: method with params (an array, token still first). The result (a new
 * reference), or NULL with *e filled. */
json_t *dmn_rpc_call(struct dmn_rpc *r, const char *method, json_t *params, struct dmn_err *e);
/* 1 when a and b are equal, compared in time that does not depend on where they differ. */
int dmn_rpc_secret_eq(const char *a, const char *b);

/* A GID as aria2 writes it: 16 lowercase hex digits and a NUL. */
void dmn_gid_fmt(uint64_t gid, char out[17]);
/* Parses exactly 16 hex digits: 0, or -1. */
int dmn_gid_parse(const char *s, uint64_t *gid);
/* The download whose GID starts with the hex digits s (1 to 16, aria2 takes a unique prefix):
 * found, or NULL with aria2's error: "Invalid GID s", "GID s is not found", "GID s is not
 * unique". */
struct dmn_dl *dmn_gid_expand(const struct dmn_q *q, const char *s, struct dmn_err *e);

/* The methods (methods.c): the handler of an aria2 method name, NULL when unknown; and every
 * name, for system.listMethods. params has the token removed. */
typedef json_t *(*dmn_method_fn)(struct dmn_rpc *r, json_t *params, struct dmn_err *e);
dmn_method_fn dmn_method_find(const char *name);
json_t *dmn_method_names(void);
/* aria2's download status object of d, only keys when keys is a non-empty array (status.c). */
json_t *dmn_status_json(struct dmn_rpc *r, struct dmn_dl *d, const json_t *keys);
/* The "files" array of d (status.c). */
json_t *dmn_files_json(struct dmn_rpc *r, const struct dmn_dl *d);

#endif
