/* SPDX-License-Identifier: Apache-2.0 */
/* sm_etag.h: entity tags as encoding filters change them.
 *
 * mod_deflate (DeflateAlterETag AddSuffix, its default) and mod_brotli
 * append "-gzip" / "-br" inside the quotes of the ETag a handler set when
 * they encode its body, and leave If-None-Match and If-Match alone: the
 * handler then compares the tag it made with one it never made, and a
 * client holding the encoded copy never gets a 304 (httpd bug 45023).
 * The module gives each such tag back to its handler as well. */
#ifndef SM_ETAG_H
#define SM_ETAG_H

#include <apr_pools.h>

/* The list of entity tags (an If-None-Match or If-Match value) with every
 * tag that ends in an encoding filter's suffix followed by the same tag
 * without it: "abc-gzip", W/"x-br" -> "abc-gzip", "abc", W/"x-br", W/"x".
 * NULL when no tag has such a suffix (and for "*" or a value that is not
 * a list of entity tags): the value is then left as it is. */
const char *sm_etag_list_decoded(apr_pool_t *p, const char *list);

/* The tag of list that is etag (a handler's, "abc" or W/"abc") with an
 * encoding filter's suffix ("abc-gzip"), as list has it; NULL if none.
 * On a 304 this is the ETag to send: the one the client holds (mod_deflate
 * does not suffix the ETag of a response without a body). */
const char *sm_etag_encoded_in(apr_pool_t *p, const char *list,
                               const char *etag);

/* 1 when encoded is etag ("abc", W/"abc") as an encoding filter leaves
 * it: with "-gzip" or "-br" before the closing quote ("abc-gzip").  0
 * otherwise, for equal tags too. */
int sm_etag_is_encoded(const char *etag, const char *encoded);
/* The same, etag given as its first n bytes (not NUL-terminated). */
int sm_etag_is_encoded_n(const char *etag, apr_size_t n,
                         const char *encoded);

/* A Vary value with each field name once (case-insensitively), in its
 * first place: "Accept-Encoding, accept-encoding,Cookie" ->
 * "Accept-Encoding, Cookie"; NULL when it has no repeat.  A handler and
 * mod_deflate each add Accept-Encoding to a 200 while a 304 (which
 * mod_deflate leaves alone) has it once: mod_cache_disk keys a variant by
 * the list as given, so the revalidated headers went to another variant
 * than the body (AH00708 "Cannot open data file" on the next request). */
const char *sm_vary_dedup(apr_pool_t *p, const char *vary);

#endif
