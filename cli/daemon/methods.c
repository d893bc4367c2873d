/* aria2's RPC methods on the daemon's queue: their parameters, results and error messages as aria2 1.36 gives them. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "rpc.h"
#include "url.h"

static json_t *fail(struct dmn_err *e, const char *fmt, const char *arg) {
  e->code = 1;
  snprintf(e->msg, sizeof e->msg, fmt, arg);
  return NULL;
}

static json_t *fail_at(struct dmn_err *e, size_t i, const char *what) {
  e->code = 1;
  snprintf(e->msg, sizeof e->msg, "The parameter at %zu %s.", i, what);
  return NULL;
}

static json_t *ok(void) { return json_string("OK"); }

/* the download named by params[i], or NULL with aria2's error */
static struct dmn_dl *param_dl(struct dmn_rpc *r, json_t *params, size_t i, struct dmn_err *e) {
  json_t *v = json_array_get(params, i);
  if (!v)
    return fail_at(e, i, "is required but missing"), NULL;
  if (!json_is_string(v))
    return fail_at(e, i, "has wrong type"), NULL;
  return dmn_gid_expand(r->q, json_string_value(v), e);
}

static json_t *gid_str(const struct dmn_dl *d) {
  char g[17];
  dmn_gid_fmt(d->gid, g);
  return json_string(g);
}

/* an integer parameter; optional ones take dflt when absent. 0, or -1 with the error. */
static int param_int(json_t *params, size_t i, int optional, long dflt, long *out, struct dmn_err *e) {
  json_t *v = json_array_get(params, i);
  if (!v && optional) {
    *out = dflt;
    return 0;
  }
  if (!v)
    return fail_at(e, i, "is required but missing"), -1;
  if (!json_is_integer(v))
    return fail_at(e, i, "has wrong type"), -1;
  *out = (long)json_integer_value(v);
  return 0;
}

/* Copies the options object o into a new object of the known names, each checked; header
 * keeps its list (aria2 takes a string or a list of strings). */
static json_t *check_opts(json_t *o, struct dmn_err *e) {
  json_t *res = json_object(), *v;
  const char *k;
  if (o && !json_is_object(o))
    return json_decref(res), fail(e, "%s", "Options must be a struct.");
  json_object_foreach(o, k, v) {
    int list = !strcmp(k, "header") && json_is_array(v);
    if (dmn_opt_use(k) == DMN_OPT_UNKNOWN || (!json_is_string(v) && !list))
      continue; /* aria2 skips an unknown name, and a value that is not a string (an XML int) */
    int valid = list || dmn_opt_valid(k, json_string_value(v)) == 0;
    if (!valid) {
      json_decref(res);
      return fail(e, "We encountered a problem while processing the option '--%s'.", k);
    }
    json_object_set(res, k, v);
  }
  return res;
}

/* http or https, as libcurl reads u's scheme: in any case (RFC 3986 §3.1; the engine takes it
 * so). A space is let through: aria2 takes such a URI, and the engine says if it fetches it. */
static int supported_uri(const char *u) {
  char *s = cli_url_part(u, CURLU_ALLOW_SPACE, CURLUPART_SCHEME, 0);
  int ok = s && (!strcmp(s, "http") || !strcmp(s, "https"));
  curl_free(s);
  return ok;
}

/* the new download's GID: the gid option (persepolis names its downloads so), else a fresh
 * one. 0, or -1 with aria2's error: aria2 1.36 drops a download whose gid is malformed or taken
 * and then has none to add (persepolis restarts aria2c on this message). */
static int new_gid(struct dmn_rpc *r, json_t *opts, uint64_t *gid, struct dmn_err *e) {
  json_t *v = json_is_object(opts) ? json_object_get(opts, "gid") : NULL;
  if (!json_is_string(v)) {
    *gid = r->new_gid(r->arg);
    return 0;
  }
  if (dmn_gid_parse(json_string_value(v), gid) < 0 || *gid == 0 || dmn_q_find(r->q, *gid))
    return fail(e, "%s", "No URI to download."), -1;
  return 0;
}

