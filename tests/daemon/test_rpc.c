/* aria2's JSON-RPC on the daemon's queue (cli/daemon/rpc.c, methods.c, status.c, queue.c) with a fake engine: the token, batches, system.*, every method's result types, aria2's error messages, the queue's transitions and notifications. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "options.h"
#include "rpc.h"

static struct dmn_q q;
static struct dmn_rpc r;
static json_t *global;
static char events[2048]; /* notifications, "Start:gid4 Pause:gid4 ..." */
static unsigned started, stopped_calls;
static uint64_t next_gid;

static int f_start(void *ctx, struct dmn_dl *d, char *err, size_t n) {
  (void)ctx, (void)err, (void)n;
  started++;
  d->xfer = d;
  d->total = 1000;
  return 0;
}
/* the end reported at once, from inside the stop call, as the hardest case for the queue */
static void f_stop(void *ctx, struct dmn_dl *d) {
  (void)ctx;
  stopped_calls++;
  d->xfer = NULL;
  dmn_q_ended(&q, d, 0, 1, "cancelled");
}
static void f_notify(void *arg, const char *ev, uint64_t gid) {
  (void)arg;
  char g[17];
  dmn_gid_fmt(gid, g);
  size_t n = strlen(events);
  snprintf(events + n, sizeof events - n, "%s:%s ", ev + strlen("aria2.onDownload"), g + 12);
}
static uint64_t f_gid(void *arg) {
  (void)arg;
  return ++next_gid;
}

static void setup(void) {
  struct dmn_engine_ops ops = {f_start, f_stop, NULL, NULL, NULL, NULL};
  dmn_q_init(&q, &ops, f_notify, NULL);
  global = dmn_opt_defaults();
  json_object_set_new(global, "dir", json_string("/dl"));
  memset(&r, 0, sizeof r);
  r.q = &q;
  r.global = global;
  r.secret = "s3";
  r.version = "0.1.0";
  strcpy(r.session_id, "00112233445566778899aabbccddeeff00112233");
  r.new_gid = f_gid;
  events[0] = '\0';
  started = stopped_calls = 0;
  next_gid = 0;
}
static void teardown(void) {
  dmn_q_free(&q);
  json_decref(global);
}
TestSuite(rpc, .init = setup, .fini = teardown);

/* the answer to a body, parsed */
static int http_status;
static json_t *call(const char *body) {
  char *s = dmn_rpc_handle(&r, body, strlen(body), &http_status);
  cr_assert(s, "no answer to %s", body);
  json_t *j = json_loads(s, 0, NULL);
  cr_assert(j, "answer does not parse: %s", s);
  free(s);
  return j;
}

/* one method's result (params as JSON text, the token put first); the error checked absent */
static json_t *result(const char *method, const char *params) {
  char body[2048];
  snprintf(body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"%s\",\"params\":[\"token:s3\"%s%s]}", method,
           *params ? "," : "", params);
  json_t *a = call(body);
  json_t *res = json_incref(json_object_get(a, "result"));
  cr_assert(res, "%s(%s) failed: %s", method, params, json_dumps(json_object_get(a, "error"), 0));
  json_decref(a);
  return res;
}

/* the error message of a call that must fail with code */
static void expect_error(const char *method, const char *params, int code, const char *msg) {
  char body[2048];
  snprintf(body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"%s\",\"params\":[\"token:s3\"%s%s]}", method,
           *params ? "," : "", params);
  json_t *a = call(body), *e = json_object_get(a, "error");
  cr_assert(e, "%s(%s) did not fail", method, params);
  cr_expect_eq(json_integer_value(json_object_get(e, "code")), code, "%s(%s) code", method, params);
  cr_expect_str_eq(json_string_value(json_object_get(e, "message")), msg, "%s(%s)", method, params);
  json_decref(a);
}

static const char *str(json_t *o, const char *k) {
  const char *v = json_string_value(json_object_get(o, k));
  cr_assert(v, "%s is not a string", k);
  return v;
}

