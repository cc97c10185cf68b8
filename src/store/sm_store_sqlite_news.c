/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_news.c: a page's description and publication time,
 * written by the writer with the page's other head data and read by the
 * news sitemap and llms.txt (sm_store.h: sm_store_news_urls,
 * sm_store_llms_urls). */
#include "store/sm_store_sqlite.h"

#include <string.h>

int sm_sqlite_news_put(sqlite_store *s, sm_tx_site *ts, const sm_change *c)
{
    sqlite3_stmt *put;
    sm_sqlite_url_ref ref;
    int rc;

    if ((rc = sm_sqlite_url_find(s, ts->row.id, c->url, c, &ref))
        != SQLITE_OK || !ref.id || !ref.news_differs)
        return rc;
    if (!(put = sm_sqlite_stmt(s, STMT_NEWS_PUT)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(put, 1, ref.id);
    sm_sqlite_text(put, 2, *c->description ? c->description : NULL);
    sqlite3_bind_int64(put, 3, c->published > 0 ? apr_time_sec(c->published)
                                                : 0);
    if ((rc = sm_sqlite_run(s, put, "cannot update a URL's description"))
        != SQLITE_OK)
        return rc;
    sm_tx_count(&s->tx, ts, ref.page, 0, 0, 0);
    return SQLITE_OK;
}

/* Step q to its end, each row through row; errmsg names what. */
typedef apr_status_t news_row_fn(void *ctx, sqlite3_stmt *q);

static apr_status_t rows(sqlite_store *s, sqlite3_stmt *q, news_row_fn *row,
                         void *ctx, const char *what)
{
    apr_status_t rv = APR_SUCCESS;
    int rc;

    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        if ((rv = row(ctx, q)) != APR_SUCCESS)
            break;
    if (rv == APR_SUCCESS && rc != SQLITE_DONE) {
        sm_sqlite_set_error(&s->base, what, s->db);
        rv = APR_EGENERAL;
    }
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return rv;
}

typedef struct {
    sm_news_fn *news;
    sm_llms_fn *llms;
    void *baton;
} walk;

static apr_status_t news_row(void *ctx, sqlite3_stmt *q)
{
    walk *w = ctx;
    return w->news(w->baton, (const char *)sqlite3_column_text(q, 0),
                   (const char *)sqlite3_column_text(q, 1),
                   apr_time_from_sec(sqlite3_column_int64(q, 2)));
}

static apr_status_t llms_row(void *ctx, sqlite3_stmt *q)
{
    walk *w = ctx;
    return w->llms(w->baton, (const char *)sqlite3_column_text(q, 0),
                   (const char *)sqlite3_column_text(q, 1),
                   (const char *)sqlite3_column_text(q, 2),
                   apr_time_from_sec(sqlite3_column_int64(q, 3)));
}

apr_status_t sm_sqlite_news_urls(sm_store *st, const char *base,
                                 apr_time_t since, int max, sm_news_fn *fn,
                                 void *baton)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q = sm_sqlite_stmt(s, STMT_NEWS_URLS);
    walk w = { fn, NULL, baton };

    if (!q)
        return APR_EGENERAL;
    sm_sqlite_text(q, 1, base);
    sqlite3_bind_int64(q, 2, apr_time_sec(since));
    sqlite3_bind_int(q, 3, max);
    return rows(s, q, news_row, &w, "cannot read the news sitemap's URLs");
}

apr_status_t sm_sqlite_llms_urls(sm_store *st, const char *base, int max,
                                 sm_llms_fn *fn, void *baton)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q = sm_sqlite_stmt(s, STMT_LLMS_URLS);
    walk w = { NULL, fn, baton };

    if (!q)
        return APR_EGENERAL;
    sm_sqlite_text(q, 1, base);
    sqlite3_bind_int(q, 2, max);
    return rows(s, q, llms_row, &w, "cannot read llms.txt's URLs");
}
