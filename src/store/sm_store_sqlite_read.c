/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_read.c: reading the SQLite store: the documents' reads
 * (one snapshot per document), the status page's and sitemapctl's. */
#include "store/sm_store_sqlite.h"

#include <apr_strings.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

/* ---- reading ------------------------------------------------------------ */

apr_status_t sm_sqlite_read_begin(sm_store *st)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q = sm_sqlite_stmt(s, STMT_READ_BEGIN);
    int rc;

    /* A deferred transaction: the snapshot starts at the first read. */
    if (!q)
        return APR_EGENERAL;
    rc = sqlite3_step(q);
    sqlite3_reset(q);
    if (rc != SQLITE_DONE) {
        sm_sqlite_set_error(&s->base, "cannot start reading", s->db);
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

void sm_sqlite_read_end(sm_store *st)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q = sm_sqlite_stmt(s, STMT_READ_END);

    if (q) {
        sqlite3_step(q);
        sqlite3_reset(q);
    } else {
        sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
    }
}

static apr_status_t read_error(sqlite_store *s, sqlite3_stmt *q,
                               const char *what)
{
    sm_sqlite_set_error(&s->base, what, s->db);
    if (q) {
        sqlite3_reset(q);
        sqlite3_clear_bindings(q);
    }
    return APR_EGENERAL;
}

/* The site's row, pages and changes (the store id read already). */
static apr_status_t site_rest(sqlite_store *s, apr_pool_t *p,
                              const char *base, apr_int64_t page,
                              sm_site_info *out)
{
    sqlite3_stmt *q;
    sqlite3_int64 site_id = 0;
    int rc;

    if (!(q = sm_sqlite_stmt(s, STMT_SITE_GET)))
        return APR_EGENERAL;
    sm_sqlite_text(q, 1, base);
    if ((rc = sqlite3_step(q)) == SQLITE_ROW)
        site_id = sqlite3_column_int64(q, 0);
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return read_error(s, NULL, "cannot read the site");
    if (rc == SQLITE_DONE)
        return APR_SUCCESS;
    out->known = 1;

    if (!(q = sm_sqlite_stmt(s, page ? STMT_PAGES_ONE : STMT_PAGES_ALL)))
        return APR_EGENERAL;
    sqlite3_bind_int64(q, 1, site_id);
    if (page)
        sqlite3_bind_int64(q, 2, page);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        sm_page_info *pi = apr_array_push(out->pages);
        pi->page = sqlite3_column_int64(q, 0);
        pi->url_count = sqlite3_column_int64(q, 1);
        pi->version = sqlite3_column_int64(q, 2);
        pi->lastmod = apr_time_from_sec(sqlite3_column_int64(q, 3));
        pi->changed = apr_time_from_sec(sqlite3_column_int64(q, 4));
        pi->xml_bytes = sqlite3_column_int64(q, 5);
    }
    if (rc != SQLITE_DONE)
        return read_error(s, q, "cannot read the pages");
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);

    if (!(q = sm_sqlite_stmt(s, STMT_SITE_CHANGED)))
        return APR_EGENERAL;
    sqlite3_bind_int64(q, 1, site_id);
    if ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        out->index_changed = apr_time_from_sec(sqlite3_column_int64(q, 0));
        out->settings_changed = apr_time_from_sec(sqlite3_column_int64(q, 1));
        out->settings = apr_pstrdup(p, 
                (const char *)sqlite3_column_text(q, 2));
    }
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (rc != SQLITE_ROW)
        return read_error(s, NULL, "cannot read the site's pages");
    return APR_SUCCESS;
}

/* The snapshot starts with its data version (PRAGMA data_version, the
 * cheapest read there is), which says whether the connection's kept
 * summary is still the store's (sm_store_sqlite_sitecache.c). */
