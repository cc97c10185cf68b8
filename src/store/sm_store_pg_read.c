/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_pg_read.c: reading the PostgreSQL store (the sitemap handler,
 * sitemapctl) and checking it (see sm_store_pg.h). */
#include "store/sm_store_pg.h"
#include "head/sm_alternates.h"

#include <stdlib.h>
#include <string.h>

/* ---- reading ------------------------------------------------------------ */

apr_status_t sm_pg_read_begin(sm_store *st)
{
    pg_store *s = (pg_store *)st;

    return sm_pg_start(s, "ISOLATION LEVEL REPEATABLE READ READ ONLY", NULL)
           == 0 ? APR_SUCCESS : APR_EGENERAL;
}

void sm_pg_read_end(sm_store *st)
{
    sm_pg_rollback((pg_store *)st);
}

apr_status_t sm_pg_site_info(sm_store *st, apr_pool_t *p,
                             const char *base, apr_int64_t page,
                             sm_site_info *out)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    PGresult *res;
    apr_int64_t site_id;
    int i;

    memset(out, 0, sizeof(*out));
    out->pages = apr_array_make(p, 4, sizeof(sm_page_info));
    p_str(&ps, base);
    if (!(res = sm_pg_q(s, "cannot read the site", "SELECT m.value, s.id,"
                        " s.index_changed, s.settings_changed, s.settings"
                        " FROM sitemap_meta m LEFT JOIN sitemap_sites s"
                        " ON s.base = $1 WHERE m.key = 'store_id'", &ps)))
        return APR_EGENERAL;
    if (PQntuples(res) != 1) {
        PQclear(res);
        apr_cpystrn(st->errmsg, "cannot read the store id",
                    sizeof(st->errmsg));
        return APR_EGENERAL;
    }
    out->store_id = apr_pstrdup(p, PQgetvalue(res, 0, 0));
    if (PQgetisnull(res, 0, 1)) {
        PQclear(res);
        return APR_SUCCESS;
    }
    out->known = 1;
    site_id = i64(res, 0, 1);
    out->index_changed = apr_time_from_sec(i64(res, 0, 2));
    out->settings_changed = apr_time_from_sec(i64(res, 0, 3));
    out->settings = apr_pstrdup(p, PQgetvalue(res, 0, 4));
    PQclear(res);

    ps.n = 0;
    p_i64(&ps, site_id);
    p_i64(&ps, page);
    if (!(res = sm_pg_q(s, "cannot read the pages", "SELECT page, url_count,"
                        " version, lastmod, changed, xml_bytes"
                        " FROM sitemap_pages"
                        " WHERE site_id = $1 AND url_count > 0"
                        " AND ($2 = 0 OR page = $2) ORDER BY page", &ps)))
        return APR_EGENERAL;
    for (i = 0; i < PQntuples(res); i++) {
        sm_page_info *pi = apr_array_push(out->pages);
        pi->page = i64(res, i, 0);
        pi->url_count = i64(res, i, 1);
        pi->version = i64(res, i, 2);
        pi->lastmod = apr_time_from_sec(i64(res, i, 3));
        pi->changed = apr_time_from_sec(i64(res, i, 4));
        pi->xml_bytes = i64(res, i, 5);
    }
    PQclear(res);
    return APR_SUCCESS;
}

typedef apr_status_t row_fn(void *baton, const PGresult *res, int row);

/* Rows fetched at a time: about 200 KB of a page's URLs. */
#define FETCH_ROWS "2000"
/* What every query given to stream begins with. */
#define CURSOR "DECLARE sm_rows NO SCROLL CURSOR FOR "

/* Run a query (CURSOR "SELECT ...") through a cursor, FETCH_ROWS rows at a
 * time: memory stays that of one batch whatever the number of rows
 * (libpq's single-row mode costs a result allocation per row: 5 times
 * slower on a 50,000-URL page).  In the caller's transaction, or in one
 * of its own. */
