/* SPDX-License-Identifier: Apache-2.0 */
/* sm_robots_rules.h: what a site's own robots.txt disallows, so that the
 * sitemap never lists a URL the crawlers it is for may not fetch (Search
 * Console reports those as "Submitted URL blocked by robots.txt").
 *
 * RFC 9309: groups of rules under User-agent lines; a crawler follows the
 * group(s) naming its product token (case-insensitive), else those of
 * "*"; within them the rule with the longest matching pattern wins, Allow
 * wins a tie; '*' in a pattern matches any run of characters and '$' at
 * its end anchors it; an empty Disallow allows everything.  Patterns and
 * URLs are compared in the same %-encoded form (non-ASCII bytes and
 * lowercase escapes normalised).  At most SM_ROBOTS_RULES_MAX bytes of the
 * file are read, as RFC 9309 asks of crawlers (500 KiB). */
#ifndef SM_ROBOTS_RULES_H
#define SM_ROBOTS_RULES_H

#include <apr_pools.h>

#define SM_ROBOTS_RULES_MAX (500 * 1024)

typedef struct sm_robots_rules sm_robots_rules;

/* Parse a robots.txt body (len bytes, not NUL-terminated).  Never fails:
 * lines it does not understand are ignored, as crawlers do. */
sm_robots_rules *sm_robots_rules_parse(apr_pool_t *p, const char *body,
                                       apr_size_t len);

/* The crawlers whose rules the sitemap obeys: "*", Googlebot and Bingbot
 * (a URL any of them may not fetch is not listed). */
extern const char *const sm_robots_agents[];

/* 1 when agent (a product token such as "googlebot") may not fetch
 * path_query ("/path?query", %-encoded as stored), with *line the
 * deciding rule's line number (1-based); 0 when it may. */
int sm_robots_disallows(const sm_robots_rules *rules, const char *agent,
                        const char *path_query, int *line);

/* 1 when any of sm_robots_agents may not fetch path_query; *agent and
 * *line say which and where. */
int sm_robots_disallows_any(const sm_robots_rules *rules,
                            const char *path_query, const char **agent,
                            int *line);

#endif