static json_t *m_add_uri(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  json_t *uris = json_array_get(params, 0);
  long pos;
  if (!uris)
    return fail_at(e, 0, "is required but missing");
  if (!json_is_array(uris))
    return fail_at(e, 0, "has wrong type");
  if (json_array_size(uris) == 0)
    return fail(e, "%s", "URI is not provided.");
  for (size_t i = 0; i < json_array_size(uris); i++) {
    const char *u = json_string_value(json_array_get(uris, i));
    if (!u)
      return fail_at(e, 0, "has wrong type");
    if (!supported_uri(u))
      return fail(e, "mhttp daemon downloads http and https URIs only: %s", u);
  }
  if (param_int(params, 2, 1, -1, &pos, e) < 0)
    return NULL;
  uint64_t gid;
  if (new_gid(r, json_array_get(params, 1), &gid, e) < 0)
    return NULL;
  json_t *opts = check_opts(json_array_get(params, 1), e);
  if (!opts)
    return NULL;
  struct dmn_dl *d = dmn_dl_new(gid, json_deep_copy(uris), opts);
  if (!d)
    return fail(e, "%s", "out of memory");
  json_t *g = gid_str(d);
  if (dmn_opt_true(d->opts, "pause"))
    d->status = DMN_PAUSED; /* added paused: waits for unpause (aria2's pause option) */
  json_object_del(d->opts, "pause");
  dmn_q_add(r->q, d, pos);
  return g;
}

/* removes the first URI equal to u: 1, or 0 when none is */
static int del_uri(json_t *uris, const char *u) {
  for (size_t i = 0; i < json_array_size(uris); i++)
    if (!strcmp(json_string_value(json_array_get(uris, i)), u))
      return json_array_remove(uris, i) == 0;
  return 0;
}

/* the URI edit of changeUri on d's list; d->uri follows its first entry */
static json_t *change_uris(struct dmn_dl *d, json_t *del, json_t *add, size_t pos) {
  size_t ndel = 0, nadd = 0;
  for (size_t i = 0; i < json_array_size(del); i++) {
    const char *u = json_string_value(json_array_get(del, i));
    ndel += u && del_uri(d->uris, u);
  }
  for (size_t i = 0; i < json_array_size(add); i++) {
    const char *u = json_string_value(json_array_get(add, i));
    if (!u || !supported_uri(u))
      continue;
    size_t at = pos == SIZE_MAX || pos > json_array_size(d->uris) ? json_array_size(d->uris) : pos++;
    json_array_insert_new(d->uris, at, json_string(u));
    nadd++;
  }
  const char *first = json_string_value(json_array_get(d->uris, 0));
  if (first && strcmp(first, d->uri)) {
    char *u = strdup(first);
    if (u) {
      free(d->uri);
      d->uri = u;
    }
  }
  return json_pack("[I, I]", (json_int_t)ndel, (json_int_t)nadd);
}

static json_t *m_no_bt(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  (void)r, (void)params;
  return fail(e, "%s", "BitTorrent and Metalink are not supported by mhttp daemon (HTTP and HTTPS only).");
}

static json_t *m_tell_status(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  struct dmn_dl *d = param_dl(r, params, 0, e);
  return d ? dmn_status_json(r, d, json_array_get(params, 1)) : NULL;
}

static json_t *m_get_uris(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  struct dmn_dl *d = param_dl(r, params, 0, e);
  if (!d)
    return NULL;
  json_t *files = dmn_files_json(r, d);
  json_t *u = json_incref(json_object_get(json_array_get(files, 0), "uris"));
  json_decref(files);
  return u;
}

static json_t *m_get_files(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  struct dmn_dl *d = param_dl(r, params, 0, e);
  return d ? dmn_files_json(r, d) : NULL;
}

/* each (interface, server) path of the transfer as one aria2 server entry, with the
 * interface, the server's address and its round trip added */
static json_t *m_get_servers(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  struct dmn_dl *d = param_dl(r, params, 0, e);
  if (!d)
    return NULL;
  if (d->status != DMN_ACTIVE)
    return fail(e, "No active download for GID#%s", json_string_value(json_array_get(params, 0)));
  struct dmn_path p[16];
  unsigned n = r->q->eng.paths ? r->q->eng.paths(r->q->eng.ctx, d, p, 16) : 0;
  json_t *servers = json_array();
  for (unsigned i = 0; i < n; i++) {
    char rate[24], srtt[24];
    snprintf(rate, sizeof rate, "%" PRIu64, (uint64_t)p[i].rate);
    snprintf(srtt, sizeof srtt, "%" PRIu32, p[i].srtt_us);
    json_array_append_new(servers, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "uri", d->uri, "currentUri", d->uri,
                                             "downloadSpeed", rate, "interface", p[i].iface, "address", p[i].addr,
                                             "srttUs", srtt));
  }
  return json_pack("[{s:s, s:o}]", "index", "1", "servers", servers);
}

