/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_pg_robots.c: the site's robots.txt as last handed over, and
 * the sweep of the URLs its rules disallow (see sm_store_sqlite_robots.c),
 * on PostgreSQL.  The body is kept in the writer's transaction, whose
 * site rows are locked (tx_lock_sites); the rest runs between them. */
#include "store/sm_store_pg.h"

#include <string.h>

/* A role whose grants predate sitemap_robots keeps recording URLs,
 * without the stored rules. */
static int robots_allowed(pg_store *s)
{
    return sm_pg_table_allowed(s, &s->robots_ok, "sitemap_robots",
                               "SELECT, INSERT, UPDATE",
                               "a robots.txt an application makes is "
                               "followed only by the process that served "
                               "it");
}

/* Connected, with the table usable: 1; 0 not usable; -1 error. */
static int ready(pg_store *s)
{
    if (sm_pg_connected(s) != 0)
        return -1;
    return robots_allowed(s);
}

int sm_pg_robots_put(pg_store *s, apr_int64_t site_id, const sm_change *c)
{
    const char *body = c->detail ? c->detail : "";
    params ps = { .n = 0 };
    int allowed = robots_allowed(s);

    if (allowed <= 0)
        return allowed;
    p_i64(&ps, site_id);
    p_str(&ps, body);
    p_i64(&ps, sm_robots_hash(body));
    p_i64(&ps, apr_time_sec(c->seen));
    return sm_pg_run(s, "cannot keep the site's robots.txt", "INSERT INTO"
                     " sitemap_robots(site_id, body, hash, seen, sweep)"
                     " VALUES ($1, $2, $3, $4, '') ON CONFLICT (site_id)"
                     " DO UPDATE SET body = excluded.body,"
                     " hash = excluded.hash, seen = excluded.seen,"
                     " sweep = '' WHERE sitemap_robots.hash <> excluded.hash",
                     &ps, NULL);
}

/* sm_pg_q outside the caller's transaction, once more on a new connection
 * when the server closed this one (it restarted, or a failover ended our
 * session), as sm_pg_start does: the writer reads the rules before each
 * batch, and a closed connection found here is not a fault to log. */
static PGresult *read_rules(pg_store *s, const char *what, const char *sql,
                            params *ps)
{
    int outside = !s->conn || PQtransactionStatus(s->conn) == PQTRANS_IDLE;
    PGresult *res = sm_pg_q(s, what, sql, ps);

    if (res || !outside || s->gave_up
        || (s->conn && PQstatus(s->conn) == CONNECTION_OK)
        || sm_pg_connection(s) != 0)
        return res;
    return sm_pg_q(s, what, sql, ps);
}

static const char *text(apr_pool_t *p, const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? NULL
           : apr_pstrdup(p, PQgetvalue(res, row, col));
}

static void read_row(apr_pool_t *p, const PGresult *res, int i,
                     sm_robots_row *r)
{
    r->base = text(p, res, i, 0);
    r->hash = i64(res, i, 1);
    r->seen = apr_time_from_sec(i64(res, i, 2));
    r->sweep = text(p, res, i, 3);
}

apr_status_t sm_pg_robots_list(sm_store *st, apr_pool_t *p,
                               apr_array_header_t **out)
{
    pg_store *s = (pg_store *)st;
    PGresult *res;
    int i, ok = ready(s);

    if (ok <= 0)
        return ok < 0 ? APR_EGENERAL : APR_SUCCESS;
    if (!(res = read_rules(s, "cannot read the robots.txt rules", "SELECT"
                           " s.base, r.hash, r.seen, r.sweep FROM"
                           " sitemap_robots r JOIN sitemap_sites s"
                           " ON s.id = r.site_id", NULL)))
        return APR_EGENERAL;
    for (i = 0; i < PQntuples(res); i++)
        read_row(p, res, i, apr_array_push(*out));
    PQclear(res);
    return APR_SUCCESS;
}

apr_status_t sm_pg_robots_body(sm_store *st, apr_pool_t *p, const char *base,
                               sm_robots_row *out)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    PGresult *res;
    int ok = ready(s);

    if (ok <= 0)
        return ok < 0 ? APR_EGENERAL : APR_SUCCESS;
    p_str(&ps, base);
    if (!(res = read_rules(s, "cannot read the site's robots.txt", "SELECT"
                           " s.base, r.hash, r.seen, r.sweep, r.body FROM"
                           " sitemap_robots r JOIN sitemap_sites s"
                           " ON s.id = r.site_id WHERE s.base = $1", &ps)))
        return APR_EGENERAL;
    if (PQntuples(res) == 1) {
        read_row(p, res, 0, out);
        out->body = text(p, res, 0, 4);
    }
    PQclear(res);
    return APR_SUCCESS;
}

apr_status_t sm_pg_robots_urls(sm_store *st, apr_pool_t *p, const char *base,
                               const char *after, int n,
                               apr_array_header_t **out)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    PGresult *res;
    int i;

    if (sm_pg_connected(s) != 0)
        return APR_EGENERAL;
    p_str(&ps, base);
    p_str(&ps, after);
    p_i64(&ps, n);
    /* The cursor is compared in the order it was taken in (the
     * column's collation): UNIQUE(site_id, url)'s index gives one range
     * of n rows a chunk. */
    if (!(res = sm_pg_q(s, "cannot read the URLs to sweep", "SELECT u.url"
                        " FROM sitemap_sites s JOIN sitemap_urls u"
                        " ON u.site_id = s.id WHERE s.base = $1"
                        " AND u.url > $2 ORDER BY u.url LIMIT $3", &ps)))
        return APR_EGENERAL;
    for (i = 0; i < PQntuples(res); i++)
        APR_ARRAY_PUSH(*out, const char *) = text(p, res, i, 0);
    PQclear(res);
    return APR_SUCCESS;
}

apr_status_t sm_pg_robots_swept(sm_store *st, const char *base,
                                apr_int64_t hash, const char *upto)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    int ok = ready(s);

    if (ok <= 0)
        return ok < 0 ? APR_EGENERAL : APR_SUCCESS;
    p_str(&ps, base);
    p_i64(&ps, hash);
    p_str(&ps, upto);
    return sm_pg_run(s, "cannot note the sweep's progress", "UPDATE"
                     " sitemap_robots SET sweep = $3 WHERE hash = $2"
                     " AND site_id = (SELECT id FROM sitemap_sites"
                     " WHERE base = $1)", &ps, NULL) == 0
           ? APR_SUCCESS : APR_EGENERAL;
}
