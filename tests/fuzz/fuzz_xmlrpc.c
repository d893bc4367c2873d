/* Fuzz target: the daemon's XML-RPC parser (cli/daemon/xmlrpc.c, expat into jansson values) and its answer writer. */
#include <jansson.h>
#include <string.h>

#include "fuzz.h"
#include "xmlrpc.h"

/* Each parameter written back (the answer's one value, moved into a call) and read again is
 * the same value: what the parser takes, the writer says the same way, at the same depth. */
static void round_trip(const json_t *v) {
  char *resp = dmn_xmlrpc_format(v, 0);
  FUZZ_CHECK(resp);
  const char *a = strstr(resp, "<params>"), *b = strstr(resp, "</params>");
  FUZZ_CHECK(a && b && b > a);
  json_t *again = NULL;
  char *m = NULL, *call = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&call, &n);
  FUZZ_CHECK(f);
  fprintf(f, "<methodCall><methodName>m</methodName>%.*s</params></methodCall>", (int)(b - a), a);
  FUZZ_CHECK(fclose(f) == 0);
  FUZZ_CHECK(dmn_xmlrpc_parse(call, n, &m, &again) == 0);
  FUZZ_CHECK(!strcmp(m, "m") && json_array_size(again) == 1 && json_equal(json_array_get(again, 0), v));
  free(m);
  json_decref(again);
  free(call);
  free(resp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *method = NULL;
  json_t *params = NULL;
  int rc = dmn_xmlrpc_parse((const char *)data, size, &method, &params);
  FUZZ_CHECK(rc == 0 || rc == -1);
  if (rc)
    return 0;
  FUZZ_CHECK(method && json_is_array(params));
  /* a DOCTYPE never gets through: no entity can have been declared */
  FUZZ_CHECK(!memmem(data, size, "<!DOCTYPE", 9));
  for (size_t i = 0; i < json_array_size(params); i++)
    round_trip(json_array_get(params, i));
  free(method);
  json_decref(params);
  return 0;
}
