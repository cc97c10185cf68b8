/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_pg_crawl.c: crawl coverage (see sm_store_sqlite_crawl.c) on
 * PostgreSQL, so that a farm's coverage is the farm's: written in the
 * writer's transaction, whose site rows are locked (tx_lock_sites), so one
 * writer of a farm at a time hands out a site's seq.  The figures are
 * counted by sm_coverage_count (sm_store_tx.c), as SQLite's are. */
#include "store/sm_store_pg.h"

#include <string.h>

int sm_pg_crawls_allowed(pg_store *s)
{
    PGresult *res;

    if (s->crawls_ok)
        return s->crawls_ok > 0;
    if (!(res = sm_pg_q(s, "cannot read the role's privileges", "SELECT"
                        " has_table_privilege('sitemap_crawls',"
                        " 'SELECT, INSERT, UPDATE, DELETE')"
                        " AND has_table_privilege('sitemap_crawlers',"
                        " 'SELECT, INSERT, UPDATE, DELETE')"
                        " AND has_table_privilege('sitemap_crawl_unlisted',"
                        " 'SELECT, INSERT, UPDATE, DELETE')"
                        " AND (to_regclass('sitemap_crawl_days') IS NULL"
                        " OR has_table_privilege('sitemap_crawl_days',"
                        " 'SELECT, INSERT, UPDATE, DELETE'))", NULL)))
        return -1;
    s->crawls_ok = PQntuples(res) == 1
                   && strcmp(PQgetvalue(res, 0, 0), "t") == 0 ? 1 : -1;
    PQclear(res);
    return s->crawls_ok > 0;
}

apr_status_t sm_pg_crawl_tx(pg_store *s, int (*fn)(pg_store *, void *),
                           void *baton)
{
    PGresult *res;
    int has;

    if (sm_pg_ready(s, SM_PG_SCHEMA_CRAWL_DAYS, &has) != 0)
        return APR_EGENERAL;
    if (!has)
        return APR_ENOTIMPL;
    /* A role not granted the crawl tables keeps no coverage (said once,
     * when a crawl is written): nothing here either, and nothing to log. */
    if ((has = sm_pg_crawls_allowed(s)) <= 0)
        return has < 0 ? APR_EGENERAL : APR_ENOTIMPL;
    if (sm_pg_start(s, "", NULL) != 0)
        return APR_EGENERAL;
    if (fn(s, baton) != 0
        || !(res = sm_pg_exec(s, "cannot commit", "COMMIT"))) {
        sm_pg_rollback(s);
        return APR_EGENERAL;
    }
    PQclear(res);
    return APR_SUCCESS;
}

/* The same, for a fetch to write: said in the log once (-2: said). */
static int may_write(pg_store *s)
{
    int allowed = sm_pg_crawls_allowed(s);

    if (allowed == 0 && s->crawls_ok == -1) {
        s->crawls_ok = -2;
        sm_log(s->base.log, SM_LOG_WARN, 0, "store %s: this role may not "
               "write sitemap_crawls, sitemap_crawlers, "
               "sitemap_crawl_unlisted and sitemap_crawl_days: no crawl coverage is kept (see "
               "docs/operations.md, \"A farm of servers: PostgreSQL\", for "
               "the grants)", s->base.path);
    }
    return allowed;
}

