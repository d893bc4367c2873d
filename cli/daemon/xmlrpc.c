/* XML-RPC as aria2 serves it at /rpc: expat parses the methodCall into jansson values for the shared methods; the answer is written as aria2's XmlRpcResponse (xmlrpc.h). */
#include "xmlrpc.h"

#include <errno.h>
#include <expat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha1.h"

#define XR_DEPTH 32 /* elements nested: a methodCall of aria2's calls needs fewer than 16 */

/* what an element is, by its name and its parent's kind (aria2's parser states) */
enum xr_el {
  EL_OTHER,
  EL_CALL,
  EL_METHOD,
  EL_PARAMS,
  EL_PARAM,
  EL_VALUE,
  EL_INT,
  EL_STRING,
  EL_BASE64,
  EL_STRUCT,
  EL_MEMBER,
  EL_NAME,
  EL_ARRAY,
  EL_DATA
};

struct xr_frame {
  enum xr_el el;
  json_t *v;  /* EL_VALUE: the value read; EL_MEMBER: its value */
  char *name; /* EL_MEMBER: its name */
};

struct xr {
  XML_Parser p;
  struct xr_frame st[XR_DEPTH];
  int depth;
  char *text; /* character data since the last tag */
  size_t tlen, tcap;
  char *method;
  json_t *params;
  int bad;
};

static void xr_fail(struct xr *x) {
  x->bad = 1;
  XML_StopParser(x->p, XML_FALSE);
}

static enum xr_el child_kind(enum xr_el parent, const char *n, int root) {
  static const struct {
    enum xr_el parent;
    const char *name;
    enum xr_el el;
  } rules[] = {
      {EL_CALL, "methodName", EL_METHOD}, {EL_CALL, "params", EL_PARAMS},  {EL_PARAMS, "param", EL_PARAM},
      {EL_PARAM, "value", EL_VALUE},      {EL_VALUE, "i4", EL_INT},        {EL_VALUE, "int", EL_INT},
      {EL_VALUE, "string", EL_STRING},    {EL_VALUE, "double", EL_STRING}, {EL_VALUE, "base64", EL_BASE64},
      {EL_VALUE, "struct", EL_STRUCT},    {EL_VALUE, "array", EL_ARRAY},   {EL_STRUCT, "member", EL_MEMBER},
      {EL_MEMBER, "name", EL_NAME},       {EL_MEMBER, "value", EL_VALUE},  {EL_ARRAY, "data", EL_DATA},
      {EL_DATA, "value", EL_VALUE},
  };
  if (root)
    return strcmp(n, "methodCall") ? EL_OTHER : EL_CALL;
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
    if (rules[i].parent == parent && !strcmp(rules[i].name, n))
      return rules[i].el;
  return EL_OTHER;
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **attrs) {
  struct xr *x = ud;
  (void)attrs;
  if (x->bad)
    return;
  if (x->depth == XR_DEPTH)
    return xr_fail(x);
  enum xr_el el = child_kind(x->depth ? x->st[x->depth - 1].el : EL_OTHER, name, x->depth == 0);
  struct xr_frame *f = &x->st[x->depth++];
  *f = (struct xr_frame){el, NULL, NULL};
  if (el == EL_PARAMS && !x->params)
    x->params = json_array();
  else if (el == EL_STRUCT || el == EL_ARRAY) {
    struct xr_frame *val = f - 1; /* a struct or an array is its <value>'s value */
    json_decref(val->v);
    val->v = el == EL_STRUCT ? json_object() : json_array();
  }
  x->tlen = 0;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len) {
  struct xr *x = ud;
  if (x->tlen + (size_t)len + 1 > x->tcap) {
    size_t cap = x->tcap ? x->tcap : 256;
    while (cap < x->tlen + (size_t)len + 1)
      cap *= 2;
    char *t = realloc(x->text, cap);
    if (!t)
      return xr_fail(x);
    x->text = t;
    x->tcap = cap;
  }
  memcpy(x->text + x->tlen, s, (size_t)len);
  x->tlen += (size_t)len;
  x->text[x->tlen] = '\0';
}

/* <int>: a 32-bit integer, else no value (aria2's parseIntNoThrow) */
static json_t *int_value(const char *t) {
  char *end;
  errno = 0;
  long long v = strtoll(t, &end, 10);
  if (end == t || *end || errno || v < INT32_MIN || v > INT32_MAX)
    return NULL;
  return json_integer(v);
}

