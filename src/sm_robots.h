/* sm_robots.h: adding "Sitemap:" lines to a robots.txt that streams by.
 *
 * The body is fed in pieces as it passes (it is never held whole); the
 * scanner remembers only the line in progress (up to a bound), the last
 * line ending, and which of the wanted Sitemap URLs are already there.  At
 * the end, sm_robots_tail gives the bytes to append. */
#ifndef SM_ROBOTS_H
#define SM_ROBOTS_H

#include <apr_pools.h>
#include <apr_tables.h>

typedef struct sm_robots sm_robots;

/* urls: const char *, the absolute sitemap URLs to advertise (kept by
 * reference). */
sm_robots *sm_robots_create(apr_pool_t *p, const apr_array_header_t *urls);

/* Scan the next piece of the body. */
void sm_robots_feed(sm_robots *rb, const char *data, apr_size_t len);

/* What to append after everything fed: a line end when the body does not
 * end with one, then "Sitemap: URL" for each URL not already present (the
 * field name in any case, blanks around the colon allowed).  Lines end like
 * the body's last line (CRLF or LF).  "" when nothing is needed. */
const char *sm_robots_tail(sm_robots *rb, apr_pool_t *p, apr_size_t *len);

/* A line "User-agent: *" and an empty "Disallow:": a robots.txt that
 * allows everything, for sites that have none. */
#define SM_ROBOTS_PERMISSIVE "User-agent: *\nDisallow:\n"

#endif
