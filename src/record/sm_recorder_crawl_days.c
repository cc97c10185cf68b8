/* SPDX-License-Identifier: Apache-2.0 */
/* sm_recorder_crawl_days.c: the writer's upkeep takes each site's crawl
 * coverage of the day that ended (sm_store_crawl_days_note) at its first
 * look at the store on a new UTC day; the store says whether another
 * process or server took it already. */
#include "record/sm_recorder_int.h"

int sm_rec_crawl_days_due(sm_recorder *rec, apr_time_t now)
{
    apr_int64_t day = apr_time_sec(now) / 86400;

    if (day == rec->crawl_day)
        return 0;
    rec->crawl_day = day;
    return 1;
}

void sm_rec_crawl_days(sm_recorder *rec, apr_time_t now)
{
    int i, n = sm_rec_sites_now(rec), taken;
    apr_status_t rv;

    for (i = 0; i < n; i++) {
        rv = sm_store_crawl_days_note(rec->store, rec->site_v[i]->base, now,
                                      &taken);
        if (rv == APR_ENOTIMPL)
            return;
        if (rv != APR_SUCCESS) {
            sm_log(rec->conf.log, SM_LOG_WARN, 0, "store %s: %s; the crawl "
                   "coverage of the day is not kept", rec->conf.db_path,
                   sm_store_error(rec->store));
            return;
        }
        if (taken)
            sm_log(rec->conf.log, SM_LOG_DEBUG, 0, "%s: crawl coverage of "
                   "the day taken", rec->site_v[i]->base);
    }
}