static apr_status_t stream(pg_store *s, const char *what, const char *sql,
                           const params *ps, row_fn *fn, void *baton)
{
    int own = PQtransactionStatus(s->conn) == PQTRANS_IDLE;
    apr_status_t rv = APR_SUCCESS;
    PGresult *res;
    int i, n;

    if (own && sm_pg_start(s, "ISOLATION LEVEL REPEATABLE READ READ ONLY",
                           NULL) != 0)
        return APR_EGENERAL;
    if (!(res = sm_pg_q(s, what, sql, ps)))
        goto fail;
    PQclear(res);
    do {
        if (!(res = sm_pg_q(s, what, "FETCH " FETCH_ROWS " FROM sm_rows",
                            NULL)))
            goto fail;
        n = PQntuples(res);
        for (i = 0; i < n && rv == APR_SUCCESS; i++)
            rv = fn(baton, res, i);
        PQclear(res);
    } while (n > 0 && rv == APR_SUCCESS);
    if (!(res = sm_pg_q(s, what, "CLOSE sm_rows", NULL)))
        goto fail;
    PQclear(res);
    if (own)
        sm_pg_rollback(s);
    return rv;

fail:
    if (own)
        sm_pg_rollback(s);
    return rv != APR_SUCCESS ? rv : APR_EGENERAL;
}

/* The ids of page of the site (by base), as in sm_store_sqlite.c: from the
 * page's first id to the next page's, or to the end of the site's range;
 * page 0: the whole site.  Asked first, so that the URLs are read as one
 * range of the primary key whatever the planner's statistics (joined in
 * one query, a fresh store got a scan of the whole table).  *lo == *hi:
 * no such page. */
static int id_range(pg_store *s, const char *what, const char *base,
                    apr_int64_t page, apr_int64_t *lo, apr_int64_t *hi)
{
    params ps = { .n = 0 };
    PGresult *res;

    p_str(&ps, base);
    p_i64(&ps, page);
    res = sm_pg_q(s, what, "SELECT CASE WHEN $2 = 0 THEN s.id << "
                  SITE_ID_SHIFT_SQL " ELSE p.first_id END,"
                  " CASE WHEN $2 = 0 THEN NULL ELSE (SELECT n.first_id"
                  " FROM sitemap_pages n WHERE n.site_id = s.id"
                  " AND n.page > $2 ORDER BY n.page LIMIT 1) END,"
                  " (s.id + 1) << " SITE_ID_SHIFT_SQL
                  " FROM sitemap_sites s LEFT JOIN sitemap_pages p"
                  " ON p.site_id = s.id AND p.page = $2"
                  " WHERE s.base = $1 AND ($2 = 0 OR p.page IS NOT NULL)",
                  &ps);
    if (!res)
        return -1;
    *lo = *hi = 0;
    if (PQntuples(res) == 1) {
        *lo = i64(res, 0, 0);
        *hi = PQgetisnull(res, 0, 1) ? i64(res, 0, 2) : i64(res, 0, 1);
    }
    PQclear(res);
    return 0;
}

typedef struct {
    sm_url_fn *url_fn;
    sm_url_row_fn *row_fn;
    void *baton;
    sm_title_fn *title_fn;
} walk;

static apr_status_t page_url(void *baton, const PGresult *res, int row)
{
    walk *w = baton;
    return w->url_fn(w->baton, PQgetvalue(res, row, 0),
                     apr_time_from_sec(i64(res, row, 1)),
                     PQgetisnull(res, row, 2) ? NULL
                     : PQgetvalue(res, row, 2));
}

/* The URLs of a page (0: of the site) in id order, through fn. */
static apr_status_t walk_ids(pg_store *s, const char *what, const char *base,
                             apr_int64_t page, const char *sql, row_fn *fn,
                             walk *w)
{
    params ps = { .n = 0 };
    apr_int64_t lo, hi;

    if (id_range(s, what, base, page, &lo, &hi) != 0)
        return APR_EGENERAL;
    p_i64(&ps, lo);
    p_i64(&ps, hi);
    return stream(s, what, sql, &ps, fn, w);
}

