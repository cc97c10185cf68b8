/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_stale.c: SitemapIndexNowStale (see
 * sm_store_indexnow_stale): listed URLs a crawler fetched before their
 * last change, a change more than a day old, put on IndexNow's pending
 * list once a change (crawls.stale_sent keeps the lastmod queued).  Run by
 * the writer's upkeep, hourly: statements prepared per call. */
#include "store/sm_store_sqlite.h"

#define IN_SITE(col) \
    " " col " >= (?1 << " SITE_ID_SHIFT_SQL ")" \
    " AND " col " < ((?1 + 1) << " SITE_ID_SHIFT_SQL ")"

/* ?1 site id, ?2 base, ?3 queued (microseconds), ?4 the day-old bound
 * (seconds), ?5 room on the list. */
static const char queue_sql[] =
    "INSERT INTO indexnow_pending(site, url, queued)"
    " SELECT ?2, u.url, ?3 FROM urls u WHERE" IN_SITE("u.id")
    " AND u.lastmod < ?4 AND EXISTS (SELECT 1 FROM crawls c"
    "  WHERE c.url_id = u.id AND c.fetched > 0 AND c.fetched < u.lastmod"
    "  AND c.stale_sent < u.lastmod)"
    " AND NOT EXISTS (SELECT 1 FROM indexnow_pending q"
    "  WHERE q.site = ?2 AND q.url = u.url)"
    " ORDER BY u.id LIMIT ?5";
/* The stale ones now pending, queued by this call or before: marked. */
static const char mark_sql[] =
    "UPDATE crawls SET stale_sent = (SELECT u.lastmod FROM urls u"
    "  WHERE u.id = crawls.url_id)"
    " WHERE" IN_SITE("url_id") " AND fetched > 0"
    " AND EXISTS (SELECT 1 FROM urls u JOIN indexnow_pending q"
    "  ON q.site = ?2 AND q.url = u.url WHERE u.id = crawls.url_id"
    "  AND u.lastmod > crawls.fetched AND u.lastmod > crawls.stale_sent"
    "  AND u.lastmod < ?4)";

static int step(sqlite_store *s, const char *sql, sqlite3_int64 site,
                const char *base, apr_int64_t queued, apr_int64_t before,
                apr_int64_t room, sqlite3_int64 *first)
{
    sqlite3_stmt *q;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &q, NULL), n;

    if (rc != SQLITE_OK) {
        sm_sqlite_set_error(&s->base, "cannot queue stale URLs", s->db);
        return rc;
    }
    n = sqlite3_bind_parameter_count(q);
    sqlite3_bind_int64(q, 1, site);
    if (n >= 2)
        sm_sqlite_text(q, 2, base);
    if (n >= 3)
        sqlite3_bind_int64(q, 3, queued);
    if (n >= 4)
        sqlite3_bind_int64(q, 4, before);
    if (n >= 5)
        sqlite3_bind_int64(q, 5, room);
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW && first)
        *first = sqlite3_column_int64(q, 0);
    if (rc == SQLITE_ROW || rc == SQLITE_DONE)
        rc = SQLITE_OK;
    else
        sm_sqlite_set_error(&s->base, "cannot queue stale URLs", s->db);
    sqlite3_finalize(q);
    return rc;
}

apr_status_t sm_sqlite_indexnow_stale(sm_store *st, const char *base,
                                      apr_time_t now, int *queued)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_int64 site = 0, pending = 0, version = 0;
    apr_int64_t before = apr_time_sec(now) - 86400;
    int rc;

    *queued = 0;
    if (sm_sqlite_int_pragma(s, "PRAGMA user_version", &version)
        != SQLITE_OK || version < SM_SQLITE_SCHEMA_CRAWL_DAYS)
        return APR_ENOTIMPL;
    if (sm_sqlite_exec(s, "cannot queue stale URLs", "BEGIN IMMEDIATE")
        != SQLITE_OK)
        return APR_EGENERAL;
    rc = step(s, "SELECT id FROM sites WHERE base = ?2 AND ?1 = ?1", 0,
              base, 0, 0, 0, &site);
    if (rc == SQLITE_OK && site)
        rc = step(s, "SELECT count(*) FROM indexnow_pending"
                  " WHERE site = ?2 AND ?1 = ?1", site, base, 0, 0, 0,
                  &pending);
    if (rc == SQLITE_OK && site && pending < SM_INDEXNOW_BACKLOG_MAX) {
        rc = step(s, queue_sql, site, base, now, before,
                  SM_INDEXNOW_BACKLOG_MAX - pending, NULL);
        if (rc == SQLITE_OK)
            *queued = sqlite3_changes(s->db);
        if (rc == SQLITE_OK)
            rc = step(s, mark_sql, site, base, 0, before, 0, NULL);
    }
    if (rc != SQLITE_OK
        || sm_sqlite_exec(s, "cannot queue stale URLs", "COMMIT")
           != SQLITE_OK) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        *queued = 0;
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}
