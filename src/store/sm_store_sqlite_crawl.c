/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_crawl.c: crawl coverage, kept by the writer in its
 * batches (SM_CHANGE_CRAWL) and read by the status page and sitemapctl
 * coverage.  What the figures mean is sm_store_tx.c's (sm_coverage_count,
 * sm_coverage_kind), shared with PostgreSQL. */
#include "store/sm_store_sqlite.h"

#include <string.h>

static int unlisted(sqlite_store *s, sqlite3_int64 site_id,
                    const sm_change *c)
{
    sqlite3_stmt *q;
    int rc;

    if (!(q = sm_sqlite_stmt(s, STMT_CRAWL_UNLISTED_HIT)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, site_id);
    sm_sqlite_text(q, 2, c->crawler);
    if ((rc = sm_sqlite_run(s, q, "cannot count a crawler's fetch"))
        != SQLITE_OK)
        return rc;
    if (!(q = sm_sqlite_stmt(s, STMT_CRAWL_UNLISTED_PUT)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, site_id);
    sm_sqlite_text(q, 2, c->crawler);
    sm_sqlite_text(q, 3, c->url);
    sqlite3_bind_int64(q, 4, apr_time_sec(c->seen));
    sqlite3_bind_int(q, 5, c->status);
    if ((rc = sm_sqlite_run(s, q, "cannot keep a crawler's fetch"))
        != SQLITE_OK)
        return rc;
    if (!(q = sm_sqlite_stmt(s, STMT_CRAWL_UNLISTED_TRIM)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, site_id);
    sm_sqlite_text(q, 2, c->crawler);
    sqlite3_bind_int(q, 3, SM_CRAWL_UNLISTED_MAX);
    return sm_sqlite_run(s, q, "cannot drop old crawler fetches");
}

int sm_sqlite_crawl_put(sqlite_store *s, sqlite3_int64 site_id,
                        const sm_change *c)
{
    sqlite3_stmt *q;
    sm_sqlite_url_ref ref;
    sqlite3_int64 id;
    int rc;

    if (!c->crawler || !c->url)
        return SQLITE_OK;
    if (c->sitemap) {
        if (!(q = sm_sqlite_stmt(s, STMT_CRAWL_SITEMAP)))
            return SQLITE_ERROR;
        sqlite3_bind_int64(q, 1, site_id);
        sm_sqlite_text(q, 2, c->crawler);
        sqlite3_bind_int64(q, 3, apr_time_sec(c->seen));
        return sm_sqlite_run(s, q, "cannot count a sitemap fetch");
    }
    if ((rc = sm_sqlite_url_find(s, site_id, c->url, NULL, &ref))
        != SQLITE_OK)
        return rc;
    id = ref.id;
    if (!id)
        return unlisted(s, site_id, c);
    if (!(q = sm_sqlite_stmt(s, STMT_CRAWL_PUT)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, id);
    sm_sqlite_text(q, 2, c->crawler);
    sqlite3_bind_int64(q, 3, apr_time_sec(c->seen));
    sqlite3_bind_int(q, 4, c->status);
    return sm_sqlite_run(s, q, "cannot keep a crawler's fetch");
}

/* The statement which, or NULL when the file predates coverage (an older
 * schema opened read-only: sitemapctl's probe). */
static sqlite3_stmt *coverage_stmt(sqlite_store *s, int which)
{
    sqlite3_int64 version = 0;

    if (sm_sqlite_int_pragma(s, "PRAGMA user_version", &version)
        != SQLITE_OK || version < 8)
        return NULL;
    return sm_sqlite_stmt(s, which);
}

apr_status_t sm_sqlite_coverage(sm_store *st, const char *base,
                                const char *crawler, apr_time_t now,
                                sm_coverage *out)
{
    sqlite_store *s = (sqlite_store *)st;
    apr_int64_t now_s = apr_time_sec(now);
    sqlite3_stmt *q;
    int rc;

    if (!(q = coverage_stmt(s, STMT_COVERAGE_URLS)))
        return APR_ENOTIMPL;
    sm_sqlite_text(q, 1, base);
    sm_sqlite_text(q, 2, crawler);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        sm_coverage_count(out, sqlite3_column_int64(q, 1),
                          sqlite3_column_int64(q, 2), now_s);
    if (sm_sqlite_finish(s, q, rc, "cannot read the coverage") != SQLITE_OK
        || !(q = sm_sqlite_stmt(s, STMT_COVERAGE_COUNTS)))
        return APR_EGENERAL;
    sm_sqlite_text(q, 1, base);
    sm_sqlite_text(q, 2, crawler);
    if ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        out->unlisted_hits = sqlite3_column_int64(q, 0);
        out->sitemap_fetches = sqlite3_column_int64(q, 1);
        out->last_sitemap_fetch =
            apr_time_from_sec(sqlite3_column_int64(q, 2));
        rc = sqlite3_step(q);
    }
    if (sm_sqlite_finish(s, q, rc, "cannot read the coverage") != SQLITE_OK)
        return APR_EGENERAL;
    return APR_SUCCESS;
}

apr_status_t sm_sqlite_coverage_urls(sm_store *st, const char *base,
                                     const char *crawler,
                                     sm_coverage_which which,
                                     sm_coverage_fn *fn, void *baton)
{
    sqlite_store *s = (sqlite_store *)st;
    apr_status_t rv = APR_SUCCESS;
    sqlite3_stmt *q;
    int rc;

    if (!(q = coverage_stmt(s, which == SM_COVERAGE_UNLISTED
                                   ? STMT_COVERAGE_UNLISTED
                                   : STMT_COVERAGE_URLS)))
        return APR_ENOTIMPL;
    sm_sqlite_text(q, 1, base);
    sm_sqlite_text(q, 2, crawler);
    while (rv == APR_SUCCESS && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *url = (const char *)sqlite3_column_text(q, 0);
        apr_int64_t lastmod = 0, fetched;
        int status, kind;

        if (which == SM_COVERAGE_UNLISTED) {
            fetched = sqlite3_column_int64(q, 1);
            status = sqlite3_column_int(q, 2);
        }
        else {
            lastmod = sqlite3_column_int64(q, 1);
            fetched = sqlite3_column_int64(q, 2);
            status = sqlite3_column_int(q, 3);
            kind = sm_coverage_kind(lastmod, fetched);
            if ((which == SM_COVERAGE_NEVER && kind != 1)
                || (which == SM_COVERAGE_STALE && kind != 2))
                continue;
        }
        rv = fn(baton, url ? url : "", apr_time_from_sec(lastmod),
                apr_time_from_sec(fetched), status);
    }
    if (rv != APR_SUCCESS) {
        sqlite3_reset(q);
        sqlite3_clear_bindings(q);
        return rv;
    }
    if (sm_sqlite_finish(s, q, rc, "cannot read the coverage") != SQLITE_OK)
        return APR_EGENERAL;
    return APR_SUCCESS;
}