apr_status_t sm_sqlite_site_info(sm_store *st, apr_pool_t *p,
                                     const char *base, apr_int64_t page,
                                     sm_site_info *out)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q;
    unsigned version = 0, after = 0;
    int rc, keep = 0;
    apr_status_t rv;

    memset(out, 0, sizeof(*out));
    if ((q = sm_sqlite_stmt(s, STMT_DATA_VERSION)) != NULL) {
        keep = sqlite3_step(q) == SQLITE_ROW
               && sm_sqlite_data_version(s, &version);
        sqlite3_reset(q);
    }
    if (keep && sm_sqlite_site_cache_get(s, p, base, page, version, out))
        return APR_SUCCESS;
    out->pages = apr_array_make(p, 4, sizeof(sm_page_info));
    if (!(q = sm_sqlite_stmt(s, STMT_STORE_ID)))
        return APR_EGENERAL;
    if ((rc = sqlite3_step(q)) == SQLITE_ROW)
        out->store_id = apr_pstrdup(p, 
                (const char *)sqlite3_column_text(q, 0));
    sqlite3_reset(q);
    if (rc != SQLITE_ROW)
        return read_error(s, NULL, "cannot read the store id");
    rv = site_rest(s, p, base, page, out);
    /* Kept only when read in one snapshot at that version (without a
     * BEGIN, each statement may read a later one). */
    if (rv == APR_SUCCESS && keep && sm_sqlite_data_version(s, &after)
        && after == version)
        sm_sqlite_site_cache_put(s, base, page, version, out);
    return rv;
}

/* Step which (bound to base and page) to its end, each row through row;
 * what names the read in an error. */
typedef apr_status_t page_row_fn(void *ctx, sqlite3_stmt *q);

static apr_status_t page_rows(sqlite_store *s, int which, const char *base,
                              apr_int64_t page, page_row_fn *row, void *ctx,
                              const char *what)
{
    sqlite3_stmt *q = sm_sqlite_stmt(s, which);
    apr_status_t rv = APR_SUCCESS;
    int rc;

    if (!q)
        return APR_EGENERAL;
    sm_sqlite_text(q, 1, base);
    sqlite3_bind_int64(q, 2, page);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        if ((rv = row(ctx, q)) != APR_SUCCESS)
            break;
    if (rv == APR_SUCCESS && rc != SQLITE_DONE)
        return read_error(s, q, what);
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return rv;
}

typedef struct {
    sm_url_fn *url_fn;
    sm_title_fn *title_fn;
    void *baton;
} page_walk;

static apr_status_t url_row(void *ctx, sqlite3_stmt *q)
{
    page_walk *w = ctx;
    return w->url_fn(w->baton, (const char *)sqlite3_column_text(q, 0),
                     apr_time_from_sec(sqlite3_column_int64(q, 1)),
                     (const char *)sqlite3_column_text(q, 2));
}

static apr_status_t title_row(void *ctx, sqlite3_stmt *q)
{
    page_walk *w = ctx;
    return w->title_fn(w->baton, (const char *)sqlite3_column_text(q, 0),
                       (const char *)sqlite3_column_text(q, 1));
}

apr_status_t sm_sqlite_page_urls(sm_store *st, const char *base,
                                     apr_int64_t page, sm_url_fn *fn,
                                     void *baton)
{
    page_walk w = { fn, NULL, baton };
    return page_rows((sqlite_store *)st, STMT_PAGE_URLS, base, page, url_row,
                     &w, "cannot read the page's URLs");
}

apr_status_t sm_sqlite_page_titles(sm_store *st, const char *base,
                                       apr_int64_t page, sm_title_fn *fn,
                                       void *baton)
{
    page_walk w = { NULL, fn, baton };
    return page_rows((sqlite_store *)st, STMT_PAGE_TITLES, base, page,
                     title_row, &w, "cannot read the page's titles");
}

/* ---- administration (sitemapctl) --------------------------------------- */