static json_t *m_get_peers(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  return param_dl(r, params, 0, e) ? json_array() : NULL;
}

/* tellActive, tellWaiting, tellStopped over one list: offset (negative: from the end, in
 * reverse order, as aria2), num, keys */
static json_t *tell_list(struct dmn_rpc *r, const struct dmn_list *l, json_t *params, size_t at, struct dmn_err *e) {
  long off = 0, num = (long)l->n;
  if (at > 0 && (param_int(params, 0, 0, 0, &off, e) < 0 || param_int(params, 1, 0, 0, &num, e) < 0))
    return NULL;
  json_t *keys = json_array_get(params, at), *res = json_array();
  long n = (long)l->n, step = off < 0 ? -1 : 1, i = off < 0 ? n + off : off;
  for (long k = 0; k < num && i >= 0 && i < n; k++, i += step)
    json_array_append_new(res, dmn_status_json(r, l->v[i], keys));
  return res;
}

static json_t *m_tell_active(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  return tell_list(r, &r->q->active, params, 0, e);
}
static json_t *m_tell_waiting(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  return tell_list(r, &r->q->waiting, params, 2, e);
}
static json_t *m_tell_stopped(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  return tell_list(r, &r->q->stopped, params, 2, e);
}

static json_t *m_remove(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  struct dmn_dl *d = param_dl(r, params, 0, e);
  if (d && dmn_q_remove(r->q, d) < 0)
    return fail(e, "Active Download not found for GID#%s", json_string_value(json_array_get(params, 0)));
  return d ? gid_str(d) : NULL;
}

static json_t *m_pause(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  struct dmn_dl *d = param_dl(r, params, 0, e);
  if (d && dmn_q_pause(r->q, d) < 0)
    return fail(e, "GID#%s cannot be paused now", json_string_value(json_array_get(params, 0)));
  return d ? gid_str(d) : NULL;
}

static json_t *m_unpause(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  struct dmn_dl *d = param_dl(r, params, 0, e);
  if (d && dmn_q_unpause(r->q, d) < 0)
    return fail(e, "GID#%s cannot be unpaused now", json_string_value(json_array_get(params, 0)));
  return d ? gid_str(d) : NULL;
}

static json_t *m_pause_all(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  (void)params, (void)e;
  for (size_t i = 0; i < r->q->waiting.n; i++)
    if (r->q->waiting.v[i]->status == DMN_WAITING)
      dmn_q_pause(r->q, r->q->waiting.v[i]);
  /* pausing an active one ends its transfer later: the active list is not changed here */
  for (size_t i = r->q->active.n; i-- > 0;)
    if (i < r->q->active.n)
      dmn_q_pause(r->q, r->q->active.v[i]);
  return ok();
}

static json_t *m_unpause_all(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  (void)params, (void)e;
  for (size_t i = 0; i < r->q->waiting.n; i++)
    if (r->q->waiting.v[i]->status == DMN_PAUSED)
      r->q->waiting.v[i]->status = DMN_WAITING;
  dmn_q_fill(r->q);
  return ok();
}

static json_t *m_change_position(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  struct dmn_dl *d = param_dl(r, params, 0, e);
  long pos;
  const char *how = json_string_value(json_array_get(params, 2));
  if (!d || param_int(params, 1, 0, 0, &pos, e) < 0)
    return NULL;
  if (!how)
    return fail_at(e, 2, json_array_get(params, 2) ? "has wrong type" : "is required but missing");
  long to = dmn_q_move(r->q, d, pos, how);
  if (to == -2)
    return fail(e, "Illegal argument: %s", how);
  if (to < 0)
    return fail(e, "GID#%s not found in the waiting queue.", json_string_value(json_array_get(params, 0)));
  return json_integer(to);
}

/* aria2 shows every option as a string: a header list joined by newlines */
static json_t *as_string(json_t *v) {
  if (!json_is_array(v))
    return json_incref(v);
  char buf[4096] = "";
  size_t n = 0;
  for (size_t i = 0; i < json_array_size(v) && n < sizeof buf; i++)
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? "\n" : "",
                          json_string_value(json_array_get(v, i)) ? json_string_value(json_array_get(v, i)) : "");
  return json_string(buf);
}

/* aria2's changeUri on the download's one file: delUris first (each removes one equal URI),
 * then addUris at position (or at the end); answers [deleted, added]. A URI the daemon cannot
 * fetch is not added, as aria2 skips one it cannot parse. A started transfer keeps its servers:
 * the list applies when it next starts (the API fixes mirrors at start). */