/* 1 when c may stand in XML 1.0 text (the control characters may not, even as references) */
static int xml_char(unsigned char c) { return c >= 0x20 || c == '\t' || c == '\n' || c == '\r'; }

/* <base64>: the decoded text, dropped (NULL) when it is not UTF-8 or holds a character XML
 * cannot carry back (aria2's only binary value is a torrent, which the daemon refuses anyway) */
static json_t *base64_value(const char *t, size_t n) {
  uint8_t *b = malloc(n / 4 * 3 + 3);
  if (!b)
    return NULL;
  size_t len = dmn_base64_decode(t, n, b), i = 0;
  while (i < len && xml_char(b[i]))
    i++;
  json_t *v = i == len ? json_stringn((const char *)b, len) : NULL;
  free(b);
  return v;
}

/* a value read: into its <param>'s list, its <member> or its <data>'s array */
static void attach(struct xr *x, struct xr_frame *parent, json_t *v) {
  if (parent->el == EL_PARAM && x->params)
    json_array_append_new(x->params, v);
  else if (parent->el == EL_MEMBER) {
    json_decref(parent->v);
    parent->v = v;
  } else if (parent->el == EL_DATA && json_is_array(parent[-2].v))
    json_array_append_new(parent[-2].v, v); /* data's parent is array, whose parent is value */
  else
    json_decref(v);
}

static void XMLCALL on_end(void *ud, const XML_Char *name) {
  struct xr *x = ud;
  (void)name;
  if (x->bad || x->depth == 0) /* expat may still end an empty element after a stop */
    return;
  struct xr_frame *f = &x->st[--x->depth], *parent = x->depth ? f - 1 : NULL;
  const char *t = x->text && x->tlen ? x->text : "";
  json_t *v = NULL;
  switch (f->el) {
  case EL_METHOD:
    free(x->method);
    x->method = strdup(t);
    break;
  case EL_NAME:
    free(parent->name);
    parent->name = strdup(t);
    break;
  case EL_INT: v = int_value(t); break;
  case EL_STRING: v = json_stringn_nocheck(t, x->tlen); break;
  case EL_BASE64: v = base64_value(t, x->tlen); break;
  case EL_VALUE:
    if (!f->v && x->tlen)
      f->v = json_stringn_nocheck(t, x->tlen); /* untyped: a string (XML-RPC's rule) */
    if (f->v)
      attach(x, parent, f->v);
    f->v = NULL;
    break;
  case EL_MEMBER:
    if (f->name && f->v && json_is_object(parent[-1].v)) /* member, struct, its value */
      json_object_set(parent[-1].v, f->name, f->v);
    break;
  default: break;
  }
  if (v && parent && parent->el == EL_VALUE && !parent->v)
    parent->v = v;
  else
    json_decref(v);
  json_decref(f->v);
  free(f->name);
  x->tlen = 0;
}

/* a DTD could declare entities that expand without bound: refused before any is read */
static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sys, const XML_Char *pub, int internal) {
  (void)name, (void)sys, (void)pub, (void)internal;
  xr_fail(ud);
}

static void XMLCALL on_entity(void *ud, const XML_Char *name, int pe, const XML_Char *value, int vlen,
                              const XML_Char *base, const XML_Char *sys, const XML_Char *pub,
                              const XML_Char *notation) {
  (void)name, (void)pe, (void)value, (void)vlen, (void)base, (void)sys, (void)pub, (void)notation;
  xr_fail(ud);
}

int dmn_xmlrpc_parse(const char *body, size_t len, char **method, json_t **params) {
  struct xr x = {0};
  x.p = XML_ParserCreate(NULL);
  if (!x.p)
    return -1;
  XML_SetUserData(x.p, &x);
  XML_SetElementHandler(x.p, on_start, on_end);
  XML_SetCharacterDataHandler(x.p, on_text);
  XML_SetStartDoctypeDeclHandler(x.p, on_doctype);
  XML_SetEntityDeclHandler(x.p, on_entity);
  XML_SetParamEntityParsing(x.p, XML_PARAM_ENTITY_PARSING_NEVER);
  int ok = len <= INT32_MAX && XML_Parse(x.p, body, (int)len, XML_TRUE) == XML_STATUS_OK && !x.bad;
  while (x.depth > 0) { /* a stopped parse leaves its open elements */
    struct xr_frame *f = &x.st[--x.depth];
    json_decref(f->v);
    free(f->name);
  }
  XML_ParserFree(x.p);
  free(x.text);
  if (!ok) {
    free(x.method);
    json_decref(x.params);
    return -1;
  }
  *method = x.method ? x.method : strdup("");
  *params = x.params ? x.params : json_array();
  return *method ? 0 : (json_decref(*params), -1);
}

