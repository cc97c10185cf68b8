/* SPDX-License-Identifier: Apache-2.0 */
/* sm_head_news.h: what a head says for the news sitemap and llms.txt: the
 * page's description (<meta name="description">) and its publication time
 * (<meta property="article:published_time">, or the datePublished of a
 * JSON-LD NewsArticle, Article or BlogPosting).  The scanner (sm_head.c)
 * hands the raw values over; these read them, bounded. */
#ifndef SM_HEAD_NEWS_H
#define SM_HEAD_NEWS_H

#include <apr_pools.h>
#include <apr_time.h>

/* Characters (code points) of a description kept at most. */
#define SM_HEAD_DESCRIPTION_MAX 300
/* Bytes of one JSON-LD script's text read at most (the rest is not). */
#define SM_HEAD_JSONLD_MAX (16 * 1024)

/* The text of a raw value (a title, a description): character references
 * decoded, invalid UTF-8 and control bytes dropped, whitespace collapsed
 * and trimmed, cut after max_chars characters (0: not cut). */
char *sm_head_text(apr_pool_t *p, const char *v, apr_size_t len,
                   int max_chars);

/* An ISO 8601 (W3C) date "YYYY-MM-DD" or date-time
 * "YYYY-MM-DDThh:mm[:ss[.fraction]]" with "Z", "+hh:mm", "+hhmm" or no
 * offset (taken as UTC; a date alone is its midnight UTC), surrounding
 * whitespace allowed: the time it names, or 0 when it is not one. */
apr_time_t sm_iso8601_time(const char *s, apr_size_t len);

/* Does a <script type> value (raw, as written) say application/ld+json? */
int sm_head_is_jsonld(const char *v, apr_size_t len);

/* The datePublished of the first NewsArticle, Article or BlogPosting
 * object (its @type a string or an array holding one, with or without a
 * schema.org prefix) in a JSON-LD text, at any depth (@graph included)
 * up to 32 levels: its time (sm_iso8601_time), 0 when there is none.  A
 * small scanner, not a validator: one pass, no allocation. */
apr_time_t sm_jsonld_published(const char *s, apr_size_t len);

#endif