static json_t *m_change_uri(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  json_t *idx = json_array_get(params, 1), *del = json_array_get(params, 2), *add = json_array_get(params, 3);
  json_t *posv = json_array_get(params, 4);
  for (size_t i = 0; i < 4; i++)
    if (!json_array_get(params, i))
      return fail_at(e, i, "is required but missing");
  if (!json_is_string(json_array_get(params, 0)))
    return fail_at(e, 0, "has wrong type");
  if (!json_is_integer(idx))
    return fail_at(e, 1, "has wrong type");
  if (json_integer_value(idx) < 1)
    return fail(e, "%s", "The integer parameter at 1 has invalid value: the value must be greater than or equal to 1.");
  if (!json_is_array(del) || !json_is_array(add))
    return fail_at(e, json_is_array(del) ? 3 : 2, "has wrong type");
  if (posv && !json_is_integer(posv))
    return fail_at(e, 4, "has wrong type");
  if (posv && json_integer_value(posv) < 0)
    return fail(e, "%s", "Position must be greater than or equal to 0.");
  struct dmn_dl *d = param_dl(r, params, 0, e);
  if (!d)
    return NULL;
  char g[17];
  dmn_gid_fmt(d->gid, g);
  if (d->status >= DMN_ERROR)
    return fail(e, "Cannot remove URIs from GID#%s", g);
  if (json_integer_value(idx) > 1)
    return fail(e, "%s", "fileIndex is out of range");
  return change_uris(d, del, add, posv ? (size_t)json_integer_value(posv) : SIZE_MAX);
}

static json_t *m_get_option(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  struct dmn_dl *d = param_dl(r, params, 0, e);
  if (!d)
    return NULL;
  json_t *o = json_object(), *v;
  const char *k;
  static const char *const per_dl[] = {"dir",
                                       "continue",
                                       "split",
                                       "max-connection-per-server",
                                       "max-download-limit",
                                       "allow-overwrite",
                                       "auto-file-renaming"};
  for (size_t i = 0; i < sizeof per_dl / sizeof per_dl[0]; i++)
    if ((v = json_object_get(r->global, per_dl[i])))
      json_object_set(o, per_dl[i], v);
  json_object_foreach(d->opts, k, v) json_object_set_new(o, k, as_string(v));
  return o;
}

static json_t *m_change_option(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  struct dmn_dl *d = param_dl(r, params, 0, e);
  if (!d)
    return NULL;
  json_t *o = check_opts(json_array_get(params, 1), e);
  if (!o)
    return NULL;
  /* dir and out of a started download stay: its file is already named; the others apply
   * when it next starts */
  if (d->path) {
    json_object_del(o, "dir");
    json_object_del(o, "out");
  }
  json_object_update(d->opts, o);
  json_decref(o);
  if (r->q->eng.limits)
    r->q->eng.limits(r->q->eng.ctx); /* max-download-limit applies at once */
  return ok();
}

static json_t *m_get_global_option(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  (void)params, (void)e;
  json_t *o = json_copy(r->global);
  json_object_del(o, "rpc-secret");
  return o;
}

static json_t *m_change_global_option(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  json_t *o = check_opts(json_array_get(params, 0), e);
  if (!o)
    return NULL;
  static const char *const fixed[] = {"rpc-listen-port", "rpc-listen-all", "rpc-secret", "rpc-allow-origin-all",
                                      "enable-rpc",      "daemon",         "conf-path"};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    json_object_del(o, fixed[i]);
  json_object_update(r->global, o);
  json_decref(o);
  const char *mc = json_string_value(json_object_get(r->global, "max-concurrent-downloads"));
  const char *mr = json_string_value(json_object_get(r->global, "max-download-result"));
  r->q->max_active = mc ? (unsigned)atoi(mc) : 5;
  r->q->max_results = mr ? (unsigned)atoi(mr) : 1000;
  dmn_q_fill(r->q);
  if (r->q->eng.limits)
    r->q->eng.limits(r->q->eng.ctx); /* max-overall-download-limit re-divided at once */
  return ok();
}

