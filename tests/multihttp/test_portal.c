/* The engine's own portal check (mh_portal.c): the URL a user gives, and what an answer's head says about the interface it came over. */
#include <criterion/criterion.h>
#include <string.h>

#include "mh_config.h"
#include "mh_portal.h"

Test(portal, url_parse) {
  const struct {
    const char *url;
    int rc;
    const char *host, *path;
    unsigned port;
  } rows[] = {
      {"http://10.0.0.1/generate_204", 0, "10.0.0.1", "/generate_204", 80},
      {"http://check.example:8080/x?y=1", 0, "check.example", "/x?y=1", 8080},
      {"http://[fd00::1]:81/c", 0, "fd00::1", "/c", 81},
      {"http://[fd00::1]", 0, "fd00::1", "/", 80},
      {"http://h", 0, "h", "/", 80},
      {"https://h/", -1, NULL, NULL, 0},
      {"http:///p", -1, NULL, NULL, 0},
      {"http://h:0/", -1, NULL, NULL, 0},
      {"http://h:65536/", -1, NULL, NULL, 0},
      {"http://h:/", 0, "h", "/", 80}, /* an empty port is the default (RFC 3986) */
      {"http://[fd00::1/", -1, NULL, NULL, 0},
      {"http://[fd00::1]x/", -1, NULL, NULL, 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    struct mh_url u;
    cr_assert_eq(mh_config_portal_url(rows[i].url, &u), rows[i].rc, "%s", rows[i].url);
    if (rows[i].rc)
      continue;
    cr_assert_str_eq(u.host, rows[i].host, "%s", rows[i].url);
    cr_assert_str_eq(u.path, rows[i].path, "%s", rows[i].url);
    cr_assert_eq(u.portnum, rows[i].port, "%s", rows[i].url);
  }
}

Test(portal, verdict_of_an_answer) {
  const struct {
    const char *head;
    enum pol_link want;
  } rows[] = {
      {"HTTP/1.1 204 No Content\r\n\r\n", POL_LINK_FULL},
      {"HTTP/1.0 204 No Content\r\nServer: x\r\n\r\n", POL_LINK_FULL},
      {"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", POL_LINK_FULL},
      {"HTTP/1.1 200 OK\r\ncontent-length:0\r\n\r\n", POL_LINK_FULL},
      {"HTTP/1.1 200 OK\r\nContent-Length: 213\r\n\r\n<html>", POL_LINK_PORTAL}, /* a login page */
      {"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", POL_LINK_PORTAL},         /* no length: a body */
      {"HTTP/1.1 302 Found\r\nLocation: http://portal.test/login\r\n\r\n", POL_LINK_PORTAL},
      {"HTTP/1.1 511 Network Authentication Required\r\n\r\n", POL_LINK_PORTAL},
      {"HTTP/1.1 204 No Content\r\n", POL_LINK_UNKNOWN}, /* head not complete */
      {"SSH-2.0-OpenSSH\r\n\r\n", POL_LINK_UNKNOWN},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    cr_assert_eq(mh_portal_verdict(rows[i].head, strlen(rows[i].head)), rows[i].want, "row %zu", i);
}

Test(portal, config_takes_off_or_a_url) {
  struct mh_config c;
  char err[256];
  mh_config_defaults(&c);
  cr_assert_str_eq(c.portal_check, "off");
  cr_assert_eq(mh_config_set(&c, "portal_check", "http://10.0.0.1/generate_204", "test", err, sizeof err), 0);
  cr_assert_str_eq(c.portal_check, "http://10.0.0.1/generate_204");
  cr_assert_eq(mh_config_set(&c, "portal_check", "ftp://x/", "test", err, sizeof err), -1);
  cr_assert(strstr(err, "portal_check"), "%s", err);
  cr_assert_eq(mh_config_set(&c, "portal_check", "off", "test", err, sizeof err), 0);
}
