/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_robots.c: the site's robots.txt as last handed over
 * (SM_CHANGE_ROBOTS), and the sweep of the URLs its rules disallow (see
 * sm_store.h).  Rare work (a changed robots.txt, the writers' look every
 * few seconds, a sweep's chunks): its statements are prepared per call. */
#include "store/sm_store_sqlite.h"

#include <apr_strings.h>
#include <string.h>

/* q prepared from sql, or NULL (errmsg set). */
static sqlite3_stmt *prepare(sqlite_store *s, const char *sql)
{
    sqlite3_stmt *q = NULL;

    if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK) {
        sm_sqlite_set_error(&s->base, "cannot prepare a robots.txt "
                            "statement", s->db);
        sqlite3_finalize(q);
        return NULL;
    }
    return q;
}

/* A file whose schema predates the table (sitemapctl's read-only probe of
 * an older file) has no rules. */
static int has_table(sqlite_store *s)
{
    sqlite3_int64 n = 0;

    return sm_sqlite_int_pragma(s, "SELECT count(*) FROM sqlite_master"
                                " WHERE type = 'table' AND name = 'robots'",
                                &n) == SQLITE_OK && n > 0;
}

/* q's last step was rc: finalized; SQLITE_OK or the error (errmsg). */
static int end(sqlite_store *s, sqlite3_stmt *q, int rc, const char *what)
{
    if (rc != SQLITE_DONE)
        sm_sqlite_set_error(&s->base, what, s->db);
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int run(sqlite_store *s, sqlite3_stmt *q, const char *what)
{
    return end(s, q, sqlite3_step(q), what);
}

int sm_sqlite_robots_put(sqlite_store *s, const sm_change *c)
{
    const char *body = c->detail ? c->detail : "";
    sqlite3_stmt *q;

    /* The body is stored again only when it differs (the hash): the
     * sweep then starts over, from the first URL. */
    if (!(q = prepare(s, "INSERT INTO robots(site_id, body, hash, seen,"
                      " sweep) SELECT id, ?2, ?3, ?4, '' FROM sites"
                      " WHERE base = ?1 ON CONFLICT(site_id) DO UPDATE"
                      " SET body = excluded.body, hash = excluded.hash,"
                      " seen = excluded.seen, sweep = ''"
                      " WHERE robots.hash <> excluded.hash")))
        return SQLITE_ERROR;
    sm_sqlite_text(q, 1, c->site->base);
    sqlite3_bind_text(q, 2, body, (int)strnlen(body, SM_ROBOTS_BODY_MAX),
                      SQLITE_TRANSIENT);
    sqlite3_bind_int64(q, 3, sm_robots_hash(body));
    sqlite3_bind_int64(q, 4, apr_time_sec(c->seen));
    return run(s, q, "cannot keep the site's robots.txt");
}

static void read_row(apr_pool_t *p, sqlite3_stmt *q, sm_robots_row *r)
{
    const unsigned char *sweep = sqlite3_column_text(q, 3);

    r->base = apr_pstrdup(p, (const char *)sqlite3_column_text(q, 0));
    r->hash = sqlite3_column_int64(q, 1);
    r->seen = apr_time_from_sec(sqlite3_column_int64(q, 2));
    r->sweep = sweep ? apr_pstrdup(p, (const char *)sweep) : NULL;
}

apr_status_t sm_sqlite_robots_list(sm_store *st, apr_pool_t *p,
                                   apr_array_header_t **out)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q;
    int rc;

    if (!has_table(s))
        return APR_SUCCESS;
    if (!(q = prepare(s, "SELECT s.base, r.hash, r.seen, r.sweep FROM"
                      " robots r JOIN sites s ON s.id = r.site_id")))
        return APR_EGENERAL;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        read_row(p, q, apr_array_push(*out));
    return end(s, q, rc, "cannot read the robots.txt rules") == SQLITE_OK
           ? APR_SUCCESS : APR_EGENERAL;
}

apr_status_t sm_sqlite_robots_body(sm_store *st, apr_pool_t *p,
                                   const char *base, sm_robots_row *out)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q;
    int rc;

    if (!has_table(s))
        return APR_SUCCESS;
    if (!(q = prepare(s, "SELECT s.base, r.hash, r.seen, r.sweep, r.body"
                      " FROM robots r JOIN sites s ON s.id = r.site_id"
                      " WHERE s.base = ?1")))
        return APR_EGENERAL;
    sm_sqlite_text(q, 1, base);
    if ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        read_row(p, q, out);
        out->body = apr_pstrmemdup(p, (const char *)sqlite3_column_text(q, 4),
                                   (apr_size_t)sqlite3_column_bytes(q, 4));
        rc = sqlite3_step(q);
    }
    return end(s, q, rc, "cannot read the site's robots.txt") == SQLITE_OK
           ? APR_SUCCESS : APR_EGENERAL;
}

apr_status_t sm_sqlite_robots_urls(sm_store *st, apr_pool_t *p,
                                   const char *base, const char *after,
                                   int n, apr_array_header_t **out)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q;
    int rc;

    /* urls_by_url: one index range, n rows. */
    if (!(q = prepare(s, "SELECT u.url FROM sites s JOIN urls u"
                      " ON u.site_id = s.id WHERE s.base = ?1"
                      " AND u.url > ?2 ORDER BY u.url LIMIT ?3")))
        return APR_EGENERAL;
    sm_sqlite_text(q, 1, base);
    sm_sqlite_text(q, 2, after);
    sqlite3_bind_int(q, 3, n);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        APR_ARRAY_PUSH(*out, const char *) =
            apr_pstrdup(p, (const char *)sqlite3_column_text(q, 0));
    return end(s, q, rc, "cannot read the URLs to sweep") == SQLITE_OK
           ? APR_SUCCESS : APR_EGENERAL;
}

apr_status_t sm_sqlite_robots_swept(sm_store *st, const char *base,
                                    apr_int64_t hash, const char *upto)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q;

    if (!(q = prepare(s, "UPDATE robots SET sweep = ?3 WHERE hash = ?2"
                      " AND site_id = (SELECT id FROM sites"
                      " WHERE base = ?1)")))
        return APR_EGENERAL;
    sm_sqlite_text(q, 1, base);
    sqlite3_bind_int64(q, 2, hash);
    sm_sqlite_text(q, 3, upto);
    return run(s, q, "cannot note the sweep's progress") == SQLITE_OK
           ? APR_SUCCESS : APR_EGENERAL;
}
