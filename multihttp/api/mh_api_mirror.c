/* A transfer's mirrors and pinned replicas: the public calls that add them, the mirrors' own lookups on the loop, and what the split is handed (struct mh_split_mirror, struct mh_split_pin). */
#include "mh_api_int.h"
#include "mh_dns.h"
#include "mh_engine.h"
#include "mh_log.h"
#include "mh_upstream_tls.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- public calls ---------------------------------------------------------------------------- */

MHTTP_API mhttp_code mhttp_xfer_add_mirror(mhttp_xfer *x, const char *url) {
  if (!x)
    return MHTTP_E_INVAL;
  if (!url || x->started || x->mir.nmirrors == MH__API_MIRRORS)
    return mh__x_refuse(x, MHTTP_E_INVAL, "mhttp_xfer_add_mirror: %s",
                        !url         ? "the URL is NULL"
                        : x->started ? "the transfer has started"
                                     : "16 mirrors already");
  struct mh__mirror *m = calloc(1, sizeof *m);
  if (!m)
    return mh__x_refuse(x, MHTTP_E_NOMEM, "mhttp_xfer_add_mirror: out of memory");
  /* a plain mirror of an https URL would mix bytes nobody authenticated into the download */
  if (strlen(url) >= MH__API_URL_MAX || mh_url_parse(url, &m->u) < 0 || (x->u.tls && !m->u.tls)) {
    int plain = m->u.host[0] && x->u.tls && !m->u.tls;
    free(m);
    return mh__x_refuse(x, MHTTP_E_URL, "mirror %.200s: %s", url,
                        plain ? "plain http for an https URL"
                              : "not an http:// or https:// URL this library can fetch");
  }
  m->x = x;
  m->slot = -1;
  m->idx = x->mir.nmirrors + 1;
  x->mir.mirrors[x->mir.nmirrors++] = m;
  return MHTTP_OK;
}

MHTTP_API mhttp_code mhttp_xfer_add_replica(mhttp_xfer *x, const char *addr, const char *iface) {
  if (!x)
    return MHTTP_E_INVAL;
  if (!addr || x->started || x->mir.npins == MH__API_REPLICAS || (iface && (!*iface || strlen(iface) >= 16)))
    return mh__x_refuse(x, MHTTP_E_INVAL, "mhttp_xfer_add_replica: %s",
                        !addr                              ? "the address is NULL"
                        : x->started                       ? "the transfer has started"
                        : x->mir.npins == MH__API_REPLICAS ? "16 replicas already"
                                                           : "the interface name is empty or too long");
  struct sockaddr_storage a = {0};
  struct sockaddr_in *v4 = (struct sockaddr_in *)&a;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&a;
  if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1)
    a.ss_family = AF_INET;
  else if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1)
    a.ss_family = AF_INET6;
  else
    return mh__x_refuse(x, MHTTP_E_INVAL, "replica %.64s: not an IPv4 or IPv6 address", addr);
  x->mir.pins[x->mir.npins] = a; /* port 0: the split gives it the URL's */
  snprintf(x->mir.pin_iface[x->mir.npins], sizeof x->mir.pin_iface[0], "%s", iface ? iface : "");
  x->mir.npins++;
  return MHTTP_OK;
}

/* ---- on the loop: the mirrors' lookups ------------------------------------------------------- */

/* A mirror whose name did not resolve leaves the transfer (it is not its failure): one path
 * down event says so, with no interface and no address. */
static void mh__m_unresolved(struct mh__mirror *m, int status) {
  struct mh__xpath p = {.mirror = m->idx};
  char msg[320];
  snprintf(msg, sizeof msg, "could not resolve host: %s (%s)", m->u.host,
           status < 0 ? uv_strerror(status) : "no address");
  mh_info("api: mirror %s dropped: %s", m->u.hostport, msg);
  mh__x_path_event(m->x, 0, &p, MHTTP_E_RESOLVE, msg);
}

/* The mirror's addresses, as the URL's own (mh_api_xfer.c, mh__x_resolved): noted in multiDNS,
 * which harvests the name on every interface, and read by the split at its next tick. */
