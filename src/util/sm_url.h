/* SPDX-License-Identifier: Apache-2.0 */
/* sm_url.h: URL normalisation (RFC 3986 section 6.2.2) and base URLs.
 *
 * Stored URLs are "path[?query]" in a canonical form, so that the many
 * spellings a client can use for one resource are stored once:
 *   - percent-escapes are written with uppercase hex digits;
 *   - escapes of unreserved characters (ALPHA DIGIT - . _ ~) are decoded;
 *   - bytes that may not appear literally (controls, space, " < > \ ^ ` { | }
 *     [ ] and every byte >= 0x80; in a query also '\'') are
 *     percent-encoded, so that the URL a crawler derives from the <loc>
 *     (WHATWG URL rules, w3lib's safe_url_string) is the stored one;
 *   - dot segments ("." and "..", also when written %2E) are removed, and
 *     runs of "/" are merged into one, as httpd itself does by default
 *     (MergeSlashes On), so "/a//b" and "/a/./b" are both "/a/b";
 *   - an escaped slash stays escaped ("%2f" becomes "%2F"), since it names a
 *     different resource than "/".
 * Everything returned is allocated from the pool passed in. */
#ifndef SM_URL_H
#define SM_URL_H

#include <apr_pools.h>
#include <apr_tables.h>

/* The sitemaps.org limit on a <loc>, in characters (base included). */
#define SM_URL_MAX 2048
/* The official schema's shortest <loc> (sitemap.xsd, tLoc minLength). */
#define SM_LOC_MIN_LEN 12

typedef enum {
    SM_URL_OK = 0,
    SM_URL_BAD_ESCAPE,     /* "%" not followed by two hex digits */
    SM_URL_NOT_PATH,       /* not origin-form ("/..."), nor absolute-form
                              http(s)://host/... ; or contains a NUL byte */
    SM_URL_QUERY_REFUSED,  /* a query parameter name is not allowed */
    SM_URL_TOO_LONG,       /* base + path + query longer than SM_URL_MAX */
    SM_URL_CONTROL         /* a control character (0x00-0x1F, 0x7F),
                              literal or escaped ("%00"), in the path or a
                              query field: never stored (issue 33) */
} sm_url_status;

/* A short English reason for a status, for logs and sitemapctl. */
const char *sm_url_status_str(sm_url_status st);

/* Normalise a raw path (the bytes before '?', exactly as the client sent
 * them; must start with '/').  *out is the canonical path. */
sm_url_status sm_url_normalize_path(apr_pool_t *p, const char *raw,
                                    apr_size_t len, char **out);

/* Check and normalise a raw query (the bytes after '?', without it).
 * Every parameter name (the part of each '&'-separated field before '=',
 * percent-decoded, '+' read as space) must be in allow (an array of
 * const char *; compared exactly, case-sensitively), else
 * SM_URL_QUERY_REFUSED.  Empty fields ("a=1&&b=2", a trailing '&') are
 * dropped; an empty query gives *out = NULL and SM_URL_OK.  The fields keep
 * their order.  allow may be NULL (nothing allowed). */
sm_url_status sm_url_normalize_query(apr_pool_t *p, const char *raw,
                                     const apr_array_header_t *allow,
                                     char **out);

/* The whole job for a request target (r->unparsed_uri: origin-form
 * "/p?q", or absolute-form "http://host/p?q" whose scheme and authority
 * are ignored).  On success *path is the canonical path (what exclude
 * patterns are matched against) and *url the stored form: path, plus '?'
 * and the canonical query when one remains.  base_len is the length of the
 * site's base URL, counted in the SM_URL_MAX limit.  A fragment ('#...')
 * is dropped. */
sm_url_status sm_url_from_target(apr_pool_t *p, const char *target,
                                 const apr_array_header_t *allow,
                                 apr_size_t base_len,
                                 char **path, char **url);

/* Every parameter name of the query in target (up to '#'), decoded as
 * sm_url_normalize_query compares them: with it as allow, only a name
 * holding a NUL byte is refused (sitemapctl's URLs, the verdict notes of
 * a refused query). */
apr_array_header_t *sm_url_query_names(apr_pool_t *p, const char *target);

/* Is url in the form sm_url_from_target stores ("/path[?query]", only
 * the bytes the normaliser leaves literal, escapes in uppercase and never
 * of an unreserved character)?  Rows read back from the store are checked
 * with it before they are written into a sitemap: a byte that the XML or
 * URL rules forbid (a control byte, invalid UTF-8) can never pass. */
int sm_url_is_stored_form(const char *url);

/* Validate a site base URL "scheme://host[:port]" (scheme http or https; a
 * single trailing "/" is accepted; no userinfo, path, query or fragment;
 * port 1-65535).  Returns the canonical form: scheme and host in lowercase,
 * the scheme's default port dropped, no trailing slash.  On error returns
 * NULL and sets *err to a sentence saying what is wrong. */
const char *sm_url_parse_base(apr_pool_t *p, const char *in,
                              const char **err);

#endif
