/* SPDX-License-Identifier: Apache-2.0 */
/* sm_status.h: the operators' status page (SetHandler sitemap-status):
 * what is known of each site, written as HTML (with an inline SVG chart of
 * URLs added and removed per day), as JSON, or as the Prometheus text
 * exposition format.  The glue gathers the numbers (store, shared
 * counters); this file only writes them. */
#ifndef SM_STATUS_H
#define SM_STATUS_H

#include <apr_pools.h>
#include <apr_tables.h>

#include "record/sm_recorder.h"
#include "store/sm_store.h"
#include "serve/sm_xml.h"

/* Days the chart shows, today included. */
#define SM_STATUS_CHART_DAYS 28
/* Newest changes listed per site. */
#define SM_STATUS_RECENT 10
/* A SitemapSiteFromHost vhost's sites listed by name (those with most
 * URLs); the rest are only counted. */
#define SM_STATUS_HOSTS_SHOWN 100

typedef struct {
    const char *base;
    const char *db_path;
    const char *store_error;        /* NULL: the store could be read */
    apr_int64_t urls, pages;
    apr_array_header_t *recent;     /* sm_recent_url, newest first */
    /* sm_verdict_row of the latest URLs left out or removed and not
     * listed now (SM_VERDICTS_SHOWN at most), newest first; NULL: not
     * read */
    apr_array_header_t *left_out;
    apr_int64_t added[SM_STATUS_CHART_DAYS];   /* oldest day first, from
                                                  the store's first_seen */
    apr_int64_t removed[SM_STATUS_CHART_DAYS]; /* from the counters */
    apr_int64_t first_day;          /* days since the epoch of [0] */
    sm_store_about about;           /* db_bytes 0: not known */
    sm_recorder_shared counters;    /* of the site's store file, since the
                                       server (re)started */
    int have_counters;
    /* A SitemapSiteFromHost vhost's sites, one per host name (each
     * sm_site_stats' base, url_count and pages): the
     * SM_STATUS_HOSTS_SHOWN with most URLs, most first (then by base);
     * NULL for other vhosts.  The totals count every one of them. */
    apr_array_header_t *hosts;
    apr_int64_t hosts_total, hosts_urls, hosts_pages;
    /* SitemapCrawler's crawlers (sm_status_crawler), NULL: none. */
    apr_array_header_t *crawlers;
} sm_status_site;

/* One crawler of a site: its coverage from the store, and the claims this
 * server counted since it (re)started. */
typedef struct {
    const char *name;
    sm_coverage cov;                /* zeros when the store cannot say */
    apr_uint64_t verified, unverified, pending;
    /* sm_crawl_day of the last SM_CRAWL_DAYS days, oldest first; NULL:
     * not read (the HTML chart's) */
    apr_array_header_t *days;
} sm_status_crawler;

/* Fill s->added and s->removed from the store's days (sm_store_recent),
 * for the SM_STATUS_CHART_DAYS days up to today. */
void sm_status_days(sm_status_site *s, const apr_array_header_t *added,
                    apr_time_t now);

/* "ok", "failing" (the last write failed) or "unreadable". */
const char *sm_status_health(const sm_status_site *s);

apr_status_t sm_status_html(apr_pool_t *p, const sm_status_site *sites,
                            int n, apr_time_t started, sm_xml_sink *sink,
                            void *baton);
/* The crawlers' figures and coverage charts of site s, the idx-th of the
 * page (sm_status_crawl.c; part of sm_status_html). */
void sm_status_crawlers_html(sm_xml_writer *w, apr_pool_t *p,
                             const sm_status_site *s, int idx);
apr_status_t sm_status_json(apr_pool_t *p, const sm_status_site *sites,
                            int n, apr_time_t started, sm_xml_sink *sink,
                            void *baton);
apr_status_t sm_status_metrics(apr_pool_t *p, const sm_status_site *sites,
                               int n, sm_xml_sink *sink, void *baton);

#endif
