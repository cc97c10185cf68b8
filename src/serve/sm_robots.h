/* SPDX-License-Identifier: Apache-2.0 */
/* sm_robots.h: adding "Sitemap:" lines to a robots.txt that streams by.
 *
 * The body is fed in pieces as it passes (it is never held whole); the
 * scanner remembers only the line in progress (up to a bound), the line
 * ends seen, and which of the wanted Sitemap URLs are already there.
 *
 * Where the lines go: a body of at most SM_ROBOTS_HOLD bytes is held by
 * the caller until its end and gets the missing lines appended
 * (sm_robots_tail); a longer one gets them at its start, after a byte
 * order mark if it has one (sm_robots_head), as soon as SM_ROBOTS_HOLD
 * bytes have been seen, so a crawler that reads only the first 500 KiB
 * (Google) still finds them and nothing but the first SM_ROBOTS_HOLD bytes
 * is ever held.  A Sitemap line belongs to no group, so the start is as
 * good a place as the end for every parser; it is the only place that
 * cannot fall inside someone else's group (Protego ends a group of
 * several User-agent lines at any other field). */
#ifndef SM_ROBOTS_H
#define SM_ROBOTS_H

#include <apr_pools.h>
#include <apr_tables.h>

typedef struct sm_robots sm_robots;

/* A body longer than this gets the lines at its start. */
#define SM_ROBOTS_HOLD (64 * 1024)

/* urls: const char *, the absolute sitemap URLs to advertise (kept by
 * reference). */
sm_robots *sm_robots_create(apr_pool_t *p, const apr_array_header_t *urls);

/* Scan the next piece of the body. */
void sm_robots_feed(sm_robots *rb, const char *data, apr_size_t len);

/* What to append after everything fed: a line end when the body does not
 * end with one, then "Sitemap: URL" for each URL not already present.
 * Lines end like the body's last line (CRLF or LF).  "" when nothing is
 * needed.
 *
 * "Present" is strict: only a line that every common parser
 * (urllib.robotparser, Protego, Scrapy, robots-parser, Google's) reads as
 * this very Sitemap URL counts: optional blanks, "sitemap" in any case,
 * ':' right after it, optional blanks, the URL, optional blanks; no byte
 * order mark before it (urllib and Protego read "\xEF\xBB\xBFSitemap" as
 * another field), no comment after it (Scrapy keeps it in the URL), no
 * blank before the colon (Scrapy skips the line).  Anything else gets our
 * line too: a duplicate Sitemap line is harmless. */
const char *sm_robots_tail(sm_robots *rb, apr_pool_t *p, apr_size_t *len);

/* What to insert at the start of a long body, after the first *offset
 * bytes: "Sitemap: URL" for each URL not present in what was fed so far,
 * ending like the body's first line; after a byte order mark (*offset 3,
 * else 0) a line end first, as urllib and Protego would read the BOM as
 * part of the first line.  "" when nothing is needed. */
const char *sm_robots_head(sm_robots *rb, apr_pool_t *p, apr_size_t *len,
                           apr_size_t *offset);

/* NULL when url can be advertised on a robots.txt line, else why not: an
 * absolute http or https URL with a host, of at most 2,048 characters, of
 * the characters RFC 3986 allows (non-ASCII %-encoded, escapes well
 * formed) and without '#' (every parser reads the rest as a comment). */
const char *sm_robots_url_problem(apr_pool_t *p, const char *url);

/* A line "User-agent: *" and an empty "Disallow:": a robots.txt that
 * allows everything, for sites that have none. */
#define SM_ROBOTS_PERMISSIVE "User-agent: *\nDisallow:\n"

#endif
