/* HTTP rules for range splitting (RFC 9110 §14, §13.1.5): eligibility, probe classification, header rewriting. */
#ifndef MH_RANGE_H
#define MH_RANGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A header field as a view into a buffer owned by the caller (typically the parser's copy of
 * the header block). Names compare case-insensitively; values are taken without the OWS
 * around them. */
struct mh_hdr {
  const char *name;
  size_t name_len;
  const char *value;
  size_t value_len;
};

/* A parsed request head, all views into caller-owned memory. has_body is set when the request
 * carries Content-Length > 0 or any Transfer-Encoding. */
struct mh_req_view {
  const char *method;
  size_t method_len;
  const char *target;
  size_t target_len;
  int http_major, http_minor;
  const struct mh_hdr *hdrs;
  size_t nhdrs;
  int has_body;
};

/* Why a request is relayed byte for byte instead of split. MH_RR_SPLITTABLE is 0 so the
 * result reads as "no objection". */
enum mh_rr_verdict {
  MH_RR_SPLITTABLE = 0,
  MH_RR_NOT_GET,         /* only GET is safe to turn into several requests */
  MH_RR_NOT_ORIGIN_FORM, /* absolute-form or authority-form: the program talks to a proxy */
  MH_RR_VERSION,         /* not HTTP/1.0 or HTTP/1.1 */
  MH_RR_HAS_BODY,
  MH_RR_HAS_RANGE, /* the program's Range is not one span the split serves exactly
                           * (several ranges, a suffix, another unit, garbage, two Range
                           * lines, an If-Range without Range or twice): its semantics stay
                           * its own */
  MH_RR_NO_HOST,   /* HTTP/1.0 without Host: the engine's own range requests are
                           * HTTP/1.1, which needs one (none is ever added) */
  MH_RR_UPGRADE,   /* protocol switch: the bytes after the head are not HTTP */
  MH_RR_EXPECT,    /* Expect: the program waits for an interim answer */
  MH_RR_BAD_FIELD, /* a header name that is not a token (an obs-fold line), a value
                           * with CR, LF, NUL or another control, or a request-target with a
                           * space or control: never re-emitted */
};

/* Splits one request head (request line to the blank line, nothing after it) into views, as
 * llhttp reads it: method, target, version, header names and values without OWS, has_body
 * from Content-Length (not 0) or Transfer-Encoding. hdrs holds up to max headers. 0, or
 * -EINVAL: not a head llhttp takes, more lines than max, or bytes after it. */
int mh_rr_parse_request(const char *p, size_t n, struct mh_req_view *v, struct mh_hdr *hdrs, size_t max);
/* Returns the verdict for one request head (pure, no allocation). A request with one span of
 * its own (mh_rr_request_span) is splittable: the program then gets the origin's 206 for it. */
enum mh_rr_verdict mh_rr_request_verdict(const struct mh_req_view *req);

/* The span a program's own Range asks: bytes first..last of the representation, inclusive;
 * last is MH_RR_TO_END for "bytes=first-". */
struct mh_rr_span {
  uint64_t first, last;
};

/* Parses a Range value the split can serve exactly: one "bytes=first-last" or "bytes=first-"
 * (unit case-insensitive, no whitespace inside). 0; -ENOTSUP for a valid request the split
 * leaves alone (a suffix "bytes=-N", several ranges, another unit); -EINVAL when it is not a
 * range (garbage, first > last, a number of more than 19 digits): an origin ignores it, and
 * so does the split (relayed). Pure. */
int mh_rr_parse_range(const char *v, size_t len, struct mh_rr_span *out);

/* The program's own span: 1 with *span filled (and *if_range its If-Range, or NULL), 0 when
 * it sent neither Range nor If-Range, -ENOTSUP when it sent something mh_rr_parse_range does
 * not take, two Range lines, an If-Range without Range (the origin ignores that one; the
 * split's Range would not) or two If-Range lines. Pure. */
int mh_rr_request_span(const struct mh_req_view *req, struct mh_rr_span *span, const struct mh_hdr **if_range);
/* Does the program expect its connection to stay open after this request's response?
 * HTTP/1.1 unless a Connection header lists close; HTTP/1.0 only when one lists keep-alive. */
int mh_rr_request_keeps_alive(const struct mh_req_view *req);

