/* SPDX-License-Identifier: Apache-2.0 */
/* sm_html.h: text of HTML attribute values and titles, and stored URLs
 * as people read them.  No httpd headers. */
#ifndef SM_HTML_H
#define SM_HTML_H

#include <apr_pools.h>

/* s[0..len) with its character references decoded as browsers decode
 * them in attribute values (numeric ones, code points 0, surrogates and
 * beyond U+10FFFF as U+FFFD, and the named ones pages use in URLs and
 * titles: amp, lt, gt, quot, apos, nbsp...; the first four also without
 * ';' unless an alphanumeric or '=' follows), and its leading and trailing
 * ASCII whitespace removed.  A NUL-terminated copy from p. */
char *sm_html_decode(apr_pool_t *p, const char *s, apr_size_t len);

/* A copy of s from p as valid UTF-8 text: each run of bytes that do not
 * begin a valid UTF-8 sequence (a page in another charset, a title cut in
 * the middle of a character) becomes one U+FFFD, and control characters
 * other than ASCII whitespace (tab, line feed, form feed, carriage return:
 * the caller collapses those) are dropped. */
char *sm_utf8_clean(apr_pool_t *p, const char *s);

/* A stored URL (or a part of one) as people read it, a copy from p: each
 * run of escapes that spells a valid UTF-8 character beyond ASCII
 * ("%C3%A9") is that character ("\xc3\xa9", to be escaped for HTML as any
 * text), but for invisible or reordering ones (C1 controls, zero-width
 * characters and bidi marks, embeddings, overrides and isolates, line
 * separators, the BOM), which could hide or reorder what a path shows;
 * escapes of ASCII bytes and of bytes that are no valid UTF-8 ("%E9")
 * stay as they are. */
char *sm_url_shown(apr_pool_t *p, const char *url);

#endif
