/* The download queue and its status transitions (queue.h). */
#include "queue.h"

#include <stdlib.h>
#include <string.h>

const char *dmn_status_name(enum dmn_status s) {
  static const char *const names[] = {"active", "waiting", "paused", "error", "complete", "removed"};
  return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "error";
}

struct dmn_dl *dmn_dl_new(uint64_t gid, json_t *uris, json_t *opts) {
  struct dmn_dl *d = calloc(1, sizeof *d);
  const char *uri = json_string_value(json_array_get(uris, 0));
  if (!d || !uri) {
    json_decref(uris);
    json_decref(opts);
    free(d);
    return NULL;
  }
  d->uris = uris;
  d->gid = gid;
  d->status = DMN_WAITING;
  d->stop_to = DMN_ACTIVE;
  d->uri = strdup(uri);
  d->opts = opts ? opts : json_object();
  if (!d->uri || !d->opts) {
    dmn_dl_free(d);
    return NULL;
  }
  return d;
}

void dmn_dl_free(struct dmn_dl *d) {
  if (!d)
    return;
  free(d->uri);
  free(d->path);
  free(d->error_msg);
  json_decref(d->opts);
  json_decref(d->uris);
  free(d);
}

static void notify(struct dmn_q *q, const char *event, const struct dmn_dl *d) {
  if (q->notify)
    q->notify(q->notify_arg, event, d->gid);
}

/* list primitives: insert at i (clamped), remove at i, index of d */
static int list_insert(struct dmn_list *l, size_t i, struct dmn_dl *d) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    struct dmn_dl **v = realloc(l->v, cap * sizeof *v);
    if (!v)
      return -1;
    l->v = v;
    l->cap = cap;
  }
  if (i > l->n)
    i = l->n;
  memmove(l->v + i + 1, l->v + i, (l->n - i) * sizeof *l->v);
  l->v[i] = d;
  l->n++;
  return 0;
}

static void list_remove_at(struct dmn_list *l, size_t i) {
  memmove(l->v + i, l->v + i + 1, (l->n - i - 1) * sizeof *l->v);
  l->n--;
}

static long list_index(const struct dmn_list *l, const struct dmn_dl *d) {
  for (size_t i = 0; i < l->n; i++)
    if (l->v[i] == d)
      return (long)i;
  return -1;
}

