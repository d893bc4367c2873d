/* The status page's routes, files and headers (cli/daemon/page.c): which path serves what, the bytes compiled in, a policy that allows no inline code, and a script that never writes markup. */
#include <criterion/criterion.h>
#include <string.h>

#include "page.h"

Test(page, routes) {
  static const struct {
    const char *url, *ctype;
  } t[] = {
      {"/", "text/html; charset=utf-8"},
      {"/status", "text/html; charset=utf-8"},
      {"/status?x=1", "text/html; charset=utf-8"},
      {"/?token=no", "text/html; charset=utf-8"},
      {"/status.js", "text/javascript; charset=utf-8"},
      {"/status.css", "text/css; charset=utf-8"},
      {"/status.js?v=2", "text/javascript; charset=utf-8"},
      {"", NULL},
      {"//", NULL},
      {"/status/", NULL},
      {"/statu", NULL},
      {"/status.jsx", NULL},
      {"/jsonrpc", NULL},
      {"/rpc", NULL},
      {"/status.html", NULL},
      {"/../status", NULL},
      {"/STATUS", NULL},
      {"/favicon.ico", NULL},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    struct dmn_page_file f = {0};
    int found = dmn_page_find(t[i].url, &f);
    cr_expect_eq(found, t[i].ctype != NULL, "%s", t[i].url);
    if (found && t[i].ctype)
      cr_expect_str_eq(f.ctype, t[i].ctype, "%s", t[i].url);
  }
}

static struct dmn_page_file get(const char *url) {
  struct dmn_page_file f = {0};
  cr_assert(dmn_page_find(url, &f), "%s", url);
  cr_assert_gt(f.len, 100);
  cr_assert_eq(strlen(f.body), f.len, "%s: text without NUL, the length of its source", url);
  return f;
}

Test(page, files_are_the_sources) {
  struct dmn_page_file html = get("/"), js = get("/status.js"), css = get("/status.css");
  cr_expect(!strncmp(html.body, "<!DOCTYPE html>", 15));
  cr_expect(strstr(html.body, "src=\"status.js\""));
  cr_expect(strstr(html.body, "href=\"status.css\""));
  cr_expect(strstr(js.body, "'use strict';"));
  cr_expect(strstr(css.body, "progress"));
}

/* the policy allows no inline code, so the page must hold none: a script element without
 * src, a style element or attribute, or an on* handler would be blocked and break it */
Test(page, no_inline_code) {
  const char *html = get("/").body;
  for (const char *p = html; (p = strstr(p, "<script")); p++)
    cr_expect(!strncmp(p, "<script src=", 12), "inline script at %.40s", p);
  cr_expect_null(strstr(html, "<style"));
  cr_expect_null(strstr(html, " style="));
  cr_expect_null(strstr(html, " onclick="));
  cr_expect_null(strstr(html, " onload="));
  cr_expect_null(strstr(html, " onsubmit="));
}

/* data is shown through textContent only: nothing in the script can parse a string as markup
 * or code */
Test(page, script_writes_no_markup) {
  static const char *banned[] = {"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
                                 "eval(",     "Function(", "setTimeout('",       "setTimeout(\""};
  const char *js = get("/status.js").body;
  for (size_t i = 0; i < sizeof banned / sizeof banned[0]; i++)
    cr_expect_null(strstr(js, banned[i]), "%s in page.js", banned[i]);
}

Test(page, headers) {
  const char *h = dmn_page_headers;
  cr_expect(strstr(h, "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; "));
  cr_expect(strstr(h, "connect-src 'self'"));
  cr_expect(strstr(h, "frame-ancestors 'none'"));
  cr_expect_null(strstr(h, "unsafe"));
  cr_expect(strstr(h, "X-Frame-Options: DENY\r\n"));
  cr_expect(strstr(h, "Cache-Control: no-store\r\n"));
  cr_expect(strstr(h, "X-Content-Type-Options: nosniff\r\n"));
  size_t n = strlen(h);
  cr_expect(n > 2 && !strcmp(h + n - 2, "\r\n"));
  for (const char *p = h; (p = strchr(p, '\n')); p++)
    cr_expect_eq(p[-1], '\r', "a bare LF in the headers");
}