static json_t *m_global_stat(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  (void)params, (void)e;
  double rate = 0;
  for (size_t i = 0; i < r->q->active.n; i++) {
    if (r->q->eng.refresh)
      r->q->eng.refresh(r->q->eng.ctx, r->q->active.v[i]);
    rate += r->q->active.v[i]->rate;
  }
  char b[5][24];
  snprintf(b[0], sizeof b[0], "%" PRIu64, (uint64_t)rate);
  snprintf(b[1], sizeof b[1], "%zu", r->q->active.n);
  snprintf(b[2], sizeof b[2], "%zu", r->q->waiting.n);
  snprintf(b[3], sizeof b[3], "%zu", r->q->stopped.n);
  snprintf(b[4], sizeof b[4], "%" PRIu64, r->q->stopped_total);
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "downloadSpeed", b[0], "uploadSpeed", "0", "numActive", b[1],
                   "numWaiting", b[2], "numStopped", b[3], "numStoppedTotal", b[4]);
}

static json_t *m_get_version(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  (void)params, (void)e;
  return json_pack("{s:s, s:s, s:[s, s, s]}", "version", "1.36.0", "mhttpVersion", r->version, "enabledFeatures",
                   "Async DNS", "HTTPS", "Message Digest");
}

static json_t *m_session_info(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  (void)params, (void)e;
  return json_pack("{s:s}", "sessionId", r->session_id);
}

static json_t *m_purge(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  (void)params, (void)e;
  dmn_q_purge(r->q);
  return ok();
}

static json_t *m_remove_result(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  struct dmn_dl *d = param_dl(r, params, 0, e);
  if (d && dmn_q_forget(r->q, d) < 0)
    return fail(e, "Could not remove download result of GID#%s", json_string_value(json_array_get(params, 0)));
  return d ? ok() : NULL;
}

static json_t *m_save_session(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  (void)params;
  if (!json_object_get(r->global, "save-session"))
    return fail(e, "%s", "Filename is not given.");
  if (!r->save || r->save(r->arg) < 0)
    return fail(e, "%s", "Failed to save the session.");
  return ok();
}

static json_t *m_shutdown(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  (void)params, (void)e;
  if (r->shutdown)
    r->shutdown(r->arg, 0);
  return ok();
}

static json_t *m_force_shutdown(struct dmn_rpc *r, json_t *params, struct dmn_err *e) {
  (void)params, (void)e;
  if (r->shutdown)
    r->shutdown(r->arg, 1);
  return ok();
}

static const struct {
  const char *name;
  dmn_method_fn fn;
} methods[] = {
    {"aria2.addUri", m_add_uri},
    {"aria2.addTorrent", m_no_bt},
    {"aria2.addMetalink", m_no_bt},
    {"aria2.remove", m_remove},
    {"aria2.forceRemove", m_remove},
    {"aria2.pause", m_pause},
    {"aria2.pauseAll", m_pause_all},
    {"aria2.forcePause", m_pause},
    {"aria2.forcePauseAll", m_pause_all},
    {"aria2.unpause", m_unpause},
    {"aria2.unpauseAll", m_unpause_all},
    {"aria2.tellStatus", m_tell_status},
    {"aria2.getUris", m_get_uris},
    {"aria2.getFiles", m_get_files},
    {"aria2.getPeers", m_get_peers},
    {"aria2.getServers", m_get_servers},
    {"aria2.tellActive", m_tell_active},
    {"aria2.tellWaiting", m_tell_waiting},
    {"aria2.tellStopped", m_tell_stopped},
    {"aria2.changePosition", m_change_position},
    {"aria2.changeUri", m_change_uri},
    {"aria2.getOption", m_get_option},
    {"aria2.changeOption", m_change_option},
    {"aria2.getGlobalOption", m_get_global_option},
    {"aria2.changeGlobalOption", m_change_global_option},
    {"aria2.getGlobalStat", m_global_stat},
    {"aria2.purgeDownloadResult", m_purge},
    {"aria2.removeDownloadResult", m_remove_result},
    {"aria2.getVersion", m_get_version},
    {"aria2.getSessionInfo", m_session_info},
    {"aria2.shutdown", m_shutdown},
    {"aria2.forceShutdown", m_force_shutdown},
    {"aria2.saveSession", m_save_session},
};

dmn_method_fn dmn_method_find(const char *name) {
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
    if (!strcmp(methods[i].name, name))
      return methods[i].fn;
  return NULL;
}

json_t *dmn_method_names(void) {
  json_t *a = json_array();
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
    json_array_append_new(a, json_string(methods[i].name));
  static const char *const sys[] = {"system.multicall", "system.listMethods", "system.listNotifications"};
  for (size_t i = 0; i < 3; i++)
    json_array_append_new(a, json_string(sys[i]));
  return a;
}