apr_status_t sm_sqlite_site_row(sm_store *st, apr_pool_t *p,
                                    const char *base, sm_site_row *out)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q = sm_sqlite_stmt(s, STMT_SITE_ROW);
    int rc;

    memset(out, 0, sizeof(*out));
    out->settings = "";
    if (!q)
        return APR_EGENERAL;
    sm_sqlite_text(q, 1, base);
    if ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *settings = (const char *)sqlite3_column_text(q, 3);
        out->known = 1;
        out->url_count = sqlite3_column_int64(q, 0);
        out->last_page = sqlite3_column_int64(q, 1);
        out->page_size = sqlite3_column_int(q, 2);
        out->settings = apr_pstrdup(p, settings ? settings : "");
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return read_error(s, q, "cannot read the site");
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return APR_SUCCESS;
}

/* One-off statements for administration: prepared when used. */
static apr_status_t prepare(sqlite_store *s, const char *sql,
                            sqlite3_stmt **q)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, q, NULL) != SQLITE_OK) {
        sm_sqlite_set_error(&s->base, "cannot prepare a statement", s->db);
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

static apr_time_t opt_time(sqlite3_stmt *q, int col)
{
    return sqlite3_column_type(q, col) == SQLITE_NULL
        ? 0 : apr_time_from_sec(sqlite3_column_int64(q, col));
}

/* sm_store_site_stats, and with scan_urls 0 sm_store_site_list. */
static apr_status_t site_stats(sm_store *st, apr_pool_t *p, const char *base,
                               int scan_urls, apr_array_header_t **out)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *sites = NULL, *urls = NULL;
    apr_array_header_t *ids = apr_array_make(p, 4, sizeof(sqlite3_int64));
    apr_status_t rv;
    int rc, i;

    *out = apr_array_make(p, 4, sizeof(sm_site_stats));
    if ((rv = prepare(s, "SELECT s.id, s.base, s.url_count, s.last_page,"
                         " s.page_size, (SELECT count(*) FROM pages p"
                         "  WHERE p.site_id = s.id AND p.url_count > 0)"
                         " FROM sites s WHERE ?1 IS NULL OR s.base = ?1"
                         " ORDER BY s.base", &sites)) != APR_SUCCESS)
        return rv;
    /* Alternates are lines: one more than the line feeds. */
    if (scan_urls
        && (rv = prepare(s, "SELECT max(lastmod), min(lastmod),"
                            " max(last_seen), min(last_seen),"
                            " count(alternates), coalesce(sum(length("
                            "alternates) - length(replace(alternates,"
                            " char(10), '')) + 1), 0) FROM urls"
                            " WHERE id >= ?1 AND id < ?2", &urls))
           != APR_SUCCESS)
        goto done;
    sm_sqlite_text(sites, 1, base);
    while ((rc = sqlite3_step(sites)) == SQLITE_ROW) {
        sm_site_stats *ss = apr_array_push(*out);
        memset(ss, 0, sizeof(*ss));
        ss->base = apr_pstrdup(p, (const char *)sqlite3_column_text(sites,
                                                                    1));
        ss->url_count = sqlite3_column_int64(sites, 2);
        ss->last_page = sqlite3_column_int64(sites, 3);
        ss->page_size = sqlite3_column_int(sites, 4);
        ss->pages = sqlite3_column_int64(sites, 5);
        APR_ARRAY_PUSH(ids, sqlite3_int64) = sqlite3_column_int64(sites, 0);
    }
    if (rc != SQLITE_DONE) {
        sm_sqlite_set_error(&s->base, "cannot read the sites", s->db);
        rv = APR_EGENERAL;
        goto done;
    }
    for (i = 0; scan_urls && i < (*out)->nelts; i++) {
        sm_site_stats *ss = &APR_ARRAY_IDX(*out, i, sm_site_stats);
        sqlite3_int64 id = APR_ARRAY_IDX(ids, i, sqlite3_int64);
        sqlite3_bind_int64(urls, 1, SITE_FIRST_ID(id));
        sqlite3_bind_int64(urls, 2, SITE_FIRST_ID(id + 1));
        if ((rc = sqlite3_step(urls)) != SQLITE_ROW) {
            sm_sqlite_set_error(&s->base,
                                "cannot read the site's URLs", s->db);
            rv = APR_EGENERAL;
            goto done;
        }
        ss->lastmod_newest = opt_time(urls, 0);
        ss->lastmod_oldest = opt_time(urls, 1);
        ss->seen_newest = opt_time(urls, 2);
        ss->seen_oldest = opt_time(urls, 3);
        ss->urls_with_alternates = sqlite3_column_int64(urls, 4);
        ss->alternates = sqlite3_column_int64(urls, 5);
        sqlite3_reset(urls);
    }
    rv = APR_SUCCESS;
done:
    sqlite3_finalize(sites);
    sqlite3_finalize(urls);
    return rv;
}