Test(rpc, token_and_framing) {
  json_t *a = call("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"aria2.getVersion\",\"params\":[\"token:bad\"]}");
  cr_expect_str_eq(json_string_value(json_object_get(a, "id")), "x");
  cr_expect_eq(json_integer_value(json_object_get(json_object_get(a, "error"), "code")), 1);
  cr_expect_str_eq(json_string_value(json_object_get(json_object_get(a, "error"), "message")), "Unauthorized");
  cr_expect_eq(http_status, 400, "an error answer goes with 400, as aria2's");
  json_decref(a);
  a = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"aria2.getVersion\"}");
  cr_expect(json_object_get(a, "error"), "no token with a secret set");
  json_decref(a);
  a = call("nonsense");
  cr_expect_eq(json_integer_value(json_object_get(json_object_get(a, "error"), "code")), -32700);
  cr_expect(json_is_null(json_object_get(a, "id")));
  cr_expect_eq(http_status, 500);
  json_decref(a);
  a = call("{\"jsonrpc\":\"2.0\",\"id\":1}");
  cr_expect_eq(json_integer_value(json_object_get(json_object_get(a, "error"), "code")), -32600);
  json_decref(a);
  a = call("[]");
  cr_expect(json_is_array(a) && json_array_size(a) == 0, "an empty batch answers []");
  json_decref(a);
  expect_error("aria2.foo", "", 1, "No such method: aria2.foo");
  r.secret = NULL; /* no secret: a token given anyway is removed, none needed */
  json_decref(result("aria2.getVersion", ""));
  a = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"aria2.getGlobalStat\",\"params\":[]}");
  cr_expect(json_object_get(a, "result"));
  json_decref(a);
}

Test(rpc, secret_compare) {
  cr_expect(dmn_rpc_secret_eq("abc", "abc"));
  cr_expect(!dmn_rpc_secret_eq("abc", "abd"));
  cr_expect(!dmn_rpc_secret_eq("abc", "ab"));
  cr_expect(!dmn_rpc_secret_eq("abc", "abcd"));
  cr_expect(!dmn_rpc_secret_eq("", "a"));
  cr_expect(dmn_rpc_secret_eq("", ""));
}

Test(rpc, batch_and_system) {
  json_t *a = call("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"system.listNotifications\"},"
                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"aria2.getVersion\",\"params\":[\"token:s3\"]},"
                   "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"aria2.getVersion\"}]");
  cr_assert_eq(json_array_size(a), 3);
  cr_expect_eq(http_status, 200, "a batch goes with 200 whatever its parts");
  cr_expect_eq(json_array_size(json_object_get(json_array_get(a, 0), "result")), 6);
  cr_expect_str_eq(str(json_object_get(json_array_get(a, 1), "result"), "version"), "1.36.0");
  cr_expect(json_object_get(json_array_get(a, 2), "error"), "the third has no token");
  cr_expect_eq(json_integer_value(json_object_get(json_array_get(a, 2), "id")), 3);
  json_decref(a);
  a = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"system.multicall\",\"params\":[["
           "{\"methodName\":\"aria2.getVersion\",\"params\":[\"token:s3\"]},{\"methodName\":\"aria2.getVersion\"},"
           "{\"methodName\":\"aria2.nope\",\"params\":[\"token:s3\"]}]]}");
  json_t *res = json_object_get(a, "result");
  cr_assert_eq(json_array_size(res), 3);
  cr_expect(json_is_array(json_array_get(res, 0)), "a result comes wrapped in a list");
  cr_expect_str_eq(str(json_array_get(res, 1), "message"), "Unauthorized");
  cr_expect_str_eq(str(json_array_get(res, 2), "message"), "No such method: aria2.nope");
  json_decref(a);
  a = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"system.listMethods\"}");
  res = json_object_get(a, "result");
  static const char *const want[] = {"aria2.addUri",     "aria2.tellStatus",
                                     "aria2.getServers", "aria2.changeGlobalOption",
                                     "system.multicall", "aria2.forceShutdown"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    int found = 0;
    for (size_t k = 0; k < json_array_size(res); k++)
      found |= !strcmp(json_string_value(json_array_get(res, k)), want[i]);
    cr_expect(found, "listMethods lacks %s", want[i]);
  }
  json_decref(a);
}

