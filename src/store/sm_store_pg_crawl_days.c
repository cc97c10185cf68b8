/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_pg_crawl_days.c: crawl coverage per UTC day on PostgreSQL (see
 * sm_store_sqlite_crawl_days.c).  The day's mark (crawler '') goes in
 * first, ON CONFLICT DO NOTHING: of a farm's writers taking the same day
 * at once, the second waits for the first's commit, then finds the mark
 * and takes nothing. */
#include "store/sm_store_pg.h"

#include <string.h>

/* $1 site, $2 day, $3 the 30 days' start, $4 $5 the site's id range. */
#define TAKE_CRAWLS \
    "INSERT INTO sitemap_crawl_days(site_id, crawler, day, listed, crawled)" \
    " SELECT $1, c.crawler, $2, (SELECT listed FROM sitemap_crawl_days" \
    "  WHERE site_id = $1 AND crawler = '' AND day = $2)," \
    " count(*) FILTER (WHERE c.fetched > 0 AND c.fetched >= $3)" \
    " FROM sitemap_crawls c WHERE c.url_id >= $4 AND c.url_id < $5" \
    " GROUP BY c.crawler ON CONFLICT DO NOTHING"
/* $1 site, $2 day: crawlers that fetched only URLs not listed, or
 * sitemaps. */
#define TAKE_CRAWLERS \
    "INSERT INTO sitemap_crawl_days(site_id, crawler, day, listed, crawled)" \
    " SELECT $1, crawler, $2, (SELECT listed FROM sitemap_crawl_days" \
    "  WHERE site_id = $1 AND crawler = '' AND day = $2), 0" \
    " FROM sitemap_crawlers WHERE site_id = $1 ON CONFLICT DO NOTHING"

static int site_id(pg_store *s, const char *base, apr_int64_t *id)
{
    params ps = { .n = 0 };
    PGresult *res;

    p_str(&ps, base);
    if (!(res = sm_pg_q(s, "cannot read the sites", "SELECT id FROM"
                        " sitemap_sites WHERE base = $1", &ps)))
        return -1;
    *id = PQntuples(res) == 1 ? i64(res, 0, 0) : 0;
    PQclear(res);
    return 0;
}

/* In the caller's transaction: 0, or -1 (errmsg set). */
static int take(pg_store *s, const char *base, apr_int64_t day,
                apr_int64_t now_s, int *taken)
{
    params ps = { .n = 0 };
    apr_int64_t site, lo, hi, marked = 0;

    if (site_id(s, base, &site) != 0)
        return -1;
    if (!site)
        return 0;
    if (sm_pg_id_range(s, "cannot read the sites", base, &lo, &hi) != 0)
        return -1;
    p_i64(&ps, site);
    p_i64(&ps, day);
    p_i64(&ps, lo);
    p_i64(&ps, hi);
    if (sm_pg_run(s, "cannot take the crawl day", "INSERT INTO"
                  " sitemap_crawl_days(site_id, crawler, day, listed,"
                  " crawled) SELECT $1, '', $2, count(*), 0"
                  " FROM sitemap_urls WHERE id >= $3 AND id < $4"
                  " ON CONFLICT DO NOTHING", &ps, &marked) != 0)
        return -1;
    if (!marked)
        return 0;
    ps.n = 0;
    p_i64(&ps, site);
    p_i64(&ps, day);
    p_i64(&ps, now_s - 30 * 86400);
    p_i64(&ps, lo);
    p_i64(&ps, hi);
    if (sm_pg_run(s, "cannot take the crawl day", TAKE_CRAWLS, &ps, NULL)
        != 0)
        return -1;
    ps.n = 2;
    if (sm_pg_run(s, "cannot take the crawl day", TAKE_CRAWLERS, &ps, NULL)
        != 0)
        return -1;
    ps.n = 0;
    p_i64(&ps, day - SM_CRAWL_DAYS);
    if (sm_pg_run(s, "cannot take the crawl day", "DELETE FROM"
                  " sitemap_crawl_days WHERE day <= $1", &ps, NULL) != 0)
        return -1;
    *taken = 1;
    return 0;
}

typedef struct {
    const char *base;
    apr_int64_t day, now_s;
    int *taken;
} take_args;

static int take_in_tx(pg_store *s, void *baton)
{
    take_args *a = baton;
    return take(s, a->base, a->day, a->now_s, a->taken);
}

apr_status_t sm_pg_crawl_days_note(sm_store *st, const char *base,
                                   apr_int64_t day, apr_int64_t now_s,
                                   int *taken)
{
    take_args a = { base, day, now_s, taken };
    apr_status_t rv = sm_pg_crawl_tx((pg_store *)st, take_in_tx, &a);

    if (rv != APR_SUCCESS)
        *taken = 0;
    return rv;
}

apr_status_t sm_pg_crawl_days(sm_store *st, apr_pool_t *p, const char *base,
                              const char *crawler, apr_int64_t since,
                              apr_array_header_t **out)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    PGresult *res;
    int has, i;
    (void)p;

    if (sm_pg_ready(s, SM_PG_SCHEMA_CRAWL_DAYS, &has) != 0)
        return APR_EGENERAL;
    if (!has)
        return APR_ENOTIMPL;
    p_str(&ps, base);
    p_str(&ps, crawler);
    p_i64(&ps, since);
    if (!(res = sm_pg_q(s, "cannot read the crawl days", "SELECT d.day,"
                        " d.listed, d.crawled FROM sitemap_sites s"
                        " JOIN sitemap_crawl_days d ON d.site_id = s.id"
                        " WHERE s.base = $1 AND d.crawler = $2"
                        " AND d.day >= $3 ORDER BY d.day", &ps)))
        return APR_EGENERAL;
    for (i = 0; i < PQntuples(res); i++) {
        sm_crawl_day *d = apr_array_push(*out);
        d->day = i64(res, i, 0);
        d->listed = i64(res, i, 1);
        d->crawled = i64(res, i, 2);
    }
    PQclear(res);
    return APR_SUCCESS;
}
