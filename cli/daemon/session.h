/* aria2's session file (--save-session, --input-file): one line of tab-separated URIs per download, then its options as indented name=value lines. Pure: text in, text out. */
#ifndef DMN_SESSION_H
#define DMN_SESSION_H
#include <jansson.h>

#include "queue.h"

/* The unfinished downloads of q (active, waiting and paused, in that order; an error one
 * too, as aria2 keeps it for a retry) as a session text, with gid, each option and pause=true
 * for a paused one. The caller frees it. */
char *dmn_session_format(const struct dmn_q *q);
/* Parses a session text into an array of {"uris": [...], "opts": {...}}; "gid" and "pause"
 * come as options. Lines of options before any URI line, and blank or # lines, are skipped. */
json_t *dmn_session_parse(const char *text);

#endif
