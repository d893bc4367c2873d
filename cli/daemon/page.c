/* The status page's files and headers (page.h); the bytes come from page_*.c, generated from page.html, page.js and page.css by embed.cmake. */
#include "page.h"

#include <string.h>

extern const char dmn_page_html[], dmn_page_js[], dmn_page_css[];
extern const size_t dmn_page_html_len, dmn_page_js_len, dmn_page_css_len;

/* No inline script or style anywhere ('self' only), so an injected string can never run;
 * connect-src 'self' keeps the secret on this origin; form-action 'none': the forms are
 * handled by the script, never submitted. */
const char dmn_page_headers[] = "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; "
                                "connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; "
                                "frame-ancestors 'none'\r\n"
                                "X-Frame-Options: DENY\r\n"
                                "X-Content-Type-Options: nosniff\r\n"
                                "Referrer-Policy: no-referrer\r\n"
                                "Cache-Control: no-store\r\n";

static const struct {
  const char *path;
  const char *body;
  const size_t *len;
  const char *ctype;
} routes[] = {
    {"/", dmn_page_html, &dmn_page_html_len, "text/html; charset=utf-8"},
    {"/status", dmn_page_html, &dmn_page_html_len, "text/html; charset=utf-8"},
    {"/status.js", dmn_page_js, &dmn_page_js_len, "text/javascript; charset=utf-8"},
    {"/status.css", dmn_page_css, &dmn_page_css_len, "text/css; charset=utf-8"},
};

int dmn_page_find(const char *url, struct dmn_page_file *out) {
  size_t n = strcspn(url, "?#");
  for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
    if (strlen(routes[i].path) == n && !strncmp(url, routes[i].path, n)) {
      *out = (struct dmn_page_file){routes[i].body, *routes[i].len, routes[i].ctype};
      return 1;
    }
  return 0;
}