/* Short constant text for logs ("splittable", "not GET", ...). */
const char *mh_rr_verdict_str(enum mh_rr_verdict v);

/* What to do with the answer to the probe (the program's request + Range: bytes=0-(INIT-1)). */
enum mh_probe_action {
  MH_PROBE_MANAGED, /* 206 with one usable Content-Range: split the rest */
  MH_PROBE_RELAY,   /* the answer cannot depend on our Range (a 200 without Content-Range,
                       mh_rr_probe_status_relayable): relay verbatim */
  MH_PROBE_RESEND,  /* anything else (416, 403, 5xx, 1xx, a 206 we cannot manage, a 200
                       naming a range): send the original request, relay that answer */
};

/* 1 when a probe answered with this status (not 200 or 206) is what the program's own request
 * would have got too: redirects, 304, 204, 404, 410. Pure. */
int mh_rr_probe_status_relayable(int status);

/* What the probe told us, views into the caller's header buffer. */
struct mh_probe_info {
  uint64_t first, last; /* the range the probe answered: bytes first..last, inclusive */
  uint64_t total;       /* the representation's length */
  const char *etag;     /* NULL when absent */
  size_t etag_len;
  int etag_strong;           /* a quoted entity-tag without W/ */
  const char *last_modified; /* NULL when absent */
  size_t last_modified_len;
  int last_modified_strong;     /* Date is at least 1 s after Last-Modified (§8.8.2.2) */
  const char *content_encoding; /* NULL when absent */
  size_t content_encoding_len;
  /* the representation's digest fields, when the probe had exactly one line of each (NULL
     * otherwise): every later answer that names one must name the same (RFC 9530 §3) */
  const char *repr_digest;
  size_t repr_digest_len;
  const char *digest; /* RFC 3230's Digest */
  size_t digest_len;
};

/* Classifies the probe's response head. status is the numeric status code. On
 * MH_PROBE_MANAGED, info is filled; otherwise its contents are unspecified. Pure. */
enum mh_probe_action mh_rr_classify_probe(int status, const struct mh_hdr *hdrs, size_t n, struct mh_probe_info *info);
/* The same for a probe that asked from byte `first` on (the start of the program's own span):
 * a 206 is managed only when its Content-Range starts there. */
enum mh_probe_action mh_rr_classify_probe_at(int status, const struct mh_hdr *hdrs, size_t n, uint64_t first,
                                             struct mh_probe_info *info);

/* The ETag and Last-Modified of a response head into info (each only when it appears once;
 * Last-Modified strong per Date, §8.8.2.2); the other fields are left alone. Pure. */
void mh_rr_head_validators(const struct mh_hdr *hdrs, size_t n, struct mh_probe_info *info);
/* The first header named name (case-insensitive) and, in *count when not NULL, how many
 * there are; NULL when none. Pure. */
const struct mh_hdr *mh_rr_header(const struct mh_hdr *hdrs, size_t n, const char *name, size_t *count);

/* The validator to send in If-Range for further ranges: the strong ETag, else a strong
 * Last-Modified, else none (NULL): then the object may only be split across connections to
 * the same origin address. */
const char *mh_rr_if_range(const struct mh_probe_info *info, size_t *len);

/* Checks a response to a further range request against the probe: status 206, one
 * Content-Range covering exactly first..last with the probe's total, a Content-Length (when
 * present) of exactly that many bytes, the same strong validator and the same Content-Encoding. Returns 0 when consistent, -EPROTO when the source serves
 * another representation (including a 200 after a failed If-Range), -EBADMSG when the answer
 * is malformed (a repeated ETag, Last-Modified or Content-Encoding included). */
int mh_rr_check_range_response(const struct mh_probe_info *probe, int status, const struct mh_hdr *hdrs, size_t n,
                               uint64_t first, uint64_t last);

/* Checks a 200 to a further range request against the probe (SP_PLAIN takes the whole
 * representation and skips what it has): no Content-Range, a length (Content-Length equal to
 * the probe's total, or chunked), the same validators and Content-Encoding. 0, -EPROTO (another
 * representation) or -EBADMSG. */
int mh_rr_check_whole_response(const struct mh_probe_info *probe, const struct mh_hdr *hdrs, size_t n);