apr_status_t sm_sqlite_site_stats(sm_store *st, apr_pool_t *p,
                                  const char *base, apr_array_header_t **out)
{
    return site_stats(st, p, base, 1, out);
}

apr_status_t sm_sqlite_site_list(sm_store *st, apr_pool_t *p,
                                 apr_array_header_t **out)
{
    return site_stats(st, p, NULL, 0, out);
}

apr_status_t sm_sqlite_url_rows(sm_store *st, const char *base,
                                    apr_int64_t page, sm_url_row_fn *fn,
                                    void *baton)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q = sm_sqlite_stmt(s, page ? STMT_URL_ROWS_ONE
                                             : STMT_URL_ROWS_ALL);
    apr_status_t rv = APR_SUCCESS;
    int rc;

    if (!q)
        return APR_EGENERAL;
    sm_sqlite_text(q, 1, base);
    if (page)
        sqlite3_bind_int64(q, 2, page);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        rv = fn(baton, (const char *)sqlite3_column_text(q, 0),
                sqlite3_column_int64(q, 1),
                apr_time_from_sec(sqlite3_column_int64(q, 2)),
                apr_time_from_sec(sqlite3_column_int64(q, 3)),
                (const char *)sqlite3_column_text(q, 4));
        if (rv != APR_SUCCESS)
            break;
    }
    if (rv == APR_SUCCESS && rc != SQLITE_DONE)
        return read_error(s, q, "cannot read the site's URLs");
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return rv;
}

/* PRAGMAs and meta of an open connection; used by about and check. */
int sm_sqlite_read_about(sqlite_store *s, apr_pool_t *p, sm_store_about *out,
                      int with_meta)
{
    sqlite3_int64 v, pages, page_size, free_pages;
    sqlite3_stmt *q;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = sm_sqlite_int_pragma(s, "PRAGMA user_version", &v)) != SQLITE_OK)
        return rc;
    out->schema_version = (int)v;
    if ((rc = sm_sqlite_int_pragma(s, "PRAGMA page_count", &pages))
        != SQLITE_OK
        || (rc = sm_sqlite_int_pragma(s, "PRAGMA page_size", &page_size))
            != SQLITE_OK
        || (rc = sm_sqlite_int_pragma(s, "PRAGMA freelist_count", &free_pages))
           != SQLITE_OK)
        return rc;
    out->db_bytes = pages * page_size;
    out->free_bytes = free_pages * page_size;
    if (!with_meta)
        return SQLITE_OK;
    rc = sqlite3_prepare_v2(s->db, "SELECT key, value FROM meta WHERE key IN"
                            " ('store_id', 'created')", -1, &q, NULL);
    if (rc != SQLITE_OK) {
        sm_sqlite_set_error(&s->base,
                            "cannot read the store's meta data", s->db);
        return rc;
    }
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(q, 0);
        if (k && strcmp(k, "store_id") == 0)
            out->store_id = apr_pstrdup(p, (const char *)
                                        sqlite3_column_text(q, 1));
        else if (k)
            out->created = apr_time_from_sec(sqlite3_column_int64(q, 1));
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) {
        sm_sqlite_set_error(&s->base,
                            "cannot read the store's meta data", s->db);
        return rc;
    }
    return SQLITE_OK;
}

apr_status_t sm_sqlite_about(sm_store *st, apr_pool_t *p,
                                 sm_store_about *out)
{
    return sm_sqlite_status(sm_sqlite_read_about((sqlite_store *)st, p, out,
                                                 1));
}

