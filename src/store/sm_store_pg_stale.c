/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_pg_stale.c: SitemapIndexNowStale on PostgreSQL (see
 * sm_store_sqlite_stale.c): one transaction queues and marks; the site's
 * row is locked first, so two servers of a farm never both queue. */
#include "store/sm_store_pg.h"

/* $1 site id, $2 base, $3 queued (microseconds), $4 the day-old bound,
 * $5 room on the list. */
#define QUEUE_SQL \
    "INSERT INTO sitemap_indexnow_pending(site, url, queued)" \
    " SELECT $2, u.url, $3 FROM sitemap_urls u WHERE u.site_id = $1" \
    " AND u.lastmod < $4 AND EXISTS (SELECT 1 FROM sitemap_crawls c" \
    "  WHERE c.url_id = u.id AND c.fetched > 0 AND c.fetched < u.lastmod" \
    "  AND c.stale_sent < u.lastmod)" \
    " AND NOT EXISTS (SELECT 1 FROM sitemap_indexnow_pending q" \
    "  WHERE q.site = $2 AND q.url = u.url)" \
    " ORDER BY u.id LIMIT $5 ON CONFLICT DO NOTHING"
/* $1 site id, $2 base, $3 the day-old bound. */
#define MARK_SQL \
    "UPDATE sitemap_crawls c SET stale_sent = u.lastmod" \
    " FROM sitemap_urls u JOIN sitemap_indexnow_pending q" \
    "  ON q.site = $2 AND q.url = u.url" \
    " WHERE u.id = c.url_id AND u.site_id = $1 AND c.fetched > 0" \
    " AND u.lastmod > c.fetched AND u.lastmod > c.stale_sent" \
    " AND u.lastmod < $3"

static int run(pg_store *s, const char *base, apr_time_t now, int *queued)
{
    params ps = { .n = 0 };
    apr_int64_t site, pending, changed = 0;
    PGresult *res;

    p_str(&ps, base);
    if (!(res = sm_pg_q(s, "cannot queue stale URLs", "SELECT s.id,"
                        " (SELECT count(*) FROM sitemap_indexnow_pending q"
                        "  WHERE q.site = s.base) FROM sitemap_sites s"
                        " WHERE s.base = $1 FOR UPDATE", &ps)))
        return -1;
    if (PQntuples(res) != 1) {
        PQclear(res);
        return 0;
    }
    site = i64(res, 0, 0);
    pending = i64(res, 0, 1);
    PQclear(res);
    if (pending >= SM_INDEXNOW_BACKLOG_MAX)
        return 0;
    ps.n = 0;
    p_i64(&ps, site);
    p_str(&ps, base);
    p_i64(&ps, now);
    p_i64(&ps, apr_time_sec(now) - 86400);
    p_i64(&ps, SM_INDEXNOW_BACKLOG_MAX - pending);
    if (sm_pg_run(s, "cannot queue stale URLs", QUEUE_SQL, &ps, &changed)
        != 0)
        return -1;
    *queued = (int)changed;
    ps.n = 0;
    p_i64(&ps, site);
    p_str(&ps, base);
    p_i64(&ps, apr_time_sec(now) - 86400);
    return sm_pg_run(s, "cannot queue stale URLs", MARK_SQL, &ps, NULL);
}

typedef struct {
    const char *base;
    apr_time_t now;
    int *queued;
} run_args;

static int run_in_tx(pg_store *s, void *baton)
{
    run_args *a = baton;
    return run(s, a->base, a->now, a->queued);
}

apr_status_t sm_pg_indexnow_stale(sm_store *st, const char *base,
                                  apr_time_t now, int *queued)
{
    run_args a = { base, now, queued };
    apr_status_t rv;

    *queued = 0;
    if ((rv = sm_pg_crawl_tx((pg_store *)st, run_in_tx, &a)) != APR_SUCCESS)
        *queued = 0;
    return rv;
}