Test(rpc, add_uri_errors) {
  expect_error("aria2.addUri", "", 1, "The parameter at 0 is required but missing.");
  expect_error("aria2.addUri", "\"x\"", 1, "The parameter at 0 has wrong type.");
  expect_error("aria2.addUri", "[]", 1, "URI is not provided.");
  expect_error("aria2.addUri", "[\"http://h/f\"],{\"out\":\"../x\"}", 1,
               "We encountered a problem while processing the option '--out'.");
  expect_error("aria2.addUri", "[\"http://h/f\"],{\"out\":\"/etc/x\"}", 1,
               "We encountered a problem while processing the option '--out'.");
  expect_error("aria2.addUri", "[\"http://h/f\"],{\"out\":\"a/../../x\"}", 1,
               "We encountered a problem while processing the option '--out'.");
  expect_error("aria2.addUri", "[\"http://h/f\"],{\"split\":\"abc\"}", 1,
               "We encountered a problem while processing the option '--split'.");
  expect_error("aria2.addUri", "[\"http://h/f\"],{\"checksum\":\"md5=00\"}", 1,
               "We encountered a problem while processing the option '--checksum'.");
  expect_error("aria2.addUri", "[\"ftp://h/f\"]", 1, "mhttp daemon downloads http and https URIs only: ftp://h/f");
  expect_error("aria2.addUri", "[\"http//h/f\"]", 1, "mhttp daemon downloads http and https URIs only: http//h/f");
  expect_error("aria2.addTorrent", "\"AAAA\"", 1,
               "BitTorrent and Metalink are not supported by mhttp daemon (HTTP and HTTPS only).");
  expect_error("aria2.tellStatus", "\"zz\"", 1, "Invalid GID zz");
  expect_error("aria2.tellStatus", "\"0123456789abcdef\"", 1, "GID 0123456789abcdef is not found");
  expect_error("aria2.remove", "\"0123456789abcdef\"", 1, "GID 0123456789abcdef is not found");
  cr_expect_eq(started, 0, "nothing was queued");
}

/* http and https as libcurl reads the scheme, in any case (aria2 1.36 queues "HTTP://" too); a
 * space left for the engine to judge, as aria2 takes it */