apr_status_t sm_pg_page_urls(sm_store *st, const char *base,
                             apr_int64_t page, sm_url_fn *fn,
                             void *baton)
{
    walk w = { fn, NULL, baton, NULL };

    return walk_ids((pg_store *)st, "cannot read the page's URLs", base,
                    page, CURSOR "SELECT url, lastmod, alternates"
                    " FROM sitemap_urls"
                    " WHERE id >= $1 AND id < $2 ORDER BY id", page_url, &w);
}

static apr_status_t page_title(void *baton, const PGresult *res, int row)
{
    walk *w = baton;
    return w->title_fn(w->baton, PQgetvalue(res, row, 0),
                       PQgetvalue(res, row, 1));
}

apr_status_t sm_pg_page_titles(sm_store *st, const char *base,
                               apr_int64_t page, sm_title_fn *fn,
                               void *baton)
{
    walk w = { NULL, NULL, baton, fn };

    return walk_ids((pg_store *)st, "cannot read the page's titles", base,
                    page, CURSOR "SELECT url, title FROM sitemap_urls"
                    " WHERE id >= $1 AND id < $2 AND title IS NOT NULL"
                    " ORDER BY id", page_title, &w);
}

apr_status_t sm_pg_page_images(sm_store *st, const char *base,
                               apr_int64_t page, sm_image_fn *fn,
                               void *baton)
{
    walk w = { NULL, NULL, baton, fn };

    return walk_ids((pg_store *)st, "cannot read the page's images", base,
                    page, CURSOR "SELECT u.url, i.image"
                    " FROM sitemap_images i JOIN sitemap_urls u"
                    " ON u.id = i.url_id WHERE i.url_id >= $1"
                    " AND i.url_id < $2"
                    " ORDER BY i.url_id, i.source, i.image COLLATE \"C\"",
                    page_title, &w);
}

/* ---- administration (sitemapctl) --------------------------------------- */

apr_status_t sm_pg_site_row(sm_store *st, apr_pool_t *p,
                            const char *base, sm_site_row *out)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    PGresult *res;

    memset(out, 0, sizeof(*out));
    out->settings = "";
    if (sm_pg_connection(s) != 0)
        return APR_EGENERAL;
    p_str(&ps, base);
    if (!(res = sm_pg_q(s, "cannot read the site",
                        "SELECT url_count, last_page,"
                        " page_size, settings FROM sitemap_sites WHERE base ="
                        " $1",
                        &ps)))
        return APR_EGENERAL;
    if (PQntuples(res) == 1) {
        out->known = 1;
        out->url_count = i64(res, 0, 0);
        out->last_page = i64(res, 0, 1);
        out->page_size = (int)i64(res, 0, 2);
        out->settings = apr_pstrdup(p, PQgetvalue(res, 0, 3));
    }
    PQclear(res);
    return APR_SUCCESS;
}

static apr_time_t opt_time(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? 0
           : apr_time_from_sec(i64(res, row, col));
}

/* A site's first five columns (base, url_count, last_page, page_size,
 * pages) as a new element of out, the other fields 0. */
static sm_site_stats *site_of_row(apr_pool_t *p, const PGresult *res,
                                  int row, apr_array_header_t *out)
{
    sm_site_stats *ss = apr_array_push(out);

    memset(ss, 0, sizeof(*ss));
    ss->base = apr_pstrdup(p, PQgetvalue(res, row, 0));
    ss->url_count = i64(res, row, 1);
    ss->last_page = i64(res, row, 2);
    ss->page_size = (int)i64(res, row, 3);
    ss->pages = i64(res, row, 4);
    return ss;
}

