/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_pg_why.c: the verdicts of URLs left out or removed (see
 * sm_store_sqlite_why.c), on PostgreSQL: written in the writer's
 * transaction, whose site rows are locked (tx_lock_sites), so one writer
 * of a farm at a time hands out a site's seq. */
#include "store/sm_store_pg.h"

#include <string.h>

/* May the role write the verdicts?  Asked once per store: a
 * least-privileged role whose grants predate the table (see the README's
 * grants) keeps recording URLs, without verdicts, and the log says so
 * once. */
static int verdicts_allowed(pg_store *s)
{
    PGresult *res;

    if (s->verdicts_ok)
        return s->verdicts_ok > 0;
    if (!(res = sm_pg_q(s, "cannot read the role's privileges", "SELECT"
                        " has_table_privilege('sitemap_verdicts',"
                        " 'SELECT, INSERT, UPDATE, DELETE')", NULL)))
        return -1;
    s->verdicts_ok = PQntuples(res) == 1
                     && strcmp(PQgetvalue(res, 0, 0), "t") == 0 ? 1 : -1;
    PQclear(res);
    if (s->verdicts_ok < 0)
        sm_log(s->base.log, SM_LOG_WARN, 0, "store %s: this role may not "
               "write sitemap_verdicts: no verdicts are kept for sitemapctl "
               "why (see docs/operations.md, \"A farm of servers: "
               "PostgreSQL\", for the grants)",
               s->base.path);
    return s->verdicts_ok > 0;
}

int sm_pg_verdict_put(pg_store *s, apr_int64_t site_id, const sm_change *c,
                      int removed)
{
    params ps = { .n = 0 };
    int allowed = verdicts_allowed(s);

    if (allowed <= 0)
        return allowed;

    p_i64(&ps, site_id);
    p_str(&ps, c->url);
    p_str(&ps, removed ? "removed" : "left out");
    p_str(&ps, c->why ? c->why : "");
    p_str(&ps, c->detail);
    p_i64(&ps, c->status);
    p_i64(&ps, apr_time_sec(c->seen));
    if (sm_pg_run(s, "cannot keep a verdict", "INSERT INTO sitemap_verdicts"
                  "(site_id, url, seq, verdict, reason, detail, status, at)"
                  " VALUES ($1, $2, (SELECT coalesce(max(seq), 0) + 1 FROM"
                  " sitemap_verdicts WHERE site_id = $1), $3, $4, $5, $6, $7)"
                  " ON CONFLICT (site_id, url) DO UPDATE SET"
                  " seq = excluded.seq, verdict = excluded.verdict,"
                  " reason = excluded.reason, detail = excluded.detail,"
                  " status = excluded.status, at = excluded.at"
                  " WHERE excluded.at >= sitemap_verdicts.at", &ps, NULL) != 0)
        return -1;
    ps.n = 1;
    p_i64(&ps, SM_VERDICTS_MAX);
    return sm_pg_run(s, "cannot drop old verdicts", "DELETE FROM"
                     " sitemap_verdicts WHERE site_id = $1 AND seq <="
                     " (SELECT max(seq) FROM sitemap_verdicts"
                     " WHERE site_id = $1) - $2", &ps, NULL);
}

static const char *text(apr_pool_t *p, const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? NULL
           : apr_pstrdup(p, PQgetvalue(res, row, col));
}

static void read_verdict(apr_pool_t *p, const PGresult *res, int row,
                         int col, sm_verdict_row *v)
{
    v->verdict = text(p, res, row, col);
    v->reason = text(p, res, row, col + 1);
    v->detail = text(p, res, row, col + 2);
    v->status = (int)i64(res, row, col + 3);
    v->at = apr_time_from_sec(i64(res, row, col + 4));
}

apr_status_t sm_pg_why(sm_store *st, apr_pool_t *p, const char *base,
                       const char *url, sm_why_info *out)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    PGresult *res;
    int has;

    if (sm_pg_ready(s, 5, &has) != 0)
        return APR_EGENERAL;
    p_str(&ps, base);
    p_str(&ps, url);
    if (!(res = sm_pg_q(s, "cannot read a URL", "SELECT u.lastmod,"
                        " u.last_seen FROM sitemap_sites s JOIN sitemap_urls u"
                        " ON u.site_id = s.id WHERE s.base = $1"
                        " AND u.url = $2", &ps)))
        return APR_EGENERAL;
    if (PQntuples(res) == 1) {
        out->listed = 1;
        out->lastmod = apr_time_from_sec(i64(res, 0, 0));
        out->last_seen = apr_time_from_sec(i64(res, 0, 1));
    }
    PQclear(res);
    if (!has)
        return APR_SUCCESS;
    if (!(res = sm_pg_q(s, "cannot read a verdict", "SELECT v.verdict,"
                        " v.reason, v.detail, v.status, v.at FROM"
                        " sitemap_sites s JOIN sitemap_verdicts v"
                        " ON v.site_id = s.id WHERE s.base = $1"
                        " AND v.url = $2", &ps)))
        return APR_EGENERAL;
    if (PQntuples(res) == 1) {
        out->has_verdict = 1;
        out->verdict.url = apr_pstrdup(p, url);
        read_verdict(p, res, 0, 0, &out->verdict);
    }
    PQclear(res);
    return APR_SUCCESS;
}

apr_status_t sm_pg_left_out(sm_store *st, apr_pool_t *p, const char *base,
                            int n, apr_array_header_t **out)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    PGresult *res;
    int i, has;

    if (sm_pg_ready(s, 5, &has) != 0)
        return APR_EGENERAL;
    if (!has)
        return APR_SUCCESS;
    p_str(&ps, base);
    p_i64(&ps, n);
    p_i64(&ps, SM_VERDICTS_SCAN);
    if (!(res = sm_pg_q(s, "cannot read verdicts", "SELECT v.url, v.verdict,"
                        " v.reason, v.detail, v.status, v.at FROM"
                        " (SELECT w.* FROM sitemap_sites s"
                        " JOIN sitemap_verdicts w ON w.site_id = s.id"
                        " WHERE s.base = $1 ORDER BY w.seq DESC LIMIT $3) v"
                        " WHERE NOT EXISTS (SELECT 1 FROM sitemap_urls u"
                        " WHERE u.site_id = v.site_id AND u.url = v.url)"
                        " ORDER BY v.seq DESC LIMIT $2", &ps)))
        return APR_EGENERAL;
    for (i = 0; i < PQntuples(res); i++) {
        sm_verdict_row *v = apr_array_push(*out);
        v->url = text(p, res, i, 0);
        read_verdict(p, res, i, 1, v);
    }
    PQclear(res);
    return APR_SUCCESS;
}
