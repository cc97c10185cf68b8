/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_prune.c: the rows of sites that never held a URL and
 * that a caller's test names (SitemapSiteFromHost's hosts:
 * sm_store_prune_sites). */
#include "store/sm_store_sqlite.h"

#include <apr_tables.h>

#define PRUNE_CHUNK 500

/* Never held a URL: no page row (made with the first URL).  A site that
 * had some keeps its row and pages, whose versions its sitemap's ETags
 * and renditions follow: made again, they would start over and name old
 * bytes. */
#define NEVER_FILLED \
    " url_count = 0 AND NOT EXISTS (SELECT 1 FROM pages p" \
    " WHERE p.site_id = sites.id)"

static const char *const prune_sql[] = {
    /* First, and only while still empty: a writer may have filled it. */
    "DELETE FROM sites WHERE id = ?1 AND" NEVER_FILLED,
    "DELETE FROM removed_days WHERE site_id = ?1",
    "DELETE FROM verdicts WHERE site_id = ?1",
    "DELETE FROM crawlers WHERE site_id = ?1",
    "DELETE FROM crawl_unlisted WHERE site_id = ?1",
    "DELETE FROM crawl_days WHERE site_id = ?1",
    /* (a site made from a Host that served a robots.txt: its id may be
     * given to another site later) */
    "DELETE FROM robots WHERE site_id = ?1",
};
#define N_PRUNE (sizeof(prune_sql) / sizeof(prune_sql[0]))

/* The ids after *after of empty sites that pass test (at most
 * PRUNE_CHUNK looked at); *more: there may be others after them. */
static int candidates(sqlite_store *s, sm_base_test_fn *test, void *baton,
                      sqlite3_int64 *after, apr_array_header_t *ids,
                      int *more)
{
    sqlite3_stmt *q;
    int rc, n = 0;

    rc = sqlite3_prepare_v2(s->db, "SELECT id, base FROM sites"
                            " WHERE url_count = 0 AND id > ?1"
                            " ORDER BY id LIMIT ?2", -1, &q, NULL);
    if (rc != SQLITE_OK) {
        sm_sqlite_set_error(&s->base, "cannot read the sites", s->db);
        return rc;
    }
    sqlite3_bind_int64(q, 1, *after);
    sqlite3_bind_int(q, 2, PRUNE_CHUNK);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const unsigned char *base = sqlite3_column_text(q, 1);
        n++;
        *after = sqlite3_column_int64(q, 0);
        if (base && test(baton, (const char *)base))
            *(sqlite3_int64 *)apr_array_push(ids) = *after;
    }
    sqlite3_finalize(q);
    *more = n == PRUNE_CHUNK;
    if (rc != SQLITE_DONE) {
        sm_sqlite_set_error(&s->base, "cannot read the sites", s->db);
        return rc;
    }
    return SQLITE_OK;
}

/* Remove the sites of ids in one transaction; *pruned grows. */
static int remove_sites(sqlite_store *s, const apr_array_header_t *ids,
                        int *pruned)
{
    sqlite3_stmt *q[N_PRUNE] = { NULL };
    int rc, i;
    apr_size_t k;

    if ((rc = sm_sqlite_exec(s, "cannot start a transaction",
                             "BEGIN IMMEDIATE")) != SQLITE_OK)
        return rc;
    for (k = 0; k < N_PRUNE; k++)
        if ((rc = sqlite3_prepare_v2(s->db, prune_sql[k], -1, &q[k], NULL))
            != SQLITE_OK) {
            sm_sqlite_set_error(&s->base, "cannot prune sites", s->db);
            goto done;
        }
    for (i = 0; i < ids->nelts; i++) {
        sqlite3_int64 id = APR_ARRAY_IDX(ids, i, sqlite3_int64);
        for (k = 0; k < N_PRUNE; k++) {
            sqlite3_bind_int64(q[k], 1, id);
            rc = sqlite3_step(q[k]);
            sqlite3_reset(q[k]);
            if (rc != SQLITE_DONE) {
                sm_sqlite_set_error(&s->base, "cannot prune a site", s->db);
                goto done;
            }
            rc = SQLITE_OK;
            if (k == 0 && sqlite3_changes(s->db) == 0)
                break;          /* filled meanwhile: kept */
            if (k == 0)
                (*pruned)++;
        }
    }
    rc = sm_sqlite_exec(s, "cannot commit", "COMMIT");

done:
    for (k = 0; k < N_PRUNE; k++)
        sqlite3_finalize(q[k]);
    if (rc != SQLITE_OK)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

apr_status_t sm_sqlite_prune_sites(sm_store *st, sm_base_test_fn *test,
                                   void *baton, int *pruned)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_int64 after = 0;
    apr_array_header_t *ids;
    apr_pool_t *p;
    int more = 1, rc = SQLITE_OK, before = *pruned;

    if (apr_pool_create(&p, st->pool) != APR_SUCCESS)
        return APR_ENOMEM;
    ids = apr_array_make(p, PRUNE_CHUNK, sizeof(sqlite3_int64));
    while (more && rc == SQLITE_OK) {
        ids->nelts = 0;
        rc = candidates(s, test, baton, &after, ids, &more);
        if (rc == SQLITE_OK && ids->nelts)
            rc = remove_sites(s, ids, pruned);
    }
    apr_pool_destroy(p);
    /* A row made again later gets its settings written again. */
    if (*pruned > before && s->settings_kept)
        apr_hash_clear(s->settings_kept);
    return rc == SQLITE_OK ? APR_SUCCESS : APR_EGENERAL;
}