apr_status_t sm_pg_site_stats(sm_store *st, apr_pool_t *p,
                              const char *base, apr_array_header_t **out)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    PGresult *res;
    int i;

    *out = apr_array_make(p, 4, sizeof(sm_site_stats));
    if (sm_pg_connection(s) != 0)
        return APR_EGENERAL;
    p_str(&ps, base);
    if (!(res = sm_pg_q(s, "cannot read the sites",
                        "SELECT s.base, s.url_count,"
                        " s.last_page, s.page_size, (SELECT count(*) FROM"
                        " sitemap_pages p WHERE p.site_id = s.id"
                        " AND p.url_count > 0), u.*"
                        " FROM sitemap_sites s, LATERAL (SELECT max(lastmod),"
                        " min(lastmod), max(last_seen), min(last_seen),"
                        " count(alternates), coalesce(sum(length(alternates)"
                        " - length(replace(alternates, chr(10), '')) + 1),"
                        " 0)"
                        " FROM sitemap_urls WHERE id >= s.id << "
                        SITE_ID_SHIFT_SQL " AND id < (s.id + 1) << "
                        SITE_ID_SHIFT_SQL ") u"
                        " WHERE $1::text IS NULL OR s.base = $1 ORDER BY"
                        " s.base"
                        " COLLATE \"C\"", &ps)))
        return APR_EGENERAL;
    for (i = 0; i < PQntuples(res); i++) {
        sm_site_stats *ss = site_of_row(p, res, i, *out);
        ss->lastmod_newest = opt_time(res, i, 5);
        ss->lastmod_oldest = opt_time(res, i, 6);
        ss->seen_newest = opt_time(res, i, 7);
        ss->seen_oldest = opt_time(res, i, 8);
        ss->urls_with_alternates = i64(res, i, 9);
        ss->alternates = i64(res, i, 10);
    }
    PQclear(res);
    return APR_SUCCESS;
}

apr_status_t sm_pg_site_list(sm_store *st, apr_pool_t *p,
                             apr_array_header_t **out)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    PGresult *res;
    int i;

    *out = apr_array_make(p, 4, sizeof(sm_site_stats));
    /* In the caller's read transaction, or on its own. */
    if (sm_pg_connected(s) != 0)
        return APR_EGENERAL;
    if (!(res = sm_pg_q(s, "cannot read the sites",
                        "SELECT s.base, s.url_count, s.last_page,"
                        " s.page_size, (SELECT count(*) FROM sitemap_pages p"
                        " WHERE p.site_id = s.id AND p.url_count > 0)"
                        " FROM sitemap_sites s ORDER BY s.base COLLATE \"C\"",
                        &ps)))
        return APR_EGENERAL;
    for (i = 0; i < PQntuples(res); i++)
        site_of_row(p, res, i, *out);
    PQclear(res);
    return APR_SUCCESS;
}

static apr_status_t url_row(void *baton, const PGresult *res, int row)
{
    walk *w = baton;
    return w->row_fn(w->baton, PQgetvalue(res, row, 0), i64(res, row, 1),
                     apr_time_from_sec(i64(res, row, 2)),
                     apr_time_from_sec(i64(res, row, 3)),
                     PQgetisnull(res, row, 4) ? NULL
                     : PQgetvalue(res, row, 4));
}

apr_status_t sm_pg_url_rows(sm_store *st, const char *base,
                            apr_int64_t page, sm_url_row_fn *fn,
                            void *baton)
{
    pg_store *s = (pg_store *)st;
    walk w = { NULL, fn, baton, NULL };

    if (sm_pg_connected(s) != 0)
        return APR_EGENERAL;
    return walk_ids(s, "cannot read the site's URLs", base, page, CURSOR
                    "SELECT url, page, lastmod, last_seen, alternates"
                    " FROM sitemap_urls"
                    " WHERE id >= $1 AND id < $2 ORDER BY id", url_row, &w);
}