/* aria2's escapes, CR as a character reference (XML reads a raw one as a line end), and a
 * control character XML 1.0 cannot carry (a JSON-RPC client could set one) as U+FFFD */
static void put_escaped(FILE *f, const char *s) {
  for (; *s; s++)
    switch (*s) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '\'': fputs("&#39;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\r': fputs("&#13;", f); break; /* a raw CR would reach the client as LF */
    default: fputs(xml_char((unsigned char)*s) ? (char[]){*s, 0} : "\xEF\xBF\xBD", f); /* U+FFFD */
    }
}

static int by_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static void put_value(FILE *f, const json_t *v, int depth);

/* aria2 keeps a struct's members in a map: they come out in name order */
static void put_struct(FILE *f, const json_t *v, int depth) {
  size_t n = json_object_size(v), i = 0;
  const char **keys = malloc((n ? n : 1) * sizeof *keys);
  const char *k;
  json_t *m;
  if (!keys)
    return;
  json_object_foreach((json_t *)v, k, m) keys[i++] = k;
  qsort(keys, n, sizeof *keys, by_name);
  fputs("<value><struct>", f);
  for (i = 0; i < n; i++) {
    fputs("<member><name>", f);
    put_escaped(f, keys[i]);
    fputs("</name>", f);
    put_value(f, json_object_get(v, keys[i]), depth + 1);
    fputs("</member>", f);
  }
  fputs("</struct></value>", f);
  free(keys);
}

static void put_value(FILE *f, const json_t *v, int depth) {
  size_t i;
  json_t *e;
  if (depth > XR_DEPTH) /* the methods' answers are shallow; a deeper one is cut */
    return;
  switch (json_typeof(v)) {
  case JSON_STRING:
    fputs("<value><string>", f);
    put_escaped(f, json_string_value(v));
    fputs("</string></value>", f);
    break;
  case JSON_INTEGER: fprintf(f, "<value><int>%" JSON_INTEGER_FORMAT "</int></value>", json_integer_value(v)); break;
  case JSON_REAL: fprintf(f, "<value><double>%.17g</double></value>", json_real_value(v)); break;
  case JSON_TRUE:
  case JSON_FALSE: fprintf(f, "<value><boolean>%d</boolean></value>", json_is_true(v)); break;
  case JSON_ARRAY:
    fputs("<value><array><data>", f);
    json_array_foreach(v, i, e) put_value(f, e, depth + 1);
    fputs("</data></array></value>", f);
    break;
  case JSON_OBJECT: put_struct(f, v, depth); break;
  default: break; /* null: nothing, as aria2 */
  }
}

char *dmn_xmlrpc_format(const json_t *v, int fault) {
  char *out = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&out, &n);
  if (!f)
    return NULL;
  fputs("<?xml version=\"1.0\"?><methodResponse>", f);
  fputs(fault ? "<fault>" : "<params><param>", f);
  put_value(f, v, 0);
  fputs(fault ? "</fault>" : "</param></params>", f);
  fputs("</methodResponse>", f);
  if (fclose(f) != 0) {
    free(out);
    return NULL;
  }
  return out;
}

char *dmn_xmlrpc_handle(struct dmn_rpc *r, const char *body, size_t len) {
  char *method;
  json_t *params;
  if (dmn_xmlrpc_parse(body, len, &method, &params) < 0)
    return NULL;
  struct dmn_err e = {0, ""};
  r->xml = 1;
  json_t *v = dmn_rpc_call(r, method, params, &e);
  r->xml = 0;
  int fault = !v;
  if (fault)
    v = json_pack("{s:i, s:s}", "faultCode", e.code, "faultString", e.msg);
  char *s = dmn_xmlrpc_format(v, fault);
  json_decref(v);
  json_decref(params);
  free(method);
  return s;
}