static void mh__m_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res) {
  struct mh__mirror *m = req->data;
  struct mhttp_xfer *x = m->x;
  m->gai_busy = 0;
  x->mir.mgai_busy--;
  int n = 0;
  for (struct addrinfo *a = res; a && n < MH__API_ADDRS; a = a->ai_next)
    if ((a->ai_family == AF_INET || a->ai_family == AF_INET6) && a->ai_addrlen <= sizeof m->addrs[0])
      memcpy(&m->addrs[n++], a->ai_addr, a->ai_addrlen);
  uv_freeaddrinfo(res);
  if (x->st == MH__X_ENDED || x->st == MH__X_NEW) { /* ended meanwhile (canceled, freed) */
    x->closing++;
    mh__x_closed(x); /* the memory waits for the last lookup */
    return;
  }
  if (status < 0 || !n) {
    mh__m_unresolved(m, status);
    return;
  }
  m->naddrs = n;
  if (m->slot >= 0)
    x->mir.split_mirrors[m->slot].naddrs = n;
  struct mh_dns *d = mh_engine_dns(x->s->eng);
  mh_dns_note(d, m->u.host, m->addrs, (size_t)n);
  mh_dns_run(d);
}

/* At the start: every mirror's name is looked up at once, beside the URL's, off the loop. */
void mh__x_mirrors_resolve(struct mhttp_xfer *x) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG};
  for (unsigned k = 0; k < x->mir.nmirrors; k++) {
    struct mh__mirror *m = x->mir.mirrors[k];
    if (m->u.tls)
      mh_tls_init(&m->tls, m->u.host, (unsigned)strtoul(m->u.port, NULL, 10), x->o.cacert[0] ? x->o.cacert : NULL,
                  x->o.insecure);
    m->gai.data = m;
    int rc = uv_getaddrinfo(x->s->loop, &m->gai, mh__m_resolved, m->u.host, m->u.port, &hints);
    if (rc < 0) {
      mh__m_unresolved(m, rc);
      continue;
    }
    m->gai_busy = 1;
    x->mir.mgai_busy++;
  }
}

/* The transfer ended: lookups still running are cancelled (their callbacks still come). */
void mh__x_mirrors_stop(struct mhttp_xfer *x) {
  for (unsigned k = 0; k < x->mir.nmirrors; k++)
    if (x->mir.mirrors[k]->gai_busy)
      uv_cancel((uv_req_t *)&x->mir.mirrors[k]->gai);
}

void mh__x_mirrors_free(struct mhttp_xfer *x) {
  for (unsigned k = 0; k < x->mir.nmirrors; k++)
    free(x->mir.mirrors[k]);
  x->mir.nmirrors = 0;
}

/* ---- what a split is handed ------------------------------------------------------------------ */

/* Fills x->mir.split_mirrors for a split of the URL fetched now (x->u) and returns how many: each
 * mirror with its target, Host, transport and the addresses its lookup found so far (the
 * callback adds them later), and whether the request's credentials may go there (the same
 * origin as x->u). After a redirect to https, a plain mirror is left out (never a downgrade). */
unsigned mh__x_split_mirrors(struct mhttp_xfer *x) {
  unsigned n = 0;
  for (unsigned k = 0; k < x->mir.nmirrors; k++) {
    struct mh__mirror *m = x->mir.mirrors[k];
    m->slot = -1;
    if (x->u.tls && !m->u.tls)
      continue;
    m->slot = (int)n;
    x->mir.split_mirrors[n++] = (struct mh_split_mirror){.target = m->u.path,
                                                         .host = m->u.hostport,
                                                         .name = m->u.host,
                                                         .port = (unsigned)strtoul(m->u.port, NULL, 10),
                                                         .tls = m->u.tls ? &m->tls : NULL,
                                                         .same_origin = mh_url_same_origin(&m->u, &x->u),
                                                         .addrs = m->addrs,
                                                         .naddrs = m->naddrs};
  }
  return n;
}

/* The pins for a split of x->u, into out: none once a redirect left the URL's origin (they
 * serve its host). */
unsigned mh__x_split_pins(const struct mhttp_xfer *x, struct mh_split_pin *out) {
  if (!mh_url_same_origin(&x->u, &x->u0))
    return 0;
  for (unsigned k = 0; k < x->mir.npins; k++)
    out[k] =
        (struct mh_split_pin){.addr = x->mir.pins[k], .iface = x->mir.pin_iface[k][0] ? x->mir.pin_iface[k] : NULL};
  return x->mir.npins;
}
