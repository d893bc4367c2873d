/* XML-RPC as aria2 serves it (cli/daemon/xmlrpc.c): methodCall parsing into jansson values (types, untyped values, base64, nesting), refusal of DTDs, entity bombs and deep nesting, the methodResponse and fault text, and calls through the shared methods (token, faults, multicall). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "options.h"
#include "xmlrpc.h"

#define CALL(m, params) \
  "<?xml version=\"1.0\"?><methodCall><methodName>" m "</methodName><params>" params "</params></methodCall>"
#define P(v) "<param><value>" v "</value></param>"

/* parses body; its params as compact JSON text (sorted keys) in out */
static int parse(const char *body, char *method, size_t mlen, char *out, size_t olen) {
  char *m;
  json_t *p;
  if (dmn_xmlrpc_parse(body, strlen(body), &m, &p) < 0)
    return -1;
  snprintf(method, mlen, "%s", m);
  char *s = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
  snprintf(out, olen, "%s", s);
  free(s);
  free(m);
  json_decref(p);
  return 0;
}

Test(xmlrpc, parse_types) {
  char m[64], p[1024];
  cr_assert_eq(parse(CALL("aria2.addUri",
                          P("<string>token:a&amp;b</string>")
                              P("<array><data><value><string>http://h/f?a=1&amp;b=2</string></value>"
                                "<value>untyped</value></data></array>")
                                  P("<struct><member><name>out</name><value><string>x.bin</string></value></member>"
                                    "<member><name>split</name><value>4</value></member></struct>") P("<int>7</int>")
                                      P("<i4>-3</i4>") P("<base64>aGVsbG8=</base64>") P("<double>1.5</double>")
                                          P("<boolean>1</boolean>") P("<int>99999999999</int>")),
                     m, sizeof m, p, sizeof p),
               0);
  cr_expect_str_eq(m, "aria2.addUri");
  cr_expect_str_eq(p,
                   "[\"token:a&b\",[\"http://h/f?a=1&b=2\",\"untyped\"],{\"out\":\"x.bin\",\"split\":\"4\"},"
                   "7,-3,\"hello\",\"1.5\"]",
                   "boolean and an int over 32 bits are dropped as aria2 drops them");
  cr_assert_eq(parse("<methodCall><methodName>aria2.getVersion</methodName></methodCall>", m, sizeof m, p, sizeof p),
               0);
  cr_expect_str_eq(p, "[]", "no params: an empty list");
  cr_assert_eq(parse("<methodCall><params>" P("<string></string>") "</params></methodCall>", m, sizeof m, p, sizeof p),
               0);
  cr_expect_str_eq(m, "", "no methodName");
  cr_expect_str_eq(p, "[\"\"]");
  cr_assert_eq(
      parse(CALL("x", P("<struct><member><name>a</name><value><array><data>"
                        "<value><struct><member><name>b</name><value><int>1</int></value></member></struct></value>"
                        "</data></array></value></member></struct>")),
            m, sizeof m, p, sizeof p),
      0);
  cr_expect_str_eq(p, "[{\"a\":[{\"b\":1}]}]", "nesting (system.multicall's shape)");
}

