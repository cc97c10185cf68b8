/* SPDX-License-Identifier: Apache-2.0 */
/* sm_alternates.h: a page's hreflang alternates (<link rel="alternate"
 * hreflang="xx" href="...">, found by the head reader, sm_head.h), as they
 * are stored with the URL and served in its <url> as
 * <xhtml:link rel="alternate" hreflang="xx" href="..."/>.
 *
 * Stored form: one text, "hreflang SP href" per alternate, joined by "\n",
 * in the order the head gave them ("" for none).  hreflang is lowercased
 * and BCP-47-ish (sm_hreflang_canon); href is absolute, its base canonical
 * (sm_url_parse_base) and its path and query normalised as stored URLs are
 * (sm_url_from_target), so neither holds a blank.  At most
 * SM_ALTERNATES_MAX, each hreflang once.  Everything read back from a
 * store is checked again (sm_alternates_parse): a row no writer could have
 * made is skipped, never written into a document. */
#ifndef SM_ALTERNATES_H
#define SM_ALTERNATES_H

#include <apr_pools.h>
#include <apr_tables.h>

#include "head/sm_head.h"

/* Alternates kept per URL: the head reader's own bound. */
#define SM_ALTERNATES_MAX SM_HEAD_MAX_ALTERNATES
/* The longest hreflang accepted (BCP 47's longest useful tags are 35). */
#define SM_HREFLANG_MAX 35

typedef struct {
    const char *hreflang;
    const char *href;
} sm_alternate;

/* hreflang lowercased, from p, when it is "x-default" or a BCP-47-ish tag:
 * subtags of 1 to 8 ASCII letters or digits joined by single '-', the
 * first of 2 to 8 letters, at most SM_HREFLANG_MAX characters; else NULL. */
const char *sm_hreflang_canon(apr_pool_t *p, const char *in);

/* Is href an alternate's href in its stored form (an absolute http(s) URL
 * whose base is canonical and whose "/path[?query]" passes
 * sm_url_is_stored_form, at most SM_URL_MAX characters)? */
int sm_alternate_href_ok(apr_pool_t *p, const char *href);

/* The stored form of what the head reader found (sm_head_alternate),
 * from p: each href resolved against the page (page_base, the site's
 * canonical base; page_target, its "/path?query") and normalised with the
 * site's query allow list (the same as for its own URLs, whatever the
 * href's host: an href whose query it refuses is left out, as is one that
 * is not http(s), too long or malformed), each hreflang canonical (others
 * left out); the first of two that end up with the same hreflang wins.
 * "" when none remains. */
const char *sm_alternates_from_head(apr_pool_t *p,
                                    const apr_array_header_t *found,
                                    const char *page_base,
                                    const char *page_target,
                                    const apr_array_header_t *allow);

/* Read a stored text back: the valid entries (sm_alternate, strings from
 * p) into *out (a new array), in order; returns how many entries were not
 * valid (skipped: a bad hreflang or href, a repeated hreflang, past
 * SM_ALTERNATES_MAX).  text NULL or "" gives none. */
int sm_alternates_parse(apr_pool_t *p, const char *text,
                        apr_array_header_t **out);

/* How many entries text holds (lines), valid or not; 0 for NULL or "". */
int sm_alternates_count(const char *text);

/* Does text hold only valid entries (sm_alternates_parse skips none)? */
int sm_alternates_valid(apr_pool_t *p, const char *text);

#endif
