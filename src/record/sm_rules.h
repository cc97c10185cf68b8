/* SPDX-License-Identifier: Apache-2.0 */
/* sm_rules.h: which responses are recorded, which are forgotten.
 *
 * Shared by the module (live traffic) and sitemapctl (access logs), so the
 * two can never disagree.  The embedding code gathers the facts about one
 * response into an sm_response; sm_rules_decide says what to do with it. */
#ifndef SM_RULES_H
#define SM_RULES_H

#include <apr_pools.h>
#include <apr_tables.h>

#include "util/sm_url.h"

/* A compiled regular expression (PCRE2, the same dialect as httpd's
 * ap_regex).  Freed with the pool it was compiled in. */
typedef struct sm_regex sm_regex;

/* NULL and *err set (pattern, offset and PCRE2's message) on error. */
sm_regex *sm_regex_compile(apr_pool_t *p, const char *pattern,
                           const char **err);
/* The same, case-insensitive (ASCII letters: no UTF mode). */
sm_regex *sm_regex_compile_caseless(apr_pool_t *p, const char *pattern,
                                    const char **err);
/* 1 when the pattern matches anywhere in subject, 0 otherwise.
 * Thread-safe: one compiled pattern may be used by many threads. */
int sm_regex_match(const sm_regex *re, const char *subject);
const char *sm_regex_pattern(const sm_regex *re);

typedef struct {
    /* const char *, lowercase media types without parameters */
    const apr_array_header_t *content_types;
    /* sm_regex *; matched against the canonical path */
    const apr_array_header_t *excludes;
    /* const char *; query parameter names that may be recorded */
    const apr_array_header_t *allow_query;
} sm_rules;

/* What is known about one finished request.  Unknown strings are NULL. */
typedef struct {
    const char *method;         /* "GET", "HEAD", ... */
    int status;                 /* final status, after internal redirects */
    const char *target;         /* the request-target the client sent */
    const char *content_type;   /* the response's, parameters allowed */
    int authenticated;          /* r->user set or Authorization sent */
    int session;                /* a session cookie sent (sm_has_session) */
    const char *x_robots_tag;   /* all X-Robots-Tag values, comma-joined */
    const char *cache_control;  /* all Cache-Control values, comma-joined */
    int has_path_info;          /* extra path after a static file (a
                                   script's is its own page: the glue
                                   judges it by its head) */
    int is_subrequest;
    apr_size_t base_len;        /* length of the site's base URL */
} sm_response;

typedef enum {
    SM_IGNORE = 0,   /* nothing to do */
    SM_RECORD,       /* store (or refresh) *url */
    SM_FORGET        /* remove *url: it answered 404, 410 or 301, or
                        200 with X-Robots-Tag noindex */
} sm_verdict;

/* Decide.  On SM_RECORD and SM_FORGET *url is the canonical stored form.
 * On SM_IGNORE (and a noindex's SM_FORGET, below), when why is not NULL,
 * *why is a short static reason (for debug logs and sitemapctl's
 * counters).
 *
 * Recorded: a main request, method GET, status 200, content type in the
 * list (compared case-insensitively, parameters ignored), not
 * authenticated and no session, no "noindex"/"none" in X-Robots-Tag (also
 * in the "agent: noindex" form), no "no-store" in Cache-Control ("private"
 * is what every anonymous visitor of some applications gets: a response to
 * a request without credentials or session is recorded with it), no path
 * info after a static file, a target that normalises (sm_url_from_target)
 * and whose canonical path matches no exclude.
 * Forgotten: a main GET or HEAD whose status is 404, 410 or 301 and whose
 * target normalises; and a GET answered 200 that would be recorded but for
 * a noindex/none in X-Robots-Tag (*why is then "x-robots-tag"). */
sm_verdict sm_rules_decide(apr_pool_t *p, const sm_rules *rules,
                           const sm_response *resp, const char **url,
                           const char **why);

/* The part of sm_rules_decide that needs neither the response's headers
 * nor the URL's parsing: 0 (with *why, as sm_rules_decide) when the
 * response is ignored whatever they say, 1 when sm_rules_decide must be
 * asked.  Lets the module skip gathering headers for most responses. */
int sm_rules_worth_deciding(const sm_rules *rules, const sm_response *resp,
                            const char **why);

/* The URL a verdict note names for a response the rules left out: the
 * target normalised as sm_rules_decide would store it, or, when its query
 * was refused, with every parameter it holds (as sitemapctl normalises a
 * URL given it); NULL when it cannot be normalised at all. */
const char *sm_rules_note_url(apr_pool_t *p, const sm_rules *rules,
                              const sm_response *resp);

/* Is a content type (parameters ignored) one that a page may be served
 * as, for the verdict notes of a type not listed: any text/ type but CSS and
 * scripts, HTML's kin (XHTML), or none at all.  Images, fonts, scripts
 * and styles are not noted. */
int sm_rules_page_like(const char *content_type);

/* Session cookies (SitemapSessionCookie): each pattern a cookie name,
 * "prefix*" or "*suffix" (case-sensitive, as cookie names are).  1 when the
 * Cookie header value (several joined by ';' or ',') names a cookie that
 * one of them matches. */
int sm_has_session(const apr_array_header_t *patterns, const char *cookies);

/* 1 when the comma-separated header value holds token (case-insensitive),
 * alone or as "token=..." or after an "agent:" prefix. */
int sm_header_has_token(const char *value, const char *token);

#endif