static int unlisted(pg_store *s, apr_int64_t site_id, const sm_change *c)
{
    params ps = { .n = 0 };

    p_i64(&ps, site_id);
    p_str(&ps, c->crawler);
    if (sm_pg_run(s, "cannot count a crawler's fetch", "INSERT INTO"
                  " sitemap_crawlers(site_id, crawler, unlisted_hits)"
                  " VALUES ($1, $2, 1) ON CONFLICT (site_id, crawler)"
                  " DO UPDATE SET unlisted_hits ="
                  " sitemap_crawlers.unlisted_hits + 1", &ps, NULL) != 0)
        return -1;
    p_str(&ps, c->url);
    p_i64(&ps, apr_time_sec(c->seen));
    p_i64(&ps, c->status);
    if (sm_pg_run(s, "cannot keep a crawler's fetch", "INSERT INTO"
                  " sitemap_crawl_unlisted(site_id, crawler, url, seq,"
                  " fetched, status) VALUES ($1, $2, $3, (SELECT"
                  " coalesce(max(seq), 0) + 1 FROM sitemap_crawl_unlisted"
                  " WHERE site_id = $1 AND crawler = $2), $4, $5)"
                  " ON CONFLICT (site_id, crawler, url) DO UPDATE SET"
                  " seq = excluded.seq, fetched = excluded.fetched,"
                  " status = excluded.status"
                  " WHERE excluded.fetched >= sitemap_crawl_unlisted.fetched",
                  &ps, NULL) != 0)
        return -1;
    ps.n = 2;
    p_i64(&ps, SM_CRAWL_UNLISTED_MAX);
    return sm_pg_run(s, "cannot drop old crawler fetches", "DELETE FROM"
                     " sitemap_crawl_unlisted WHERE site_id = $1"
                     " AND crawler = $2 AND seq <= (SELECT max(seq) FROM"
                     " sitemap_crawl_unlisted WHERE site_id = $1"
                     " AND crawler = $2) - $3", &ps, NULL);
}

int sm_pg_crawl_put(pg_store *s, apr_int64_t site_id, const sm_change *c)
{
    params ps = { .n = 0 };
    PGresult *res;
    int allowed, listed;

    if (!c->crawler || !c->url)
        return 0;
    if ((allowed = may_write(s)) <= 0)
        return allowed;
    p_i64(&ps, site_id);
    p_str(&ps, c->crawler);
    if (c->sitemap) {
        p_i64(&ps, apr_time_sec(c->seen));
        return sm_pg_run(s, "cannot count a sitemap fetch", "INSERT INTO"
                         " sitemap_crawlers(site_id, crawler,"
                         " sitemap_fetches, last_sitemap_fetch)"
                         " VALUES ($1, $2, 1, $3)"
                         " ON CONFLICT (site_id, crawler) DO UPDATE SET"
                         " sitemap_fetches ="
                         " sitemap_crawlers.sitemap_fetches + 1,"
                         " last_sitemap_fetch = greatest("
                         "sitemap_crawlers.last_sitemap_fetch,"
                         " excluded.last_sitemap_fetch)", &ps, NULL);
    }
    p_str(&ps, c->url);
    p_i64(&ps, apr_time_sec(c->seen));
    p_i64(&ps, c->status);
    /* The URL's row is locked first: another server's removal of it
     * either commits before (no row: not listed) or waits for us (the
     * foreign key never fails). */
    if (!(res = sm_pg_q(s, "cannot keep a crawler's fetch", "WITH u AS"
                        " (SELECT id FROM sitemap_urls WHERE site_id = $1"
                        " AND url = $3 FOR KEY SHARE),"
                        " w AS (INSERT INTO sitemap_crawls(url_id, crawler,"
                        " fetched, status) SELECT id, $2, $4, $5 FROM u"
                        " ON CONFLICT (url_id, crawler) DO UPDATE SET"
                        " fetched = excluded.fetched,"
                        " status = excluded.status"
                        " WHERE excluded.fetched >= sitemap_crawls.fetched)"
                        " SELECT count(*) FROM u", &ps)))
        return -1;
    listed = i64(res, 0, 0) > 0;
    PQclear(res);
    return listed ? 0 : unlisted(s, site_id, c);
}

typedef struct {
    sm_coverage *out;
    apr_int64_t now;
    sm_coverage_which which;
    sm_coverage_fn *fn;
    void *baton;
} walk;

static apr_status_t count_row(void *baton, const PGresult *res, int row)
{
    walk *w = baton;

    sm_coverage_count(w->out, i64(res, row, 1),
                      PQgetisnull(res, row, 2) ? 0 : i64(res, row, 2),
                      w->now);
    return APR_SUCCESS;
}

static apr_status_t url_row(void *baton, const PGresult *res, int row)
{
    walk *w = baton;
    apr_int64_t lastmod = 0, fetched;
    int status, kind;

    if (w->which == SM_COVERAGE_UNLISTED) {
        fetched = i64(res, row, 1);
        status = (int)i64(res, row, 2);
    }
    else {
        lastmod = i64(res, row, 1);
        fetched = PQgetisnull(res, row, 2) ? 0 : i64(res, row, 2);
        status = PQgetisnull(res, row, 3) ? 0 : (int)i64(res, row, 3);
        kind = sm_coverage_kind(lastmod, fetched);
        if ((w->which == SM_COVERAGE_NEVER && kind != 1)
            || (w->which == SM_COVERAGE_STALE && kind != 2))
            return APR_SUCCESS;
    }
    return w->fn(w->baton, PQgetvalue(res, row, 0),
                 apr_time_from_sec(lastmod), apr_time_from_sec(fetched),
                 status);
}

