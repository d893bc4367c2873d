/* aria2's XML-RPC (POST /rpc, what persepolis and Python's xmlrpc.client speak) on the same methods as the JSON-RPC: a methodCall parsed by expat into jansson values, the answer written back as aria2 writes it. DTDs and entities are refused (no XML bomb expands). Pure apart from the methods it calls; loop thread only. */
#ifndef DMN_XMLRPC_H
#define DMN_XMLRPC_H
#include <jansson.h>
#include <stddef.h>

#include "rpc.h"

/* Parses a methodCall of len bytes as aria2 reads one: <int>/<i4> (32 bits), <string>,
 * <double> (kept as its text), <base64> (decoded; dropped unless XML text), an untyped <value> (a string), <struct>,
 * <array>; other types (boolean, nil, dateTime) are dropped. *method (the caller frees it; ""
 * when absent) and *params (a new array). 0, or -1 for a body that is not well-formed XML,
 * nests deeper than 32 elements or has a DOCTYPE. */
int dmn_xmlrpc_parse(const char *body, size_t len, char **method, json_t **params);
/* The methodResponse text (the caller frees it) of v: a <params> answer, or a <fault> when
 * fault is set. Strings escaped as aria2 does (and CR as &#13;, a control character XML cannot carry as U+FFFD), struct members in name order, integers as <int>,
 * true/false as <boolean>, null as nothing. NULL when out of memory. */
char *dmn_xmlrpc_format(const json_t *v, int fault);
/* Runs one XML-RPC body: the answer text (the caller frees it), or NULL when the body does not
 * parse (aria2 answers 400 without a body then). Errors are <fault>s with faultCode and
 * faultString, sent with status 200. */
char *dmn_xmlrpc_handle(struct dmn_rpc *r, const char *body, size_t len);

#endif
