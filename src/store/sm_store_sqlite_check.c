/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_check.c: sitemapctl check of a SQLite store: SQLite's
 * integrity check, that it is ours, and that the writers' summaries agree
 * with the URLs. */
#include "store/sm_store_sqlite.h"
#include "head/sm_alternates.h"

#include <apr_strings.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

/* ---- check ---------------------------------------------------------------- */

static void problem(apr_array_header_t *problems, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void problem(apr_array_header_t *problems, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    APR_ARRAY_PUSH(problems, const char *) =
        apr_pvsprintf(problems->pool, fmt, ap);
    va_end(ap);
}

/* Consistency of the summaries the writers keep: each query counts bad
 * rows. */
static const struct {
    const char *sql, *what;
} consistency[] = {
    { "SELECT count(*) FROM (SELECT site_id, page, count(*) AS n,"
      " sum(xml_len) AS b FROM urls GROUP BY site_id, page) u"
      " LEFT JOIN pages p ON p.site_id = u.site_id AND p.page = u.page"
      " WHERE p.url_count IS NOT u.n OR p.xml_bytes IS NOT u.b",
      "page summaries disagree with their URLs" },
    { "SELECT count(*) FROM pages p LEFT JOIN"
      " (SELECT DISTINCT site_id, page FROM urls) u"
      " ON u.site_id = p.site_id AND u.page = p.page"
      " WHERE p.url_count <> 0 AND u.page IS NULL",
      "page summaries count URLs that are not there" },
    { "WITH r AS (SELECT site_id, page, first_id AS lo, coalesce(lead(first_id)"
      "  OVER (PARTITION BY site_id ORDER BY page),"
      "  (SELECT next_id FROM sites WHERE id = pages.site_id)) AS hi"
      "  FROM pages)"
      " SELECT count(*) FROM urls u LEFT JOIN r"
      " ON r.site_id = u.site_id AND r.page = u.page"
      " WHERE r.lo IS NULL OR u.id < r.lo OR u.id >= r.hi"
      " OR (u.id >> " SITE_ID_SHIFT_SQL ") <> u.site_id",
      "URLs are outside their page's range of ids" },
    { "SELECT count(*) FROM (SELECT first_id, lag(first_id) OVER"
      " (PARTITION BY site_id ORDER BY page) AS prev FROM pages)"
      " WHERE first_id < prev",
      "pages' first ids go backwards" },
    /* (0: a site added by a schema-2 writer, given its next id on use) */
    { "SELECT count(*) FROM sites s WHERE (s.next_id <> 0 AND s.next_id <= "
      "s.id << " SITE_ID_SHIFT_SQL ") OR s.next_id <= (SELECT max(id) FROM urls"
      " WHERE id >= s.id << " SITE_ID_SHIFT_SQL
      " AND id < (s.id + 1) << " SITE_ID_SHIFT_SQL ")",
      "sites' next ids are not past their URLs" },
    { "SELECT count(*) FROM sites s WHERE s.url_count <>"
      " (SELECT count(*) FROM urls u WHERE u.site_id = s.id)",
      "sites' URL counts disagree with their URLs" },
    { "SELECT count(*) FROM urls WHERE site_id NOT IN (SELECT id FROM sites)",
      "URLs belong to no site" },
    { "SELECT count(*) FROM urls u JOIN sites s ON s.id = u.site_id"
      " WHERE u.page < 1 OR u.page > s.last_page",
      "URLs are on pages outside their site's range" },
    { "SELECT count(*) = 0 FROM meta WHERE key = 'store_id'"
      " AND length(value) > 0",
      "the store id is missing" },
};

/* Every stored set of alternates read back as the documents read it:
 * rows holding an entry no writer could have stored (the documents skip
 * those entries) are a problem. */
static void check_alternates(sqlite_store *s, apr_pool_t *p,
                             apr_array_header_t *problems)
{
    sqlite3_stmt *q;
    apr_pool_t *scratch;
    apr_int64_t bad = 0;
    const char *first = NULL;
    int rc;

    if (sqlite3_prepare_v2(s->db, "SELECT url, alternates FROM urls"
                           " WHERE alternates IS NOT NULL", -1, &q, NULL)
        != SQLITE_OK) {
        problem(problems, "cannot check the URLs' alternates: %s",
                sqlite3_errmsg(s->db));
        return;
    }
    apr_pool_create(&scratch, p);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *alts = (const char *)sqlite3_column_text(q, 1);
        if (!*alts || !sm_alternates_valid(scratch, alts)) {
            if (bad++ == 0)
                first = apr_pstrdup(p, (const char *)
                                       sqlite3_column_text(q, 0));
        }
        apr_pool_clear(scratch);
    }
    if (rc != SQLITE_DONE)
        problem(problems, "cannot check the URLs' alternates: %s",
                sqlite3_errmsg(s->db));
    else if (bad)
        problem(problems, "URLs have hreflang alternates no writer could "
                "have stored (%" APR_INT64_T_FMT " rows, the first %s)", bad,
                first);
    sqlite3_finalize(q);
    apr_pool_destroy(scratch);
}

