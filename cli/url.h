/* URLs read with libcurl's URL API (curl_url), as curl reads its command line: the one URL reader of the mhttp command and of mhttp daemon. */
#ifndef CLI_URL_H
#define CLI_URL_H
#include <curl/curl.h>

/* A part of url as libcurl reads it (curl_url_set with set_flags, curl_url_get with get_flags):
 * a string to curl_free, NULL when libcurl cannot read the URL or the part is not there. */
char *cli_url_part(const char *url, unsigned set_flags, CURLUPart part, unsigned get_flags);

/* 1 when libcurl reads url and its scheme is `scheme`, given in lower case ("http"): libcurl
 * lowers the scheme, which RFC 3986 §3.1 makes case-insensitive. */
int cli_url_scheme_is(const char *url, const char *scheme);

#endif