Test(rpc, add_uri_schemes) {
  const char *ok[] = {"[\"HTTP://h/f\"]", "[\"Https://h/f\"]", "[\"http://h/a b\"]"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    json_decref(result("aria2.addUri", ok[i]));
}

/* every value of a status object is a string, but files (a list) */
static void all_strings(json_t *st) {
  const char *k;
  json_t *v;
  json_object_foreach(st, k, v) cr_expect(json_is_string(v) || !strcmp(k, "files"), "%s is not a string", k);
}

Test(rpc, add_status_and_queue) {
  json_decref(result("aria2.changeGlobalOption", "{\"max-concurrent-downloads\":\"1\"}"));
  json_t *g1 =
      result("aria2.addUri", "[\"http://h/a.bin\",\"http://m/a.bin\"],{\"out\":\"sub/a.bin\",\"header\":[\"X: 1\"]}");
  json_t *g2 = result("aria2.addUri", "[\"http://h/b.bin\"]");
  cr_expect_str_eq(json_string_value(g1), "0000000000000001");
  cr_expect_eq(started, 1, "max-concurrent-downloads 1: one started");
  json_t *st = result("aria2.tellStatus", "\"0000000000000001\"");
  all_strings(st);
  cr_expect_str_eq(str(st, "status"), "active");
  cr_expect_str_eq(str(st, "totalLength"), "1000");
  cr_expect_str_eq(str(st, "dir"), "/dl");
  json_t *f = json_array_get(json_object_get(st, "files"), 0);
  cr_expect_str_eq(str(f, "index"), "1");
  cr_expect_eq(json_array_size(json_object_get(f, "uris")), 2, "the mirror is a second uri");
  json_decref(st);
  st = result("aria2.tellStatus", "\"0000000000000002\",[\"status\",\"gid\",\"nope\"]");
  cr_expect_eq(json_object_size(st), 2, "the keys filter");
  cr_expect_str_eq(str(st, "status"), "waiting");
  json_decref(st);
  json_t *opt = result("aria2.getOption", "\"0000000000000001\"");
  cr_expect_str_eq(str(opt, "out"), "sub/a.bin");
  cr_expect_str_eq(str(opt, "header"), "X: 1");
  cr_expect_str_eq(str(opt, "dir"), "/dl");
  json_decref(opt);
  json_decref(g1);
  json_decref(g2);
}

Test(rpc, transitions_and_notifications) {
  json_decref(result("aria2.changeGlobalOption", "{\"max-concurrent-downloads\":\"1\"}"));
  json_decref(result("aria2.addUri", "[\"http://h/a\"]"));
  json_decref(result("aria2.addUri", "[\"http://h/b\"]"));
  json_decref(result("aria2.addUri", "[\"http://h/c\"]"));
  json_decref(result("aria2.pause", "\"0000000000000002\"")); /* waiting -> paused */
  expect_error("aria2.pause", "\"0000000000000002\"", 1, "GID#0000000000000002 cannot be paused now");
  json_decref(result("aria2.forcePause", "\"0000000000000001\"")); /* active -> paused; 3 starts */
  json_t *w = result("aria2.tellWaiting", "0,10,[\"gid\",\"status\"]");
  cr_assert_eq(json_array_size(w), 2);
  cr_expect_str_eq(str(json_array_get(w, 0), "gid"), "0000000000000001", "a paused active one goes first");
  cr_expect_str_eq(str(json_array_get(w, 0), "status"), "paused");
  json_decref(w);
  json_t *pos = result("aria2.changePosition", "\"0000000000000002\",0,\"POS_SET\"");
  cr_expect_eq(json_integer_value(pos), 0);
  json_decref(pos);
  json_decref(result("aria2.remove", "\"0000000000000003\""));  /* active -> removed */
  json_decref(result("aria2.unpause", "\"0000000000000002\"")); /* paused -> waiting -> active */
  expect_error("aria2.unpause", "\"0000000000000002\"", 1, "GID#0000000000000002 cannot be unpaused now");
  cr_expect_str_eq(events, "Start:0001 Pause:0002 Pause:0001 Start:0003 Stop:0003 Start:0002 ");
  dmn_q_ended(&q, dmn_q_find(&q, 2), 1, 0, NULL); /* complete */
  json_t *s = result("aria2.tellStopped", "0,10,[\"gid\",\"status\",\"errorCode\"]");
  cr_assert_eq(json_array_size(s), 2);
  cr_expect_str_eq(str(json_array_get(s, 0), "status"), "removed");
  cr_expect_str_eq(str(json_array_get(s, 1), "status"), "complete");
  cr_expect_str_eq(str(json_array_get(s, 1), "errorCode"), "0");
  json_decref(s);
  s = result("aria2.tellStopped", "-1,1,[\"gid\"]");
  cr_expect_str_eq(str(json_array_get(s, 0), "gid"), "0000000000000002", "a negative offset counts from the end");
  json_decref(s);
  json_t *gs = result("aria2.getGlobalStat", "");
  all_strings(gs);
  cr_expect_str_eq(str(gs, "numWaiting"), "1");
  cr_expect_str_eq(str(gs, "numStopped"), "2");
  json_decref(gs);
  json_decref(result("aria2.removeDownloadResult", "\"0000000000000003\""));
  expect_error("aria2.removeDownloadResult", "\"0000000000000001\"", 1,
               "Could not remove download result of GID#0000000000000001");
  json_decref(result("aria2.purgeDownloadResult", ""));
  expect_error("aria2.tellStatus", "\"0000000000000002\"", 1, "GID 0000000000000002 is not found");
}

/* an engine whose stop does nothing at once: the end comes later, as the real one's */
static void f_stop_later(void *ctx, struct dmn_dl *d) {
  (void)ctx, (void)d;
  stopped_calls++;
}

Test(rpc, end_after_stop) {
  q.eng.stop = f_stop_later;
  json_decref(result("aria2.addUri", "[\"http://h/a\"]"));
  json_decref(result("aria2.addUri", "[\"http://h/b\"]"));
  json_decref(result("aria2.pause", "\"0000000000000001\""));
  json_t *st = result("aria2.tellStatus", "\"0000000000000001\",[\"status\"]");
  cr_expect_str_eq(str(st, "status"), "active", "paused only once the transfer ended");
  json_decref(st);
  expect_error("aria2.unpause", "\"0000000000000001\"", 1, "GID#0000000000000001 cannot be unpaused now");
  dmn_q_ended(&q, dmn_q_find(&q, 1), 1, 0, NULL); /* it completed meanwhile */
  json_decref(result("aria2.remove", "\"0000000000000002\""));
  expect_error("aria2.pause", "\"0000000000000002\"", 1, "GID#0000000000000002 cannot be paused now");
  dmn_q_ended(&q, dmn_q_find(&q, 2), 0, 1, "cancelled");
  json_t *s = result("aria2.tellStopped", "0,10,[\"gid\",\"status\"]");
  cr_assert_eq(json_array_size(s), 2);
  cr_expect_str_eq(str(json_array_get(s, 0), "status"), "complete", "a pause that came too late");
  cr_expect_str_eq(str(json_array_get(s, 1), "status"), "removed", "remove wins over a later pause");
  json_decref(s);
  cr_expect_eq(stopped_calls, 2);
  cr_expect_str_eq(events, "Start:0001 Start:0002 Complete:0001 Stop:0002 ");
}

/* an engine that cannot start d: -1 is errorCode 1, a positive value aria2's errorCode (the
 * engine's for a file name "..": 16, "Download aborted.", files[].path dir/..) */
static int start_code;
static int f_start_fails(void *ctx, struct dmn_dl *d, char *err, size_t n) {
  (void)ctx;
  d->path = strdup("/dl/..");
  snprintf(err, n, "Download aborted.");
  return start_code;
}

Test(rpc, start_fails_with_its_error_code) {
  q.eng.start = f_start_fails;
  start_code = 16;
  json_decref(result("aria2.addUri", "[\"http://h/d/..\"]"));
  start_code = -1;
  json_decref(result("aria2.addUri", "[\"http://h/x\"]"));
  json_t *st = result("aria2.tellStatus", "\"0000000000000001\"");
  cr_expect_str_eq(str(st, "status"), "error");
  cr_expect_str_eq(str(st, "errorCode"), "16");
  cr_expect_str_eq(str(st, "errorMessage"), "Download aborted.");
  cr_expect_str_eq(str(json_array_get(json_object_get(st, "files"), 0), "path"), "/dl/..");
  json_decref(st);
  st = result("aria2.tellStatus", "\"0000000000000002\",[\"status\",\"errorCode\"]");
  cr_expect_str_eq(str(st, "status"), "error");
  cr_expect_str_eq(str(st, "errorCode"), "1");
  json_decref(st);
  cr_expect_str_eq(events, "Start:0001 Error:0001 Start:0002 Error:0002 ");
}

Test(rpc, error_status_and_all) {
  json_decref(result("aria2.addUri", "[\"http://h/a\"]"));
  dmn_q_ended(&q, dmn_q_find(&q, 1), 0, 3, "HTTP 404");
  json_t *st = result("aria2.tellStatus", "\"0000000000000001\"");
  cr_expect_str_eq(str(st, "status"), "error");
  cr_expect_str_eq(str(st, "errorCode"), "3");
  cr_expect_str_eq(str(st, "errorMessage"), "HTTP 404");
  json_decref(st);
  expect_error("aria2.remove", "\"0000000000000001\"", 1, "Active Download not found for GID#0000000000000001");
  json_decref(result("aria2.changeGlobalOption", "{\"max-concurrent-downloads\":\"2\"}"));
  for (int i = 0; i < 3; i++)
    json_decref(result("aria2.addUri", "[\"http://h/x\"]"));
  json_decref(result("aria2.pauseAll", ""));
  json_t *a = result("aria2.tellActive", "");
  cr_expect_eq(json_array_size(a), 0, "pauseAll: none active");
  json_decref(a);
  json_decref(result("aria2.unpauseAll", ""));
  a = result("aria2.tellActive", "[\"gid\"]");
  cr_expect_eq(json_array_size(a), 2, "unpauseAll: two active again");
  json_decref(a);
  json_t *added = result("aria2.addUri", "[\"http://h/p\"],{\"pause\":\"true\"}");
  json_t *ps = result("aria2.tellStatus", "\"0000000000000005\",[\"status\"]");
  cr_expect_str_eq(str(ps, "status"), "paused", "addUri with pause=true");
  json_decref(ps);
  json_decref(added);
  json_t *p = result("aria2.getPeers", "\"0000000000000002\"");
  cr_expect(json_is_array(p) && json_array_size(p) == 0);
  json_decref(p);
  json_t *go = result("aria2.getGlobalOption", "");
  cr_expect_str_eq(str(go, "max-concurrent-downloads"), "2");
  json_decref(go);
  expect_error("aria2.saveSession", "", 1, "Filename is not given.");
}

Test(rpc, gid_prefix) {
  json_decref(result("aria2.addUri", "[\"http://h/a\"]"));
  json_decref(result("aria2.addUri", "[\"http://h/b\"]"));
  json_t *st = result("aria2.tellStatus", "\"0000000000000002\""); /* 16 digits */
  cr_expect_str_eq(str(st, "gid"), "0000000000000002");
  json_decref(st);
  json_decref(result("aria2.addUri", "[\"http://h/c\"]"));
  for (int i = 0; i < 13; i++) /* GIDs ...01 to ...10: the prefix ...1 names ...10 alone */
    json_decref(result("aria2.addUri", "[\"http://h/d\"]"));
  st = result("aria2.tellStatus", "\"000000000000001\",[\"gid\"]");
  cr_expect_str_eq(str(st, "gid"), "0000000000000010", "a unique prefix names its download");
  json_decref(st);
  expect_error("aria2.tellStatus", "\"000000000000000\"", 1, "GID 000000000000000 is not unique");
  expect_error("aria2.pause", "\"f\"", 1, "GID f is not found");
  expect_error("aria2.tellStatus", "\"\"", 1, "Invalid GID ");
  expect_error("aria2.tellStatus", "\"00000000000000001\"", 1, "Invalid GID 00000000000000001");
  expect_error("aria2.tellStatus", "\"0g\"", 1, "Invalid GID 0g");
  json_t *g = result("aria2.addUri", "[\"http://h/e\"],{\"gid\":\"feed00000000beef\",\"timeout\":60,\"split\":16}");
  cr_expect_str_eq(json_string_value(g), "feed00000000beef", "the gid option names the download");
  json_decref(g);
  st = result("aria2.getOption", "\"feed\"");
  cr_expect(!json_object_get(st, "gid") && !json_object_get(st, "timeout"), "gid, and unknown names, are not kept");
  cr_expect_str_eq(str(st, "split"), "5", "a value that is not a string is skipped, as aria2 skips it");
  json_decref(st);
  /* a gid taken, reserved (0) or malformed: aria2 1.36 adds nothing and says so */
  expect_error("aria2.addUri", "[\"http://h/e\"],{\"gid\":\"feed00000000beef\"}", 1, "No URI to download.");
  expect_error("aria2.addUri", "[\"http://h/e\"],{\"gid\":\"0000000000000000\"}", 1, "No URI to download.");
  expect_error("aria2.addUri", "[\"http://h/e\"],{\"gid\":\"feed\"}", 1, "No URI to download.");
}

/* the URIs of download gid, as one string "a b c" */
static void expect_uris(const char *gid, const char *want) {
  char p[64], got[512] = "";
  snprintf(p, sizeof p, "\"%s\"", gid);
  json_t *u = result("aria2.getUris", p);
  for (size_t i = 0; i < json_array_size(u); i++)
    snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "", str(json_array_get(u, i), "uri"));
  cr_expect_str_eq(got, want, "getUris of %s", gid);
  json_decref(u);
}