/* The site's URLs in sitemap order (its id range) with the crawler's
 * fetch of each. */
#define LISTED_SQL \
    SM_PG_CURSOR "SELECT u.url, u.lastmod, c.fetched, c.status" \
    " FROM sitemap_urls u LEFT JOIN sitemap_crawls c" \
    " ON c.url_id = u.id AND c.crawler = $3" \
    " WHERE u.id >= $1 AND u.id < $2 ORDER BY u.id"

apr_status_t sm_pg_coverage(sm_store *st, const char *base,
                            const char *crawler, apr_time_t now,
                            sm_coverage *out)
{
    pg_store *s = (pg_store *)st;
    walk w = { out, apr_time_sec(now), SM_COVERAGE_LISTED, NULL, NULL };
    params ps = { .n = 0 };
    apr_int64_t lo, hi;
    apr_status_t rv;
    PGresult *res;
    int has;

    if (sm_pg_ready(s, 7, &has) != 0)
        return APR_EGENERAL;
    if (!has)
        return APR_ENOTIMPL;
    if (sm_pg_id_range(s, "cannot read the sites", base, &lo, &hi) != 0)
        return APR_EGENERAL;
    p_i64(&ps, lo);
    p_i64(&ps, hi);
    p_str(&ps, crawler);
    if (lo < hi && (rv = sm_pg_stream(s, "cannot read the coverage",
                                      LISTED_SQL, &ps, count_row, &w))
                   != APR_SUCCESS)
        return rv;
    ps.n = 0;
    p_str(&ps, base);
    p_str(&ps, crawler);
    if (!(res = sm_pg_q(s, "cannot read the coverage", "SELECT"
                        " c.unlisted_hits, c.sitemap_fetches,"
                        " c.last_sitemap_fetch FROM sitemap_sites s"
                        " JOIN sitemap_crawlers c ON c.site_id = s.id"
                        " WHERE s.base = $1 AND c.crawler = $2", &ps)))
        return APR_EGENERAL;
    if (PQntuples(res) == 1) {
        out->unlisted_hits = i64(res, 0, 0);
        out->sitemap_fetches = i64(res, 0, 1);
        out->last_sitemap_fetch = apr_time_from_sec(i64(res, 0, 2));
    }
    PQclear(res);
    return APR_SUCCESS;
}

apr_status_t sm_pg_coverage_urls(sm_store *st, const char *base,
                                 const char *crawler,
                                 sm_coverage_which which,
                                 sm_coverage_fn *fn, void *baton)
{
    pg_store *s = (pg_store *)st;
    walk w = { NULL, 0, which, fn, baton };
    params ps = { .n = 0 };
    apr_int64_t lo, hi;
    int has;

    if (sm_pg_ready(s, 7, &has) != 0)
        return APR_EGENERAL;
    if (!has)
        return APR_ENOTIMPL;
    if (which == SM_COVERAGE_UNLISTED) {
        p_str(&ps, base);
        p_str(&ps, crawler);
        return sm_pg_stream(s, "cannot read the coverage", SM_PG_CURSOR
                            "SELECT c.url, c.fetched, c.status"
                            " FROM sitemap_sites s"
                            " JOIN sitemap_crawl_unlisted c"
                            " ON c.site_id = s.id WHERE s.base = $1"
                            " AND c.crawler = $2 ORDER BY c.seq DESC",
                            &ps, url_row, &w);
    }
    if (sm_pg_id_range(s, "cannot read the sites", base, &lo, &hi) != 0)
        return APR_EGENERAL;
    if (lo == hi)
        return APR_SUCCESS;
    p_i64(&ps, lo);
    p_i64(&ps, hi);
    p_str(&ps, crawler);
    return sm_pg_stream(s, "cannot read the coverage", LISTED_SQL, &ps,
                        url_row, &w);
}