/* The status page's history: as in sm_store_sqlite.c. */
apr_status_t sm_pg_recent(sm_store *st, apr_pool_t *p, const char *base,
                          int n, apr_time_t since, apr_array_header_t **urls,
                          apr_array_header_t **days)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    PGresult *res;
    apr_int64_t lo, hi;
    int i;

    *urls = apr_array_make(p, n > 0 ? n : 1, sizeof(sm_recent_url));
    *days = apr_array_make(p, 32, sizeof(sm_day_count));
    if ((sm_pg_connected(s) != 0)
        || id_range(s, "cannot read the sites", base, 0, &lo, &hi) != 0)
        return APR_EGENERAL;
    if (lo == hi)
        return APR_SUCCESS;             /* no such site: nothing */
    p_i64(&ps, lo);
    p_i64(&ps, hi);
    p_i64(&ps, n);
    if (!(res = sm_pg_q(s, "cannot read the site's URLs", "SELECT url,"
                        " lastmod FROM sitemap_urls WHERE id >= $1"
                        " AND id < $2 ORDER BY lastmod DESC, id DESC"
                        " LIMIT $3", &ps)))
        return APR_EGENERAL;
    for (i = 0; i < PQntuples(res); i++) {
        sm_recent_url *u = apr_array_push(*urls);
        u->url = apr_pstrdup(p, PQgetvalue(res, i, 0));
        u->lastmod = apr_time_from_sec(i64(res, i, 1));
    }
    PQclear(res);
    ps.n = 2;
    p_i64(&ps, apr_time_sec(since));
    if (!(res = sm_pg_q(s, "cannot read the site's URLs", "SELECT"
                        " first_seen / 86400, count(*) FROM sitemap_urls"
                        " WHERE id >= $1 AND id < $2 AND first_seen >= $3"
                        " GROUP BY 1 ORDER BY 1", &ps)))
        return APR_EGENERAL;
    for (i = 0; i < PQntuples(res); i++) {
        sm_day_count *d = apr_array_push(*days);
        d->day = i64(res, i, 0);
        d->added = i64(res, i, 1);
        d->removed = 0;
    }
    PQclear(res);
    ps.n = 1;                   /* lo: the site's first id */
    p_i64(&ps, apr_time_sec(since) / 86400);
    if (!(res = sm_pg_q(s, "cannot read the removals", "SELECT day, n FROM"
                        " sitemap_removed_days WHERE site_id = ($1::bigint >> "
                        SITE_ID_SHIFT_SQL ") AND day >= $2", &ps)))
        return APR_EGENERAL;
    for (i = 0; i < PQntuples(res); i++)
        sm_day_removed(*days, i64(res, i, 0), i64(res, i, 1));
    PQclear(res);
    return APR_SUCCESS;
}

int sm_pg_read_about(pg_store *s, apr_pool_t *p, sm_store_about *out)
{
    PGresult *res;
    int i;

    memset(out, 0, sizeof(*out));
    if (!(res = sm_pg_q(s, "cannot read the store's meta data",
                        "SELECT key, value"
                        " FROM sitemap_meta", NULL)))
        return -1;
    for (i = 0; i < PQntuples(res); i++) {
        const char *k = PQgetvalue(res, i, 0), *v = PQgetvalue(res, i, 1);
        if (strcmp(k, "store_id") == 0)
            out->store_id = apr_pstrdup(p, v);
        else if (strcmp(k, "created") == 0)
            out->created = apr_time_from_sec(apr_atoi64(v));
        else if (strcmp(k, "schema_version") == 0)
            out->schema_version = atoi(v);
    }
    PQclear(res);
    if (!(res = sm_pg_q(s, "cannot read the tables' sizes", "SELECT"
                        " sum(pg_total_relation_size(c))::bigint FROM"
                        " unnest(ARRAY['sitemap_meta', 'sitemap_sites',"
                        " 'sitemap_urls', 'sitemap_pages']::regclass[])"
                        " c", NULL)))
        return -1;
    out->db_bytes = i64(res, 0, 0);
    PQclear(res);
    return 0;
}

apr_status_t sm_pg_about(sm_store *st, apr_pool_t *p, sm_store_about *out)
{
    pg_store *s = (pg_store *)st;
    return sm_pg_connection(s) == 0 && sm_pg_read_about(s, p, out) == 0
           ? APR_SUCCESS : APR_EGENERAL;
}

/* ---- check ----------------------------------------------------------- */

/* Stored alternates read back as the documents read them (see
 * sm_store_sqlite_check.c). */
typedef struct {
    apr_pool_t *p, *scratch;
    apr_int64_t bad;
    const char *first;
} alternates_check;

static apr_status_t check_alternates_row(void *baton, const PGresult *res,
                                         int row)
{
    alternates_check *ac = baton;
    const char *alts = PQgetvalue(res, row, 1);

    if (!*alts || !sm_alternates_valid(ac->scratch, alts)) {
        if (ac->bad++ == 0)
            ac->first = apr_pstrdup(ac->p, PQgetvalue(res, row, 0));
    }
    apr_pool_clear(ac->scratch);
    return APR_SUCCESS;
}

