/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_pg_prune.c: the rows of sites that never held a URL and that a
 * caller's test names (SitemapSiteFromHost's hosts: sm_store_prune_sites;
 * the same rule as sm_store_sqlite_prune.c). */
#include "store/sm_store_pg.h"

#include <apr_tables.h>

#include <stdlib.h>

#define PRUNE_CHUNK "500"

/* The ids after *after of empty sites that pass test (at most PRUNE_CHUNK
 * looked at); *more: there may be others after them. */
static int candidates(pg_store *s, sm_base_test_fn *test, void *baton,
                      apr_int64_t *after, apr_array_header_t *ids, int *more)
{
    params ps = { .n = 0 };
    PGresult *res;
    int i, n;

    p_i64(&ps, *after);
    if (!(res = sm_pg_q(s, "cannot read the sites", "SELECT id, base FROM"
                        " sitemap_sites WHERE url_count = 0 AND id > $1"
                        " ORDER BY id LIMIT " PRUNE_CHUNK, &ps)))
        return -1;
    n = PQntuples(res);
    for (i = 0; i < n; i++) {
        *after = i64(res, i, 0);
        if (test(baton, PQgetvalue(res, i, 1)))
            *(apr_int64_t *)apr_array_push(ids) = *after;
    }
    PQclear(res);
    *more = n == atoi(PRUNE_CHUNK);
    return 0;
}

/* One statement: the sites still never filled (a writer holding a row
 * is waited for, up to the lock timeout), then their verdicts and
 * removal counts. */
static int remove_sites(pg_store *s, apr_pool_t *p,
                        const apr_array_header_t *ids, int *pruned)
{
    params ps = { .n = 0 };
    PGresult *res;
    int crawls;

    p_str(&ps, sm_pg_int_array(p, (const apr_int64_t *)ids->elts,
                               ids->nelts));
    if (sm_pg_begin(s, "", NULL) != 0)
        return -1;
    /* The crawl coverage's rows too, where the role may (a role whose
     * grants predate them prunes the rest). */
    if ((crawls = sm_pg_crawls_allowed(s)) < 0) {
        sm_pg_rollback(s);
        return -1;
    }
    res = sm_pg_q(s, "cannot prune sites", apr_pstrcat(p,
                  "WITH gone AS (DELETE FROM sitemap_sites"
                  "  WHERE id = ANY($1::bigint[]) AND url_count = 0"
                  "  AND NOT EXISTS (SELECT 1 FROM sitemap_pages p"
                  "                  WHERE p.site_id = sitemap_sites.id)"
                  "  RETURNING id),"
                  " v AS (DELETE FROM sitemap_verdicts"
                  "  WHERE site_id IN (SELECT id FROM gone)),",
                  crawls ? " c AS (DELETE FROM sitemap_crawlers"
                           "  WHERE site_id IN (SELECT id FROM gone)),"
                           " cu AS (DELETE FROM sitemap_crawl_unlisted"
                           "  WHERE site_id IN (SELECT id FROM gone)),"
                         : "",
                  " d AS (DELETE FROM sitemap_removed_days"
                  "  WHERE site_id IN (SELECT id FROM gone))"
                  " SELECT count(*) FROM gone", NULL), &ps);
    if (!res) {
        sm_pg_rollback(s);
        return -1;
    }
    *pruned += (int)i64(res, 0, 0);
    PQclear(res);
    if (!(res = sm_pg_exec(s, "cannot commit", "COMMIT"))) {
        sm_pg_rollback(s);
        return -1;
    }
    PQclear(res);
    return 0;
}

apr_status_t sm_pg_prune_sites(sm_store *st, sm_base_test_fn *test,
                               void *baton, int *pruned)
{
    pg_store *s = (pg_store *)st;
    apr_int64_t after = 0;
    apr_array_header_t *ids;
    apr_pool_t *p;
    int more = 1, rc = 0, before = *pruned;

    if (sm_pg_connection(s) != 0)
        return APR_EGENERAL;
    if (apr_pool_create(&p, st->pool) != APR_SUCCESS)
        return APR_ENOMEM;
    ids = apr_array_make(p, 64, sizeof(apr_int64_t));
    while (more && rc == 0) {
        ids->nelts = 0;
        rc = candidates(s, test, baton, &after, ids, &more);
        if (rc == 0 && ids->nelts)
            rc = remove_sites(s, p, ids, pruned);
    }
    apr_pool_destroy(p);
    /* A row made again later gets its settings written again. */
    if (*pruned > before && s->settings_kept)
        apr_hash_clear(s->settings_kept);
    return rc == 0 ? APR_SUCCESS : APR_EGENERAL;
}