/* Open the file at path read-only with the store's defences; APR_ENOENT
 * when there is none, another error (errmsg) when it cannot be opened. */
static apr_status_t open_to_check(sqlite_store *s, const char *path,
                                  int busy_timeout_ms, char *errmsg,
                                  apr_size_t errlen)
{
    struct stat sb;
    int rc;

    if (stat(path, &sb) != 0) {
        apr_status_t rv = APR_FROM_OS_ERROR(errno);
        if (errmsg)
            apr_snprintf(errmsg, errlen, "cannot open: %s",
                         strerror(errno));
        return APR_STATUS_IS_ENOENT(rv) ? APR_ENOENT : rv;
    }
    if (!S_ISREG(sb.st_mode)) {
        if (errmsg)
            apr_snprintf(errmsg, errlen, "not a regular file");
        return APR_EGENERAL;
    }
    rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READONLY
                         | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        sm_sqlite_set_error(&s->base, "cannot open", s->db);
        if (errmsg)
            apr_cpystrn(errmsg, s->base.errmsg, errlen);
        sm_sqlite_close(&s->base);
        return APR_EGENERAL;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, busy_timeout_ms);
    if (sm_sqlite_harden(s) != SQLITE_OK) {
        if (errmsg)
            apr_cpystrn(errmsg, s->base.errmsg, errlen);
        sm_sqlite_close(&s->base);
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

/* SQLite's own check: how many problems it found, -1 when it could not
 * run (a problem pushed too). */
static int integrity(sqlite_store *s, apr_array_header_t *problems)
{
    sqlite3_stmt *q;
    int rc, shown = 0;

    if ((rc = sqlite3_prepare_v2(s->db, "PRAGMA integrity_check(20)", -1, &q,
                                 NULL)) == SQLITE_OK) {
        while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
            const char *msg = (const char *)sqlite3_column_text(q, 0);
            if (msg && strcmp(msg, "ok") != 0) {
                problem(problems, "integrity_check: %s", msg);
                shown++;
            }
        }
        sqlite3_finalize(q);
    }
    if (rc != SQLITE_DONE) {
        problem(problems, "integrity_check could not run: %s",
                sqlite3_errmsg(s->db));
        return -1;
    }
    return shown;
}

/* Not a store this code can read (another application's file, a newer
 * schema, someone else's trigger or view): 1, and why in errmsg; 0 when it
 * is one. */
static int foreign(sqlite_store *s, sqlite3_int64 app_id,
                   const sm_store_about *about, char *errmsg,
                   apr_size_t errlen)
{
    if (app_id != SM_APPLICATION_ID || about->schema_version
                                          > SM_SCHEMA_VERSION) {
        /* An error, not a fault of a store (sitemapctl: exit status 3). */
        if (errmsg && app_id != SM_APPLICATION_ID)
            apr_snprintf(errmsg, errlen, "not a mod_sitemap store "
                         "(application_id %08x, expected %08x)",
                         (unsigned)app_id, SM_APPLICATION_ID);
        else if (errmsg)
            apr_snprintf(errmsg, errlen, "schema version %d is newer than "
                         "this sitemapctl knows (%d)", about->schema_version,
                         SM_SCHEMA_VERSION);
        return 1;
    }
    if (sm_sqlite_check_objects(s, about->schema_version) != SQLITE_OK) {
        /* Someone else's trigger or view: refused, not read further. */
        if (errmsg)
            apr_cpystrn(errmsg, s->base.errmsg, errlen);
        return 1;
    }
    return 0;
}