static void check_alternates(pg_store *s, apr_pool_t *p,
                             apr_array_header_t *problems)
{
    alternates_check ac = { p, NULL, 0, NULL };

    apr_pool_create(&ac.scratch, p);
    if (stream(s, "cannot check the URLs' alternates", CURSOR "SELECT url,"
               " alternates FROM sitemap_urls WHERE alternates IS NOT NULL",
               NULL, check_alternates_row, &ac) != APR_SUCCESS)
        APR_ARRAY_PUSH(problems, const char *) =
            apr_pstrdup(p, s->base.errmsg);
    else if (ac.bad)
        APR_ARRAY_PUSH(problems, const char *) =
            apr_psprintf(p, "URLs have hreflang alternates no writer could "
                         "have stored (%" APR_INT64_T_FMT " rows, the first "
                         "%s)", ac.bad, ac.first);
    apr_pool_destroy(ac.scratch);
}

static const struct {
    const char *sql, *what;
} consistency[] = {
    { "SELECT count(*) FROM (SELECT site_id, page, count(*) AS n,"
      " sum(xml_len) AS b FROM sitemap_urls GROUP BY site_id, page) u"
      " LEFT JOIN sitemap_pages p ON p.site_id = u.site_id"
      " AND p.page = u.page WHERE p.url_count IS DISTINCT FROM u.n"
      " OR p.xml_bytes IS DISTINCT FROM u.b",
      "page summaries disagree with their URLs" },
    { "SELECT count(*) FROM sitemap_pages p LEFT JOIN"
      " (SELECT DISTINCT site_id, page FROM sitemap_urls) u"
      " ON u.site_id = p.site_id AND u.page = p.page"
      " WHERE p.url_count <> 0 AND u.page IS NULL",
      "page summaries count URLs that are not there" },
    { "WITH r AS (SELECT site_id, page, first_id AS lo,"
      "  coalesce(lead(first_id)"
      "  OVER (PARTITION BY site_id ORDER BY page),"
      "  (SELECT next_id FROM sitemap_sites s WHERE s.id = p.site_id)) AS hi"
      "  FROM sitemap_pages p)"
      " SELECT count(*) FROM sitemap_urls u LEFT JOIN r"
      " ON r.site_id = u.site_id AND r.page = u.page"
      " WHERE r.lo IS NULL OR u.id < r.lo OR u.id >= r.hi"
      " OR (u.id >> " SITE_ID_SHIFT_SQL ") <> u.site_id",
      "URLs are outside their page's range of ids" },
    { "SELECT count(*) FROM sitemap_sites s WHERE s.next_id <= (SELECT"
      " coalesce(max(id), s.id << " SITE_ID_SHIFT_SQL ") FROM sitemap_urls"
      " WHERE id >= s.id << " SITE_ID_SHIFT_SQL
      " AND id < (s.id + 1) << " SITE_ID_SHIFT_SQL ")",
      "sites' next ids are not past their URLs" },
    { "SELECT count(*) FROM sitemap_sites s WHERE s.url_count <>"
      " (SELECT count(*) FROM sitemap_urls u WHERE u.site_id = s.id)",
      "sites' URL counts disagree with their URLs" },
    { "SELECT count(*) FROM sitemap_urls u JOIN sitemap_sites s"
      " ON s.id = u.site_id WHERE u.page < 1 OR u.page > s.last_page",
      "URLs are on pages outside their site's range" },
    /* What the module's role must be allowed to do. */
    { "SELECT count(*) FROM unnest(ARRAY['sitemap_meta', 'sitemap_sites',"
      " 'sitemap_urls', 'sitemap_pages', 'sitemap_indexnow_pending',"
      " 'sitemap_indexnow_state', 'sitemap_removed_days',"
      " 'sitemap_verdicts', 'sitemap_crawls', 'sitemap_crawlers',"
      " 'sitemap_crawl_unlisted', 'sitemap_images',"
      " 'sitemap_crawl_days', 'sitemap_robots'])"
      " t WHERE NOT has_table_privilege(t,"
      " 'SELECT, INSERT, UPDATE, DELETE')",
      "this role may not read and write all of the tables (see "
      "docs/operations.md, \"A farm of servers: PostgreSQL\", for the "
      "grants)" },
};

