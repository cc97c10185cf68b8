/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_crawl_days.c: crawl coverage per UTC day (see
 * sm_store_crawl_days_note): taken by the writer's upkeep once a day,
 * read by the status page's chart.  Statements prepared when used (once a
 * day, or per status page): not among the cached ones. */
#include "store/sm_store_sqlite.h"

#include <string.h>

#define SITE_RANGE(col) \
    " " col " >= (?1 << " SITE_ID_SHIFT_SQL ")" \
    " AND " col " < ((?1 + 1) << " SITE_ID_SHIFT_SQL ")"

/* The day taken: crawler '' marks it, with the listed URLs; then every
 * crawler of the site's fetches (?3: the 30 days' start), those that
 * fetched only URLs not listed or sitemaps with none. */
static const char *const take_sql[] = {
    "INSERT INTO crawl_days(site_id, crawler, day, listed, crawled)"
    " SELECT ?1, '', ?2, count(*), 0 FROM urls WHERE" SITE_RANGE("id"),
    "INSERT OR IGNORE INTO crawl_days(site_id, crawler, day, listed, crawled)"
    " SELECT ?1, c.crawler, ?2, (SELECT listed FROM crawl_days"
    "  WHERE site_id = ?1 AND crawler = '' AND day = ?2),"
    " sum(c.fetched > 0 AND c.fetched >= ?3) FROM crawls c"
    " WHERE" SITE_RANGE("c.url_id") " GROUP BY c.crawler",
    "INSERT OR IGNORE INTO crawl_days(site_id, crawler, day, listed, crawled)"
    " SELECT ?1, crawler, ?2, (SELECT listed FROM crawl_days"
    "  WHERE site_id = ?1 AND crawler = '' AND day = ?2), 0"
    " FROM crawlers WHERE site_id = ?1",
    ("DELETE FROM crawl_days WHERE day <= ?2 - "
     APR_STRINGIFY(SM_CRAWL_DAYS)),
};
#define N_TAKE (sizeof(take_sql) / sizeof(take_sql[0]))

/* sql with ?1 site, ?2 day, ?3 since (those it names); SQLITE_ROW when it
 * gave a row (*first: its first column), SQLITE_OK when none. */
static int one(sqlite_store *s, const char *sql, sqlite3_int64 site,
               apr_int64_t day, apr_int64_t since, sqlite3_int64 *first)
{
    sqlite3_stmt *q;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &q, NULL), n;

    if (rc != SQLITE_OK) {
        sm_sqlite_set_error(&s->base, "cannot take the crawl day", s->db);
        return rc;
    }
    n = sqlite3_bind_parameter_count(q);
    if (n >= 1)
        sqlite3_bind_int64(q, 1, site);
    if (n >= 2)
        sqlite3_bind_int64(q, 2, day);
    if (n >= 3)
        sqlite3_bind_int64(q, 3, since);
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW && first)
        *first = sqlite3_column_int64(q, 0);
    if (rc == SQLITE_DONE)
        rc = SQLITE_OK;
    else if (rc != SQLITE_ROW)
        sm_sqlite_set_error(&s->base, "cannot take the crawl day", s->db);
    sqlite3_finalize(q);
    return rc;
}

static int has_days(sqlite_store *s)
{
    sqlite3_int64 version = 0;

    return sm_sqlite_int_pragma(s, "PRAGMA user_version", &version)
           == SQLITE_OK && version >= SM_SQLITE_SCHEMA_CRAWL_DAYS;
}

apr_status_t sm_sqlite_crawl_days_note(sm_store *st, const char *base,
                                       apr_int64_t day, apr_int64_t now_s,
                                       int *taken)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q;
    sqlite3_int64 site = 0;
    int rc;
    size_t i;

    if (!has_days(s))
        return APR_ENOTIMPL;
    if (sm_sqlite_exec(s, "cannot take the crawl day", "BEGIN IMMEDIATE")
        != SQLITE_OK)
        return APR_EGENERAL;
    rc = sqlite3_prepare_v2(s->db, "SELECT id FROM sites WHERE base = ?1",
                            -1, &q, NULL);
    if (rc == SQLITE_OK) {
        sm_sqlite_text(q, 1, base);
        if ((rc = sqlite3_step(q)) == SQLITE_ROW)
            site = sqlite3_column_int64(q, 0);
        rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
        sqlite3_finalize(q);
    }
    if (rc != SQLITE_OK)
        sm_sqlite_set_error(&s->base, "cannot read the sites", s->db);
    else if (site)
        rc = one(s, "SELECT 1 FROM crawl_days WHERE site_id = ?1"
                 " AND crawler = '' AND day = ?2", site, day, 0, NULL);
    /* SQLITE_ROW: taken already. */
    for (i = 0; rc == SQLITE_OK && site && i < N_TAKE; i++)
        rc = one(s, take_sql[i], site, day, now_s - 30 * 86400, NULL);
    if (rc == SQLITE_OK && site)
        *taken = 1;
    if (rc != SQLITE_OK && rc != SQLITE_ROW) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return APR_EGENERAL;
    }
    if (sm_sqlite_exec(s, "cannot take the crawl day", "COMMIT")
        != SQLITE_OK) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        *taken = 0;
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

apr_status_t sm_sqlite_crawl_days(sm_store *st, apr_pool_t *p,
                                  const char *base, const char *crawler,
                                  apr_int64_t since, apr_array_header_t **out)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q;
    int rc;
    (void)p;

    if (!has_days(s))
        return APR_ENOTIMPL;
    rc = sqlite3_prepare_v2(s->db, "SELECT d.day, d.listed, d.crawled"
                            " FROM sites s JOIN crawl_days d"
                            " ON d.site_id = s.id WHERE s.base = ?1"
                            " AND d.crawler = ?2 AND d.day >= ?3"
                            " ORDER BY d.day", -1, &q, NULL);
    if (rc != SQLITE_OK) {
        sm_sqlite_set_error(&s->base, "cannot read the crawl days", s->db);
        return APR_EGENERAL;
    }
    sm_sqlite_text(q, 1, base);
    sm_sqlite_text(q, 2, crawler);
    sqlite3_bind_int64(q, 3, since);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        sm_crawl_day *d = apr_array_push(*out);
        d->day = sqlite3_column_int64(q, 0);
        d->listed = sqlite3_column_int64(q, 1);
        d->crawled = sqlite3_column_int64(q, 2);
    }
    if (rc != SQLITE_DONE)
        sm_sqlite_set_error(&s->base, "cannot read the crawl days", s->db);
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? APR_SUCCESS : APR_EGENERAL;
}