Test(rpc, change_uri) {
  json_decref(result("aria2.addUri", "[\"http://h/a\",\"http://m/a\"],{\"pause\":\"true\"}"));
  json_t *v = result("aria2.changeUri", "\"0000000000000001\",1,[\"http://h/a\",\"http://x/none\"],"
                                        "[\"http://n/a\",\"ftp://f/a\",\"https://s/a\"]");
  json_t *want = json_pack("[i, i]", 1, 2);
  cr_expect(json_equal(v, want), "[deleted, added]: one deleted, two added (ftp is not fetched)");
  json_decref(want);
  json_decref(v);
  expect_uris("0000000000000001", "http://m/a http://n/a https://s/a");
  v = result("aria2.changeUri", "\"00000000000000\",1,[],[\"http://p/a\",\"http://q/a\"],1");
  json_decref(v);
  expect_uris("0000000000000001", "http://m/a http://p/a http://q/a http://n/a https://s/a");
  v = result("aria2.changeUri", "\"0000000000000001\",1,[\"http://m/a\"],[\"http://z/a\"],0");
  json_decref(v);
  expect_uris("0000000000000001", "http://z/a http://p/a http://q/a http://n/a https://s/a");
  json_t *st = result("aria2.tellStatus", "\"0000000000000001\",[\"files\"]");
  json_decref(st);
  v = result("aria2.changeUri", "\"0000000000000001\",1,[],[\"http://e/a\"],99");
  json_decref(v);
  expect_uris("0000000000000001", "http://z/a http://p/a http://q/a http://n/a https://s/a http://e/a");
  expect_error("aria2.changeUri", "\"0000000000000001\",2,[],[]", 1, "fileIndex is out of range");
  expect_error("aria2.changeUri", "\"0000000000000001\",0,[],[]", 1,
               "The integer parameter at 1 has invalid value: the value must be greater than or equal to 1.");
  expect_error("aria2.changeUri", "\"0000000000000001\",1,[]", 1, "The parameter at 3 is required but missing.");
  expect_error("aria2.changeUri", "\"0000000000000001\",1,[],\"x\"", 1, "The parameter at 3 has wrong type.");
  expect_error("aria2.changeUri", "\"0000000000000001\",1,[],[],-1", 1, "Position must be greater than or equal to 0.");
  json_decref(result("aria2.remove", "\"0000000000000001\""));
  expect_error("aria2.changeUri", "\"0000000000000001\",1,[],[]", 1, "Cannot remove URIs from GID#0000000000000001");
}