apr_status_t sm_store_check_pg(apr_pool_t *p, const char *uri,
                               int busy_timeout_ms,
                               apr_array_header_t *problems,
                               sm_store_about *about, char *errmsg,
                               apr_size_t errlen)
{
    pg_store *s = apr_pcalloc(p, sizeof(*s));
    sm_store_about local;
    PGresult *res;
    int version = 0;
    apr_size_t i;

    if (!about)
        about = &local;
    memset(about, 0, sizeof(*about));
    s->base.pool = p;
    s->lock_timeout_ms = busy_timeout_ms > 0 ? busy_timeout_ms : 1000;
    s->uri = apr_pstrdup(p, uri);
    if (sm_pg_connect(s) != 0) {
        if (errmsg)
            apr_cpystrn(errmsg, s->base.errmsg, errlen);
        sm_pg_close(&s->base);
        return APR_EGENERAL;
    }
    if (sm_pg_begin(s, "ISOLATION LEVEL REPEATABLE READ READ ONLY", NULL) != 0
        || sm_pg_schema_version(s, &version) != 0) {
        APR_ARRAY_PUSH(problems, const char *) =
            apr_pstrdup(p, s->base.errmsg);
        goto out;
    }
    about->schema_version = version;
    if (version == 0) {
        res = sm_pg_q(s, "", "SELECT has_schema_privilege(current_schema(),"
                      " 'CREATE')", NULL);
        APR_ARRAY_PUSH(problems, const char *) = res
            && strcmp(PQgetvalue(res, 0, 0), "t") == 0
            ? "not a mod_sitemap store yet: no table sitemap_meta (the "
              "module creates the tables on first use)"
            : "not a mod_sitemap store yet: no table sitemap_meta, and this "
              "role may not create tables (see docs/operations.md, \"A "
              "farm of servers: PostgreSQL\")";
        PQclear(res);
        goto out;
    }
    if (version != SM_PG_SCHEMA_VERSION) {
        APR_ARRAY_PUSH(problems, const char *) =
            apr_psprintf(p, "schema version %d: this sitemapctl knows %d",
                         version, SM_PG_SCHEMA_VERSION);
        goto out;
    }
    if (sm_pg_read_about(s, p, about) != 0) {
        APR_ARRAY_PUSH(problems, const char *) =
            apr_pstrdup(p, s->base.errmsg);
        goto out;
    }
    for (i = 0; i < sizeof(consistency) / sizeof(consistency[0]); i++) {
        apr_int64_t bad;
        if (!(res = sm_pg_q(s, "", consistency[i].sql, NULL))) {
            APR_ARRAY_PUSH(problems, const char *) =
                apr_psprintf(p, "cannot check whether %s%s",
                             consistency[i].what, s->base.errmsg);
            /* A failed statement ends the transaction: go on in another. */
            sm_pg_rollback(s);
            if (sm_pg_begin(s, "ISOLATION LEVEL REPEATABLE READ READ ONLY",
                            NULL) != 0)
                goto out;
            continue;
        }
        bad = i64(res, 0, 0);
        PQclear(res);
        if (bad > 0)
            APR_ARRAY_PUSH(problems, const char *) =
                apr_psprintf(p, "%s (%" APR_INT64_T_FMT " rows)",
                             consistency[i].what, bad);
    }
    check_alternates(s, p, problems);

out:
    sm_pg_rollback(s);
    sm_pg_close(&s->base);
    return APR_SUCCESS;
}

/* For the other files of the PostgreSQL store (sm_store_pg.h). */
apr_status_t sm_pg_stream(pg_store *s, const char *what, const char *sql,
                          const params *ps, sm_pg_row_fn *fn, void *baton)
{
    return stream(s, what, sql, ps, fn, baton);
}

int sm_pg_id_range(pg_store *s, const char *what, const char *base,
                   apr_int64_t *lo, apr_int64_t *hi)
{
    return id_range(s, what, base, 0, lo, hi);
}