/* Writes the head the program sees for a managed transfer into out: "<version> 200 OK", every
 * header of the probe's answer in order except Content-Range, Content-Length set to total,
 * Transfer-Encoding dropped (the body is de-chunked). version is e.g. "HTTP/1.1". Returns the
 * length written, -ENOSPC when cap is too small, or -EINVAL when a header name is not a token
 * or a value holds a control byte other than HTAB (CR, LF, NUL...): every line written is one
 * of the input's (out is unspecified on error). */
ssize_t mh_rr_rewrite_head(const char *version, const struct mh_hdr *hdrs, size_t n, uint64_t total, char *out,
                           size_t cap);

/* Writes the head the program sees for its own span served by a split, as the origin sends it
 * for that span: "<version> 206 <reason>" (the probe's reason phrase), every header of the
 * probe's answer in order, its Content-Range replaced in place by "bytes first-last/total",
 * Content-Length set to last - first + 1 (Transfer-Encoding gives way as for
 * mh_rr_rewrite_head). Same returns; -EINVAL also for a reason with a control byte. */
ssize_t mh_rr_rewrite_span_head(const char *version, const char *reason, size_t reason_len, const struct mh_hdr *hdrs,
                                size_t n, uint64_t first, uint64_t last, uint64_t total, char *out, size_t cap);

/* `last` for a range that runs to the object's end: "bytes=first-". The end is asked this way
 * so that an origin whose object is longer than the total it claims answers with a
 * Content-Range that does not match (a closed range would hide it). */
#define MH_RR_TO_END UINT64_MAX

/* Writes a range request into out: the program's request line and headers unchanged, minus
 * any Range/If-Range, plus "Range: bytes=first-last" ("bytes=first-" for MH_RR_TO_END) and, when if_range is not NULL,
 * "If-Range: <if_range>". keep_alive drops a "Connection: close" and sends HTTP/1.1 so the
 * engine may pipeline more requests on the connection (Connection is hop-by-hop: the
 * upstream connection is the engine's, not the program's). Returns the length, -ENOSPC, or
 * -EINVAL when the method is not a token, the target holds a space or control byte, or a
 * header (or if_range) is malformed as for mh_rr_rewrite_head: no line is ever added that the
 * program did not send, beyond Range and If-Range. */
ssize_t mh_rr_range_request(const struct mh_req_view *req, uint64_t first, uint64_t last, const char *if_range,
                            size_t if_range_len, int keep_alive, char *out, size_t cap);

/* Where a range request goes instead of the program's server: a mirror, another URL serving
 * the same representation (mhttp_xfer_add_mirror). Views into the caller's memory. */
struct mh_rr_mirror {
  const char *target; /* its origin-form request-target ("/path?query") */
  size_t target_len;
  const char *host; /* its Host value ("b.test", "b.test:8080") */
  size_t host_len;
  int same_origin; /* 1: the same scheme, host and port as the program's request, whose
                      credentials then go there too; 0: they stay home (curl drops them
                      on a redirect to another origin) */
};

/* 1 for a header that carries credentials for the server it was given to: Authorization,
 * Cookie, Proxy-Authorization (case-insensitive). Pure. */
int mh_rr_is_credential(const char *name, size_t len);

/* mh_rr_range_request for a mirror (to NULL: the program's own server, the same request):
 * the request-target and Host are the mirror's (its Host where the program's first Host line
 * stood, or after the program's headers when it sent none; a second Host line is dropped),
 * and without same_origin no credential line (mh_rr_is_credential) goes out. -EINVAL also for
 * a mirror target with a space or control byte, or an empty or malformed Host value. */
ssize_t mh_rr_range_request_to(const struct mh_req_view *req, const struct mh_rr_mirror *to, uint64_t first,
                               uint64_t last, const char *if_range, size_t if_range_len, int keep_alive, char *out,
                               size_t cap);

/* Parses "bytes FIRST-LAST/TOTAL" (TOTAL numeric). Returns 0 or -EINVAL. */
int mh_rr_parse_content_range(const char *v, size_t len, uint64_t *first, uint64_t *last, uint64_t *total);

/* Parses an HTTP-date (IMF-fixdate, RFC 850 or asctime form) into seconds since the epoch,
 * independent of the process locale and time zone. Returns 0 or -EINVAL. */
int mh_rr_parse_http_date(const char *v, size_t len, int64_t *out);

#endif
