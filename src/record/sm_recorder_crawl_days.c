/* SPDX-License-Identifier: Apache-2.0 */
/* sm_recorder_crawl_days.c: the crawl coverage's part of the writer's
 * upkeep.  At its first look at the store on a new UTC day it takes each
 * site's coverage of the day that ended (sm_store_crawl_days_note; the
 * store says whether another process or server took it already); hourly,
 * and when the writer starts, it puts the stale URLs of the sites with
 * SitemapIndexNowStale On on IndexNow's pending list
 * (sm_store_indexnow_stale). */
#include "record/sm_recorder_int.h"

#define STALE_EVERY apr_time_from_sec(3600)

enum { TODO_DAY = 1, TODO_STALE = 2 };

static int stale_sites(const sm_recorder *rec)
{
    int i, n = sm_rec_sites_now(rec);

    for (i = 0; i < n; i++)
        if (rec->site_v[i]->indexnow & SM_SITE_INDEXNOW_STALE)
            return 1;
    return 0;
}

int sm_rec_crawl_days_due(sm_recorder *rec, apr_time_t now)
{
    apr_int64_t day = apr_time_sec(now) / 86400;

    rec->crawl_todo = 0;
    if (day != rec->crawl_day) {
        rec->crawl_day = day;
        rec->crawl_todo |= TODO_DAY;
    }
    if ((!rec->stale_checked || now - rec->stale_checked >= STALE_EVERY
         || now < rec->stale_checked) && stale_sites(rec)) {
        rec->stale_checked = now;
        rec->crawl_todo |= TODO_STALE;
    }
    return rec->crawl_todo != 0;
}

static void queue_stale(sm_recorder *rec, const sm_site_conf *site,
                        apr_time_t now)
{
    int queued = 0;
    apr_status_t rv = sm_store_indexnow_stale(rec->store, site->base, now,
                                              &queued);

    if (rv != APR_SUCCESS && rv != APR_ENOTIMPL)
        sm_log(rec->conf.log, SM_LOG_WARN, 0, "store %s: %s; stale URLs "
               "are not submitted before the next hour", rec->conf.db_path,
               sm_store_error(rec->store));
    else if (queued)
        sm_log(rec->conf.log, SM_LOG_INFO, 0, "%s: %d URLs crawlers have "
               "not fetched since they changed queued for IndexNow",
               site->base, queued);
}

void sm_rec_crawl_days(sm_recorder *rec, apr_time_t now)
{
    int i, n = sm_rec_sites_now(rec), taken, days = rec->crawl_todo & TODO_DAY;
    apr_status_t rv;

    for (i = 0; i < n; i++) {
        const sm_site_conf *site = rec->site_v[i];
        if ((rec->crawl_todo & TODO_STALE)
            && (site->indexnow & SM_SITE_INDEXNOW_STALE))
            queue_stale(rec, site, now);
        if (!days)
            continue;
        rv = sm_store_crawl_days_note(rec->store, site->base, now, &taken);
        if (rv == APR_ENOTIMPL) {
            days = 0;
            continue;
        }
        if (rv != APR_SUCCESS) {
            sm_log(rec->conf.log, SM_LOG_WARN, 0, "store %s: %s; the crawl "
                   "coverage of the day is not kept", rec->conf.db_path,
                   sm_store_error(rec->store));
            days = 0;
            continue;
        }
        if (taken)
            sm_log(rec->conf.log, SM_LOG_DEBUG, 0, "%s: crawl coverage of "
                   "the day taken", site->base);
    }
}
