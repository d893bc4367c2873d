/* Absolute http and https URLs as a request needs them: one parser for every URL the library takes (the API's, a redirect's Location, a mirror's, the portal check's). */
#ifndef MH_URL_H
#define MH_URL_H

#define MH_URL_MAX 4096

struct mh_url {
  int tls;               /* https */
  char host[256];        /* a name, an IPv4 literal, or an IPv6 literal without brackets */
  char port[8];          /* decimal: the explicit port, else 80 or 443 (getaddrinfo's service) */
  unsigned portnum;      /* the same, as a number */
  char hostport[272];    /* the authority as written: the Host header */
  char path[MH_URL_MAX]; /* origin-form: "/..." with the query, without the fragment */
};

/* Pure: parses url (http:// or https://, the scheme in any case) into *u. 0, or -1: another
 * scheme, an empty or too long host, userinfo (credentials in a URL are not this library's to
 * send), a port that is not 1-65535 (an empty one is the default, RFC 3986), an unclosed IPv6
 * literal, or a space or control character (it would change the request line). */
int mh_url_parse(const char *url, struct mh_url *u);

/* Pure: 1 when a and b are one origin (RFC 6454: scheme, host without case, port). */
int mh_url_same_origin(const struct mh_url *a, const struct mh_url *b);

#endif