Test(xmlrpc, refused) {
  char m[64], p[256], deep[4096] = "<methodCall><params><param>";
  static const char *const bad[] = {
      "",
      "<methodCall>",
      "<methodCall></methodCall><x/>",
      "not xml",
      "<?xml version=\"1.0\"?><!DOCTYPE methodCall><methodCall/>",
      "<?xml version=\"1.0\"?><!DOCTYPE m [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">"
      "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]><methodCall><methodName>&c;</methodName></methodCall>",
      "<?xml version=\"1.0\"?><!DOCTYPE m SYSTEM \"file:///etc/passwd\"><methodCall/>",
      "<methodCall><methodName>&undefined;</methodName></methodCall>",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_expect_eq(parse(bad[i], m, sizeof m, p, sizeof p), -1, "accepted: %s", bad[i]);
  for (int i = 0; i < 40; i++)
    strcat(deep, "<value><array><data>");
  cr_expect_eq(parse(deep, m, sizeof m, p, sizeof p), -1, "40 levels deep");
}

Test(xmlrpc, format) {
  json_t *v = json_pack("{s:s, s:[s, i], s:{}}", "status", "a<b>&'\"", "files", "x", 5, "empty");
  char *s = dmn_xmlrpc_format(v, 0);
  cr_expect_str_eq(s, "<?xml version=\"1.0\"?><methodResponse><params><param><value><struct>"
                      "<member><name>empty</name><value><struct></struct></value></member>"
                      "<member><name>files</name><value><array><data><value><string>x</string></value>"
                      "<value><int>5</int></value></data></array></value></member>"
                      "<member><name>status</name><value><string>a&lt;b&gt;&amp;&#39;&quot;</string></value></member>"
                      "</struct></value></param></params></methodResponse>");
  free(s);
  json_decref(v);
  v = json_pack("{s:i, s:s}", "faultCode", 1, "faultString", "Unauthorized");
  s = dmn_xmlrpc_format(v, 1);
  cr_expect_str_eq(s, "<?xml version=\"1.0\"?><methodResponse><fault><value><struct>"
                      "<member><name>faultCode</name><value><int>1</int></value></member>"
                      "<member><name>faultString</name><value><string>Unauthorized</string></value></member>"
                      "</struct></value></fault></methodResponse>");
  free(s);
  json_decref(v);
}

static struct dmn_q q;
static uint64_t next_gid;
static uint64_t f_gid(void *arg) {
  (void)arg;
  return ++next_gid;
}

Test(xmlrpc, calls) {
  struct dmn_engine_ops ops = {0};
  dmn_q_init(&q, &ops, NULL, NULL);
  q.max_active = 0;
  struct dmn_rpc r = {.q = &q, .global = dmn_opt_defaults(), .secret = "s3", .version = "0.1.0", .new_gid = f_gid};
  static const struct {
    const char *body, *want;
  } cases[] = {
      {CALL("aria2.addUri", P("<string>token:s3</string>") P("<array><data><value>http://h/f</value></data></array>")
                                P("<struct><member><name>pause</name><value>true</value></member></struct>")),
       "<params><param><value><string>0000000000000001</string></value></param></params>"},
      {CALL("aria2.tellStatus",
            P("token:s3") P("0000000000000001") P("<array><data><value>status</value></data></array>")),
       "<params><param><value><struct><member><name>status</name><value><string>paused</string></value></member>"
       "</struct></value></param></params>"},
      {CALL("aria2.getVersion", P("token:bad")),
       "<fault><value><struct><member><name>faultCode</name><value><int>1</int></value></member>"
       "<member><name>faultString</name><value><string>Unauthorized</string></value></member></struct></value></"
       "fault>"},
      {CALL("system.multicall", P("<array><data><value><struct><member><name>methodName</name><value>aria2.nope</value>"
                                  "</member></struct></value></data></array>")),
       "<params><param><value><array><data><value><struct><member><name>faultCode</name><value><int>1</int></value>"
       "</member><member><name>faultString</name><value><string>No such method: aria2.nope</string></value></member>"
       "</struct></value></data></array></value></param></params>"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *s = dmn_xmlrpc_handle(&r, cases[i].body, strlen(cases[i].body));
    const char *head = "<?xml version=\"1.0\"?><methodResponse>";
    cr_assert(s && !strncmp(s, head, strlen(head)), "case %zu: %s", i, s);
    cr_expect(strstr(s, cases[i].want) && !strcmp(s + strlen(s) - 17, "</methodResponse>"), "case %zu: %s", i, s);
    free(s);
  }
  cr_expect_null(dmn_xmlrpc_handle(&r, "<x", 2), "a body that does not parse: no answer (400)");
  dmn_q_free(&q);
  json_decref(r.global);
}