/* the answer to a GET query, parsed after its callback( ) when script */
static json_t *get(const char *query, int *script) {
  char *s = dmn_rpc_handle_get(&r, query, &http_status, script);
  cr_assert(s, "no answer to %s", query);
  size_t n = strlen(s), skip = 0;
  if (*script) {
    cr_assert(n > 4 && !strncmp(s, "cb.x(", 5) && s[n - 1] == ')', "not a JSONP answer: %s", s);
    skip = 5;
    s[n - 1] = '\0';
  }
  json_t *j = json_loads(s + skip, 0, NULL);
  cr_assert(j, "answer does not parse: %s", s);
  free(s);
  return j;
}

Test(rpc, json_over_get) {
  int script;
  /* params ["token:s3"] in base64: WyJ0b2tlbjpzMyJd; "=" of the padding percent-encoded */
  json_t *a = get("?method=aria2.getVersion&id=4&params=WyJ0b2tlbjpzMyJd", &script);
  cr_expect(!script && http_status == 200);
  cr_expect_str_eq(json_string_value(json_object_get(a, "id")), "4", "the id is always a string");
  cr_expect_str_eq(str(json_object_get(a, "result"), "version"), "1.36.0");
  json_decref(a);
  a = get("?method=aria2.getVersion&id=5&params=WyJ0b2tlbjpzMyJd&jsoncallback=cb.x", &script);
  cr_expect(script, "jsoncallback: JSONP");
  cr_expect(json_object_get(a, "result"));
  json_decref(a);
  a = get("?method=aria2.getVersion&id=6", &script);
  cr_expect_str_eq(json_string_value(json_object_get(json_object_get(a, "error"), "message")), "Unauthorized");
  cr_expect_eq(http_status, 400);
  json_decref(a);
  /* a batch: [{"method":"aria2.getVersion","params":["token:s3"],"id":1}] */
  a = get("?params=W3sibWV0aG9kIjoiYXJpYTIuZ2V0VmVyc2lvbiIsInBhcmFtcyI6WyJ0b2tlbjpzMyJdLCJpZCI6MX1d", &script);
  cr_expect(json_is_array(a) && json_object_get(json_array_get(a, 0), "result"), "a batch over GET");
  json_decref(a);
  /* aria2 answers a GET that does not parse as an Invalid Request (its parse error is lost) */
  static const char *const bad[] = {"", "?", "?id=1", "?method=aria2.getVersion&params=%25%25",
                                    "?method=x&params=Ww%3D%3D"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    a = get(bad[i], &script);
    cr_expect_eq(json_integer_value(json_object_get(json_object_get(a, "error"), "code")), -32600, "%s", bad[i]);
    cr_expect_eq(http_status, 400);
    json_decref(a);
  }
  a = get("?method=aria2.getVersion&id=1&jsoncallback=alert(1)//", &script);
  cr_expect(!script, "a callback that is not a name is not echoed");
  cr_expect_eq(json_integer_value(json_object_get(json_object_get(a, "error"), "code")), -32600);
  json_decref(a);
}