/* That the summaries agree with the URLs, and every stored alternate is
 * well formed. */
static void consistent(sqlite_store *s, apr_pool_t *p,
                       apr_array_header_t *problems)
{
    apr_size_t i;

    for (i = 0; i < sizeof(consistency) / sizeof(consistency[0]); i++) {
        sqlite3_int64 bad = 0;
        if (sm_sqlite_int_pragma(s, consistency[i].sql, &bad) != SQLITE_OK) {
            problem(problems, "cannot check whether %s: %s",
                    consistency[i].what, sqlite3_errmsg(s->db));
            continue;
        }
        if (bad > 0)
            problem(problems, "%s (%" APR_INT64_T_FMT " rows)",
                    consistency[i].what, (apr_int64_t)bad);
    }
    check_alternates(s, p, problems);
}

/* Ends the snapshot and closes the file: the check's one way out. */
static apr_status_t done(sqlite_store *s, apr_status_t rv)
{
    sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
    sm_sqlite_close(&s->base);
    return rv;
}

apr_status_t sm_store_check_sqlite(apr_pool_t *p, const char *path,
                                   int busy_timeout_ms,
                                   apr_array_header_t *problems,
                                   sm_store_about *about,
                                   char *errmsg, apr_size_t errlen)
{
    sqlite_store *s = apr_pcalloc(p, sizeof(*s));
    sm_store_about local;
    sqlite3_int64 app_id = 0;
    apr_status_t rv;
    int rc, shown;

    if (!about)
        about = &local;
    memset(about, 0, sizeof(*about));
    s->base.ops = &sm_sqlite_ops;
    s->base.path = apr_pstrdup(p, path);
    s->base.pool = p;
    if ((rv = open_to_check(s, path, busy_timeout_ms, errmsg, errlen))
        != APR_SUCCESS)
        return rv;
    /* One snapshot for every check. */
    if ((rc = sm_sqlite_exec(s, "cannot start reading", "BEGIN")) != SQLITE_OK
        || (rc = sm_sqlite_int_pragma(s, "PRAGMA application_id", &app_id))
           != SQLITE_OK) {
        if ((rc & 0xff) == SQLITE_NOTADB) {
            /* Not a store at all: like a missing file, an error. */
            if (errmsg)
                apr_snprintf(errmsg, errlen, "not an SQLite database");
            return done(s, APR_EGENERAL);
        }
        if ((rc & 0xff) == SQLITE_BUSY)
            problem(problems, "the store stayed locked for %d ms",
                    busy_timeout_ms);
        else
            problem(problems, "%s", s->base.errmsg);
        return done(s, APR_SUCCESS);
    }
    if (sm_sqlite_read_about(s, p, about, 0) != SQLITE_OK) {
        problem(problems, "%s", s->base.errmsg);
        return done(s, APR_SUCCESS);
    }
    if ((shown = integrity(s, problems)) < 0)
        return done(s, APR_SUCCESS);
    if (foreign(s, app_id, about, errmsg, errlen))
        return done(s, APR_EGENERAL);
    if (about->schema_version != SM_SCHEMA_VERSION) {
        problem(problems, "schema version %d: this sitemapctl knows %d",
                about->schema_version, SM_SCHEMA_VERSION);
        return done(s, APR_SUCCESS);
    }
    if (shown)
        return done(s, APR_SUCCESS); /* damaged: the rest means little */
    if (sm_sqlite_read_about(s, p, about, 1) != SQLITE_OK) {
        problem(problems, "%s", s->base.errmsg);
        return done(s, APR_SUCCESS);
    }
    consistent(s, p, problems);
    return done(s, APR_SUCCESS);
}

