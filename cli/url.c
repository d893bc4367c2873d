/* URLs read with libcurl's URL API (url.h): the mhttp command's and mhttp daemon's one URL reader, so neither splits a URL by hand. */
#include "url.h"

#include <string.h>

char *cli_url_part(const char *url, unsigned set_flags, CURLUPart part, unsigned get_flags) {
  CURLU *h = curl_url();
  char *v = NULL;
  if (h && curl_url_set(h, CURLUPART_URL, url, set_flags) == CURLUE_OK &&
      curl_url_get(h, part, &v, get_flags) != CURLUE_OK)
    v = NULL;
  curl_url_cleanup(h);
  return v;
}

int cli_url_scheme_is(const char *url, const char *scheme) {
  char *s = cli_url_part(url, 0, CURLUPART_SCHEME, 0);
  int is = s && !strcmp(s, scheme);
  curl_free(s);
  return is;
}
