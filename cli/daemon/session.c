/* aria2's session format, written and read (session.h). */
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc.h"

static void put_dl(FILE *f, const struct dmn_dl *d) {
  for (size_t i = 0; i < json_array_size(d->uris); i++)
    fprintf(f, "%s%s", i ? "\t" : "", json_string_value(json_array_get(d->uris, i)));
  char g[17];
  dmn_gid_fmt(d->gid, g);
  fprintf(f, "\n gid=%s\n", g);
  const char *k;
  json_t *v;
  json_object_foreach(d->opts, k, v) {
    if (json_is_array(v)) {
      for (size_t i = 0; i < json_array_size(v); i++)
        fprintf(f, " %s=%s\n", k, json_string_value(json_array_get(v, i)));
    } else if (json_is_string(v) && !strchr(json_string_value(v), '\n'))
      fprintf(f, " %s=%s\n", k, json_string_value(v));
  }
  if (d->status == DMN_PAUSED || d->stop_to == DMN_PAUSED)
    fputs(" pause=true\n", f);
}

char *dmn_session_format(const struct dmn_q *q) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return NULL;
  for (size_t i = 0; i < q->active.n; i++)
    if (q->active.v[i]->stop_to != DMN_REMOVED)
      put_dl(f, q->active.v[i]);
  for (size_t i = 0; i < q->waiting.n; i++)
    put_dl(f, q->waiting.v[i]);
  for (size_t i = 0; i < q->stopped.n; i++)
    if (q->stopped.v[i]->status == DMN_ERROR)
      put_dl(f, q->stopped.v[i]);
  fclose(f);
  return buf;
}

/* one option line " name=value" into opts; header repeats into a list */
static void add_opt(json_t *opts, char *line) {
  char *eq = strchr(line, '=');
  if (!eq)
    return;
  *eq = '\0';
  while (*line == ' ' || *line == '\t')
    line++;
  json_t *v = json_string(eq + 1);
  if (!strcmp(line, "header")) {
    json_t *l = json_object_get(opts, "header");
    if (!l)
      json_object_set_new(opts, "header", l = json_array());
    json_array_append_new(l, v);
  } else
    json_object_set_new(opts, line, v);
}

static json_t *uri_line(char *line) {
  json_t *uris = json_array();
  for (char *save = NULL, *t = strtok_r(line, "\t", &save); t; t = strtok_r(NULL, "\t", &save))
    json_array_append_new(uris, json_string(t));
  return json_pack("{s:o, s:{}}", "uris", uris, "opts");
}

json_t *dmn_session_parse(const char *text) {
  json_t *res = json_array(), *cur = NULL;
  char *copy = strdup(text ? text : ""), *save = NULL;
  for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    size_t n = strlen(l);
    if (n && l[n - 1] == '\r')
      l[--n] = '\0';
    if (!n || l[0] == '#')
      continue;
    if (l[0] == ' ' || l[0] == '\t') {
      if (cur)
        add_opt(json_object_get(cur, "opts"), l);
      continue;
    }
    cur = uri_line(l);
    json_array_append_new(res, cur);
  }
  free(copy);
  return res;
}
