/* aria2's download status object (tellStatus, tellActive/Waiting/Stopped, getFiles) built from a queued download. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rpc.h"

#define DMN_PIECE 1048576u /* aria2's default piece length, shown as pieceLength */

static json_t *num(uint64_t v) {
  char b[24];
  snprintf(b, sizeof b, "%" PRIu64, v);
  return json_string(b);
}

static const char *dir_of(struct dmn_rpc *r, const struct dmn_dl *d) {
  const char *dir = json_string_value(json_object_get(d->opts, "dir"));
  if (!dir)
    dir = json_string_value(json_object_get(r->global, "dir"));
  return dir ? dir : "";
}

json_t *dmn_files_json(struct dmn_rpc *r, const struct dmn_dl *d) {
  (void)r;
  json_t *uris = json_array();
  const char *ustat = d->status == DMN_ACTIVE || d->status >= DMN_ERROR ? "used" : "waiting";
  for (size_t i = 0; i < json_array_size(d->uris); i++)
    json_array_append_new(uris, json_pack("{s:O, s:s}", "uri", json_array_get(d->uris, i), "status", ustat));
  json_t *f = json_pack("{s:s, s:s, s:o, s:o, s:s, s:o}", "index", "1", "path", d->path ? d->path : "", "length",
                        num(d->total), "completedLength", num(d->done), "selected", "true", "uris", uris);
  return json_pack("[o]", f);
}

/* the whole object, before the key filter */
static json_t *full(struct dmn_rpc *r, struct dmn_dl *d) {
  char gid[17];
  dmn_gid_fmt(d->gid, gid);
  if (d->status == DMN_ACTIVE && r->q->eng.refresh)
    r->q->eng.refresh(r->q->eng.ctx, d);
  uint64_t pieces = (d->total + DMN_PIECE - 1) / DMN_PIECE;
  json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:s, s:o, s:s, s:o, s:o, s:o, s:s, s:o}", "gid", gid, "status",
                        dmn_status_name(d->status), "totalLength", num(d->total), "completedLength", num(d->done),
                        "uploadLength", "0", "downloadSpeed", num((uint64_t)d->rate), "uploadSpeed", "0", "connections",
                        num(d->connections), "numPieces", num(pieces), "pieceLength", num(DMN_PIECE), "dir",
                        dir_of(r, d), "files", dmn_files_json(r, d));
  if (d->status == DMN_ERROR) {
    json_object_set_new(o, "errorCode", num((uint64_t)d->error_code));
    json_object_set_new(o, "errorMessage", json_string(d->error_msg ? d->error_msg : ""));
  } else if (d->status == DMN_COMPLETE || d->status == DMN_REMOVED) {
    json_object_set_new(o, "errorCode", json_string("0"));
    json_object_set_new(o, "errorMessage", json_string(""));
  }
  return o;
}

json_t *dmn_status_json(struct dmn_rpc *r, struct dmn_dl *d, const json_t *keys) {
  json_t *o = full(r, d);
  if (!json_is_array(keys) || json_array_size(keys) == 0)
    return o;
  json_t *f = json_object();
  for (size_t i = 0; i < json_array_size(keys); i++) {
    const char *k = json_string_value(json_array_get(keys, i));
    json_t *v = k ? json_object_get(o, k) : NULL;
    if (v)
      json_object_set(f, k, v);
  }
  json_decref(o);
  return f;
}
