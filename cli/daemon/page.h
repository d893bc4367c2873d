/* The daemon's status page: its files (page.html at / and /status, page.js, page.css), compiled into the binary, and the headers they are served with. Pure. */
#ifndef DMN_PAGE_H
#define DMN_PAGE_H
#include <stddef.h>

struct dmn_page_file {
  const char *body;
  size_t len;
  const char *ctype;
};

/* The file served at url (its path; a query is ignored) in *out: 1, or 0 when url is none of
 * them. The files hold no secret: the page asks for it and sends it with each RPC call. */
int dmn_page_find(const char *url, struct dmn_page_file *out);

/* Header lines (each ending in CRLF) every page file is sent with: a Content-Security-Policy
 * that lets the page load only its own files and talk only to its own origin, no framing, no
 * caching, no referrer, no type sniffing. */
extern const char dmn_page_headers[];

#endif
