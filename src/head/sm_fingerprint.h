/* SPDX-License-Identifier: Apache-2.0 */
/* sm_fingerprint.h: a fingerprint of an HTML document's content, for pages
 * that send no validator of their own (no ETag, no real Last-Modified):
 * the store keeps it in the ETag's place, so a page's lastmod moves when
 * its content changes and only then.
 *
 * Fed the body in chunks of any size, split anywhere (the result does not
 * depend on where), it hashes the document as a browser would show it,
 * leaving out what changes from one response to the next without changing
 * the page:
 *   - comments (<!-- ... -->): timing reports, cache keys;
 *   - the content of <script> and <style> (request ids, nonces, timings in
 *     inline JavaScript, per-request CSS);
 *   - hidden form inputs (<input type="hidden">: nonces, CSRF tokens,
 *     timestamps) and <meta name="csrf-token|csrf-param|_token">;
 *   - attributes whose name ends in "nonce" (nonce=, data-nonce=);
 *   - whitespace: a run between two words is one space, and blanks next
 *     to a tag (or a comment) are none.
 * Everything else counts: text, tags, attribute names and values (so a new
 * title, a noindex, a canonical, a link or an image is a change).  Bounded
 * state: one tag in progress (SM_FP_TAG_MAX bytes; a longer tag is hashed
 * as far as that), and at most SM_FP_LIMIT bytes of a body are read. */
#ifndef SM_FINGERPRINT_H
#define SM_FINGERPRINT_H

#include <apr.h>
#include <apr_pools.h>

#define SM_FP_LIMIT   (8 * 1024 * 1024)
#define SM_FP_TAG_MAX 4096

typedef struct sm_fingerprint sm_fingerprint;

/* A fingerprint in progress, allocated from p. */
sm_fingerprint *sm_fingerprint_create(apr_pool_t *p);

/* Read the next len bytes of the body.  Returns 1 once nothing more will
 * be read (SM_FP_LIMIT reached), 0 while more is wanted. */
int sm_fingerprint_feed(sm_fingerprint *fp, const char *data,
                        apr_size_t len);

/* The document ended: its fingerprint (never 0). */
apr_uint64_t sm_fingerprint_end(sm_fingerprint *fp);

/* The stored form of a fingerprint, in the ETag's place: "fp:" and 16 hex
 * digits.  A stored ETag never has this form (a real one is quoted). */
const char *sm_fingerprint_tag(apr_pool_t *p, apr_uint64_t fp);
int sm_fingerprint_is_tag(const char *etag);

#endif