/* Make sure the sites have rows holding their current settings. */
apr_status_t sm_sqlite_recent(sm_store *st, apr_pool_t *p,
                                  const char *base, int n, apr_time_t since,
                                  apr_array_header_t **urls,
                                  apr_array_header_t **days)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *site = NULL, *recent = NULL, *added = NULL;
    sqlite3_stmt *removed = NULL;
    sqlite3_int64 id;
    apr_status_t rv;
    int rc;

    *urls = apr_array_make(p, n > 0 ? n : 1, sizeof(sm_recent_url));
    *days = apr_array_make(p, 32, sizeof(sm_day_count));
    if ((rv = prepare(s, "SELECT id FROM sites WHERE base = ?1", &site))
        != APR_SUCCESS)
        return rv;
    sm_sqlite_text(site, 1, base);
    if ((rc = sqlite3_step(site)) != SQLITE_ROW) {
        sqlite3_finalize(site);
        if (rc == SQLITE_DONE)
            return APR_SUCCESS;         /* no such site: nothing */
        sm_sqlite_set_error(&s->base, "cannot read the sites", s->db);
        return APR_EGENERAL;
    }
    id = sqlite3_column_int64(site, 0);
    sqlite3_finalize(site);
    if ((rv = prepare(s, "SELECT url, lastmod FROM urls WHERE id >= ?1"
                         " AND id < ?2 ORDER BY lastmod DESC, id DESC"
                         " LIMIT ?3", &recent)) != APR_SUCCESS
        || (rv = prepare(s, "SELECT first_seen / 86400, count(*) FROM urls"
                            " WHERE id >= ?1 AND id < ?2 AND first_seen >= ?3"
                            " GROUP BY 1 ORDER BY 1", &added))
           != APR_SUCCESS
        || (rv = prepare(s, "SELECT day, n FROM removed_days"
                            " WHERE site_id = ?1 AND day >= ?2 ORDER BY day",
                         &removed)) != APR_SUCCESS)
        goto done;
    sqlite3_bind_int64(recent, 1, SITE_FIRST_ID(id));
    sqlite3_bind_int64(recent, 2, SITE_FIRST_ID(id + 1));
    sqlite3_bind_int(recent, 3, n);
    while ((rc = sqlite3_step(recent)) == SQLITE_ROW) {
        sm_recent_url *u = apr_array_push(*urls);
        u->url = apr_pstrdup(p, (const char *)sqlite3_column_text(recent, 0));
        u->lastmod = opt_time(recent, 1);
    }
    if (rc != SQLITE_DONE)
        goto failed;
    sqlite3_bind_int64(added, 1, SITE_FIRST_ID(id));
    sqlite3_bind_int64(added, 2, SITE_FIRST_ID(id + 1));
    sqlite3_bind_int64(added, 3, apr_time_sec(since));
    while ((rc = sqlite3_step(added)) == SQLITE_ROW) {
        sm_day_count *d = apr_array_push(*days);
        d->day = sqlite3_column_int64(added, 0);
        d->added = sqlite3_column_int64(added, 1);
        d->removed = 0;
    }
    if (rc != SQLITE_DONE)
        goto failed;
    sqlite3_bind_int64(removed, 1, id);
    sqlite3_bind_int64(removed, 2, apr_time_sec(since) / 86400);
    while ((rc = sqlite3_step(removed)) == SQLITE_ROW)
        sm_day_removed(*days, sqlite3_column_int64(removed, 0),
                       sqlite3_column_int64(removed, 1));
    if (rc != SQLITE_DONE)
        goto failed;
    rv = APR_SUCCESS;
    goto done;
failed:
    sm_sqlite_set_error(&s->base, "cannot read the site's URLs", s->db);
    rv = APR_EGENERAL;
done:
    sqlite3_finalize(recent);
    sqlite3_finalize(added);
    sqlite3_finalize(removed);
    return rv;
}