static void list_free(struct dmn_list *l) {
  for (size_t i = 0; i < l->n; i++)
    dmn_dl_free(l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}

void dmn_q_init(struct dmn_q *q, const struct dmn_engine_ops *eng, dmn_notify_fn fn, void *arg) {
  memset(q, 0, sizeof *q);
  q->max_active = 5;
  q->max_results = 1000;
  q->eng = *eng;
  q->notify = fn;
  q->notify_arg = arg;
}

void dmn_q_free(struct dmn_q *q) {
  list_free(&q->active);
  list_free(&q->waiting);
  list_free(&q->stopped);
}

struct dmn_dl *dmn_q_find(const struct dmn_q *q, uint64_t gid) {
  const struct dmn_list *ls[] = {&q->active, &q->waiting, &q->stopped};
  for (int k = 0; k < 3; k++)
    for (size_t i = 0; i < ls[k]->n; i++)
      if (ls[k]->v[i]->gid == gid)
        return ls[k]->v[i];
  return NULL;
}

/* d (already out of its list) ends in status s: into the stopped list, the oldest result
 * forgotten beyond max_results. */
static void to_stopped(struct dmn_q *q, struct dmn_dl *d, enum dmn_status s) {
  d->status = s;
  d->rate = 0;
  d->connections = 0;
  q->stopped_total++;
  if (list_insert(&q->stopped, q->stopped.n, d) < 0) {
    dmn_dl_free(d);
    return;
  }
  while (q->stopped.n > q->max_results) {
    dmn_dl_free(q->stopped.v[0]);
    list_remove_at(&q->stopped, 0);
  }
}

static void start_one(struct dmn_q *q, struct dmn_dl *d) {
  char err[256] = "";
  d->status = DMN_ACTIVE;
  d->stop_to = DMN_ACTIVE;
  if (list_insert(&q->active, q->active.n, d) < 0) {
    to_stopped(q, d, DMN_ERROR);
    return;
  }
  notify(q, "aria2.onDownloadStart", d);
  int code = q->eng.start(q->eng.ctx, d, err, sizeof err);
  if (code)
    dmn_q_ended(q, d, 0, code > 0 ? code : 1, err[0] ? err : "could not start");
}

void dmn_q_fill(struct dmn_q *q) {
  while (q->active.n < q->max_active) {
    size_t i = 0;
    while (i < q->waiting.n && q->waiting.v[i]->status != DMN_WAITING)
      i++;
    if (i == q->waiting.n)
      return;
    struct dmn_dl *d = q->waiting.v[i];
    list_remove_at(&q->waiting, i);
    start_one(q, d);
  }
}

long dmn_q_add(struct dmn_q *q, struct dmn_dl *d, long pos) {
  size_t at = pos < 0 ? q->waiting.n : (size_t)pos;
  if (list_insert(&q->waiting, at, d) < 0) {
    dmn_dl_free(d);
    return -1;
  }
  dmn_q_fill(q);
  return list_index(&q->waiting, d);
}

int dmn_q_pause(struct dmn_q *q, struct dmn_dl *d) {
  if (d->status == DMN_WAITING) {
    d->status = DMN_PAUSED;
    notify(q, "aria2.onDownloadPause", d);
    return 0;
  }
  if (d->status != DMN_ACTIVE || d->stop_to != DMN_ACTIVE)
    return -1;
  d->stop_to = DMN_PAUSED;
  q->eng.stop(q->eng.ctx, d);
  return 0;
}

int dmn_q_unpause(struct dmn_q *q, struct dmn_dl *d) {
  if (d->status != DMN_PAUSED)
    return -1;
  d->status = DMN_WAITING;
  dmn_q_fill(q);
  return 0;
}

int dmn_q_remove(struct dmn_q *q, struct dmn_dl *d) {
  if (d->status == DMN_ACTIVE) {
    if (d->stop_to == DMN_REMOVED)
      return -1;
    int running = d->stop_to == DMN_ACTIVE;
    d->stop_to = DMN_REMOVED; /* before stop: an engine may report the end at once */
    if (running)
      q->eng.stop(q->eng.ctx, d);
    return 0;
  }
  long i = list_index(&q->waiting, d);
  if (i < 0)
    return -1;
  list_remove_at(&q->waiting, (size_t)i);
  to_stopped(q, d, DMN_REMOVED);
  notify(q, "aria2.onDownloadStop", d);
  return 0;
}

void dmn_q_ended(struct dmn_q *q, struct dmn_dl *d, int ok, int error_code, const char *msg) {
  long i = list_index(&q->active, d);
  if (i < 0)
    return;
  list_remove_at(&q->active, (size_t)i);
  enum dmn_status to = d->stop_to;
  if (ok && to == DMN_PAUSED)
    to = DMN_ACTIVE; /* it completed before the pause took effect: complete it is */
  d->stop_to = DMN_ACTIVE;
  d->rate = 0;
  d->connections = 0;
  if (to == DMN_PAUSED) {
    d->status = DMN_PAUSED; /* first in the waiting list, as aria2 puts a paused one back */
    if (list_insert(&q->waiting, 0, d) < 0)
      to_stopped(q, d, DMN_ERROR);
    notify(q, "aria2.onDownloadPause", d);
  } else if (to == DMN_REMOVED) {
    to_stopped(q, d, DMN_REMOVED);
    notify(q, "aria2.onDownloadStop", d);
  } else if (ok) {
    to_stopped(q, d, DMN_COMPLETE);
    notify(q, "aria2.onDownloadComplete", d);
  } else {
    d->error_code = error_code ? error_code : 1;
    free(d->error_msg);
    d->error_msg = strdup(msg ? msg : "");
    to_stopped(q, d, DMN_ERROR);
    notify(q, "aria2.onDownloadError", d);
  }
  dmn_q_fill(q);
}

long dmn_q_move(struct dmn_q *q, struct dmn_dl *d, long pos, const char *how) {
  long i = list_index(&q->waiting, d);
  if (i < 0)
    return -1;
  long n = (long)q->waiting.n, to;
  if (!strcmp(how, "POS_SET"))
    to = pos;
  else if (!strcmp(how, "POS_CUR"))
    to = i + pos;
  else if (!strcmp(how, "POS_END"))
    to = n - 1 + pos;
  else
    return -2;
  to = to < 0 ? 0 : to > n - 1 ? n - 1 : to;
  list_remove_at(&q->waiting, (size_t)i);
  list_insert(&q->waiting, (size_t)to, d); /* cannot fail: the slot was just freed */
  return to;
}

int dmn_q_forget(struct dmn_q *q, struct dmn_dl *d) {
  long i = list_index(&q->stopped, d);
  if (i < 0)
    return -1;
  list_remove_at(&q->stopped, (size_t)i);
  dmn_dl_free(d);
  return 0;
}

void dmn_q_purge(struct dmn_q *q) {
  for (size_t i = 0; i < q->stopped.n; i++)
    dmn_dl_free(q->stopped.v[i]);
  q->stopped.n = 0;
}

void dmn_q_share(uint64_t overall, size_t n, const uint64_t *lim, uint64_t *out) {
  uint64_t left = overall;
  size_t k = n;
  for (size_t i = 0; i < n; i++)
    out[i] = overall ? UINT64_MAX : lim[i]; /* UINT64_MAX: not given its share yet */
  for (int changed = overall != 0; changed && k;) {
    changed = 0;
    for (size_t i = 0; i < n; i++)
      if (out[i] == UINT64_MAX && lim[i] && lim[i] <= left / k)
        out[i] = lim[i], left -= lim[i], k--, changed = 1;
  }
  for (size_t i = 0; i < n; i++)
    if (out[i] == UINT64_MAX)
      out[i] = left / k ? left / k : 1; /* a share never rounds down to "no limit" */
}
