/* sm_store_sqlite.c: the store in one SQLite file (WAL mode).
 *
 * Page summaries are kept by triggers, so every writer (the module,
 * sitemapctl, a later migration) keeps them right without repeating the
 * bookkeeping.  One connection is used by one thread at a time. */
#include "sm_store.h"

#include <apr_strings.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>

/* "SMAP": marks the file as ours (PRAGMA application_id). */
#define SM_APPLICATION_ID 0x534D4150

/* Schema steps: entry i upgrades user_version i to i + 1. */
static const char *const schema_steps[SM_SCHEMA_VERSION] = {
    /* 0 -> 1 */
    "CREATE TABLE meta("
    "  key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO meta(key, value) VALUES"
    "  ('store_id', lower(hex(randomblob(8)))),"
    "  ('created', CAST(strftime('%s','now') AS INTEGER));"
    "CREATE TABLE sites("
    "  id INTEGER PRIMARY KEY,"
    "  base TEXT NOT NULL UNIQUE,"
    "  page_size INTEGER NOT NULL DEFAULT 50000,"
    "  last_page INTEGER NOT NULL DEFAULT 1,"
    "  url_count INTEGER NOT NULL DEFAULT 0,"
    "  settings TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE urls("
    "  id INTEGER PRIMARY KEY,"
    "  site_id INTEGER NOT NULL,"
    "  url TEXT NOT NULL,"
    "  page INTEGER NOT NULL,"
    "  lastmod INTEGER NOT NULL,"
    "  etag TEXT,"
    "  first_seen INTEGER NOT NULL,"
    "  last_seen INTEGER NOT NULL,"
    "  xml_len INTEGER NOT NULL,"
    "  UNIQUE(site_id, url));"
    "CREATE INDEX urls_by_page ON urls(site_id, page);"
    "CREATE INDEX urls_by_seen ON urls(site_id, last_seen);"
    "CREATE TABLE pages("
    "  site_id INTEGER NOT NULL,"
    "  page INTEGER NOT NULL,"
    "  url_count INTEGER NOT NULL DEFAULT 0,"
    "  xml_bytes INTEGER NOT NULL DEFAULT 0,"
    "  lastmod INTEGER NOT NULL DEFAULT 0,"
    "  changed INTEGER NOT NULL DEFAULT 0,"
    "  version INTEGER NOT NULL DEFAULT 0,"
    "  PRIMARY KEY(site_id, page)) WITHOUT ROWID;"
    /* A page's lastmod never goes back: a removal moves it to the time of
     * the removal, so crawlers re-fetch the page and see the URL gone. */
    "CREATE TRIGGER urls_added AFTER INSERT ON urls BEGIN"
    "  INSERT INTO pages(site_id, page, url_count, xml_bytes, lastmod,"
    "                    changed, version)"
    "  VALUES (new.site_id, new.page, 1, new.xml_len, new.lastmod,"
    "          CAST(strftime('%s','now') AS INTEGER), 1)"
    "  ON CONFLICT(site_id, page) DO UPDATE SET"
    "    url_count = url_count + 1,"
    "    xml_bytes = xml_bytes + excluded.xml_bytes,"
    "    lastmod = max(lastmod, excluded.lastmod),"
    "    changed = excluded.changed,"
    "    version = version + 1;"
    "  UPDATE sites SET url_count = url_count + 1 WHERE id = new.site_id;"
    "END;"
    "CREATE TRIGGER urls_removed AFTER DELETE ON urls BEGIN"
    "  UPDATE pages SET"
    "    url_count = url_count - 1,"
    "    xml_bytes = xml_bytes - old.xml_len,"
    "    lastmod = max(lastmod, CAST(strftime('%s','now') AS INTEGER)),"
    "    changed = CAST(strftime('%s','now') AS INTEGER),"
    "    version = version + 1"
    "  WHERE site_id = old.site_id AND page = old.page;"
    "  UPDATE sites SET url_count = url_count - 1 WHERE id = old.site_id;"
    "END;"
    "CREATE TRIGGER urls_lastmod AFTER UPDATE OF lastmod ON urls"
    "  WHEN new.lastmod IS NOT old.lastmod BEGIN"
    "  UPDATE pages SET"
    "    lastmod = max(lastmod, new.lastmod),"
    "    changed = CAST(strftime('%s','now') AS INTEGER),"
    "    version = version + 1"
    "  WHERE site_id = new.site_id AND page = new.page;"
    "END;",
};

enum {
    STMT_SITE_GET,
    STMT_SITE_ADD,
    STMT_SITE_NEXT_PAGE,
    STMT_PAGE_GET,
    STMT_URL_GET,
    STMT_URL_ADD,
    STMT_URL_CHANGE,
    STMT_URL_TOUCH,
    STMT_URL_DEL,
    STMT_EXPIRE,
    STMT_STORE_ID,
    STMT_PAGES_ALL,
    STMT_PAGES_ONE,
    STMT_SITE_CHANGED,
    STMT_PAGE_URLS,
    STMT_COUNT
};

static const char *const stmt_sql[STMT_COUNT] = {
    [STMT_SITE_GET] =
        "SELECT id, last_page, url_count FROM sites WHERE base = ?1",
    [STMT_SITE_ADD] =
        "INSERT INTO sites(base, page_size) VALUES (?1, ?2)",
    [STMT_SITE_NEXT_PAGE] =
        "UPDATE sites SET last_page = ?2 WHERE id = ?1",
    [STMT_PAGE_GET] =
        "SELECT url_count, xml_bytes FROM pages WHERE site_id = ?1 AND page = ?2",
    [STMT_URL_GET] =
        "SELECT id, lastmod, etag FROM urls WHERE site_id = ?1 AND url = ?2",
    [STMT_URL_ADD] =
        "INSERT INTO urls(site_id, url, page, lastmod, etag, first_seen,"
        " last_seen, xml_len) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)",
    [STMT_URL_CHANGE] =
        "UPDATE urls SET lastmod = ?2, etag = ?3, last_seen = max(last_seen, ?4)"
        " WHERE id = ?1",
    [STMT_URL_TOUCH] =
        "UPDATE urls SET last_seen = ?2 WHERE id = ?1 AND last_seen < ?2",
    [STMT_URL_DEL] =
        "DELETE FROM urls WHERE site_id = ?1 AND url = ?2",
    [STMT_EXPIRE] =
        "DELETE FROM urls WHERE id IN (SELECT id FROM urls"
        " WHERE site_id = (SELECT id FROM sites WHERE base = ?1)"
        " AND last_seen < ?2 LIMIT 10000)",
    [STMT_STORE_ID] =
        "SELECT value FROM meta WHERE key = 'store_id'",
    [STMT_PAGES_ALL] =
        "SELECT page, url_count, version, lastmod, changed FROM pages"
        " WHERE site_id = ?1 AND url_count > 0 ORDER BY page",
    [STMT_PAGES_ONE] =
        "SELECT page, url_count, version, lastmod, changed FROM pages"
        " WHERE site_id = ?1 AND page = ?2 AND url_count > 0",
    [STMT_SITE_CHANGED] =
        "SELECT max(changed) FROM pages WHERE site_id = ?1",
    /* The page index holds the rowid: rows come in insertion order
     * without a sort. */
    [STMT_PAGE_URLS] =
        "SELECT url, lastmod FROM urls WHERE site_id ="
        " (SELECT id FROM sites WHERE base = ?1) AND page = ?2 ORDER BY id",
};

typedef struct {
    sm_store base;
    sqlite3 *db;
    sqlite3_stmt *stmt[STMT_COUNT];
    dev_t dev;
    ino_t ino;
} sqlite_store;

static void set_error(sm_store *st, const char *what, sqlite3 *db)
{
    apr_snprintf(st->errmsg, sizeof(st->errmsg), "%s: %s (SQLite error %d)",
                 what, db ? sqlite3_errmsg(db) : "out of memory",
                 db ? sqlite3_extended_errcode(db) : SQLITE_NOMEM);
}

static apr_status_t sqlite_status(int rc)
{
    return rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW
        ? APR_SUCCESS : APR_EGENERAL;
}

static int exec(sqlite_store *s, const char *what, const char *sql)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        set_error(&s->base, what, s->db);
    return rc;
}

static int int_pragma(sqlite_store *s, const char *sql, sqlite3_int64 *out)
{
    sqlite3_stmt *q;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &q, NULL);

    if (rc == SQLITE_OK) {
        rc = sqlite3_step(q);
        if (rc == SQLITE_ROW) {
            *out = sqlite3_column_int64(q, 0);
            rc = SQLITE_OK;
        }
        sqlite3_finalize(q);
    }
    if (rc != SQLITE_OK)
        set_error(&s->base, "cannot read the schema version", s->db);
    return rc;
}

/* Create or upgrade the schema; one writer at a time does it. */
static int migrate(sqlite_store *s, int readonly)
{
    sqlite3_int64 version, app_id;
    int rc;

    if ((rc = int_pragma(s, "PRAGMA user_version", &version)) != SQLITE_OK)
        return rc;
    if (version == SM_SCHEMA_VERSION)
        goto check_id;
    if (version > SM_SCHEMA_VERSION) {
        apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                     "schema version %" APR_INT64_T_FMT " is newer than this "
                     "mod_sitemap understands (%d)", (apr_int64_t)version,
                     SM_SCHEMA_VERSION);
        return SQLITE_MISMATCH;
    }
    if (readonly) {
        apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                     "schema version %" APR_INT64_T_FMT " needs an upgrade "
                     "to %d; open it read-write once", (apr_int64_t)version,
                     SM_SCHEMA_VERSION);
        return SQLITE_MISMATCH;
    }
    if ((rc = exec(s, "cannot lock the store", "BEGIN IMMEDIATE")) != SQLITE_OK)
        return rc;
    /* Another process may have migrated while we waited for the lock. */
    if ((rc = int_pragma(s, "PRAGMA user_version", &version)) != SQLITE_OK)
        goto fail;
    if (version == 0) {
        sqlite3_int64 tables;
        if ((rc = int_pragma(s, "SELECT count(*) FROM sqlite_master",
                             &tables)) != SQLITE_OK)
            goto fail;
        if (tables != 0) {
            apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                         "not a mod_sitemap store (it holds other tables)");
            rc = SQLITE_MISMATCH;
            goto fail;
        }
    }
    for (; version < SM_SCHEMA_VERSION; version++) {
        if ((rc = exec(s, "cannot upgrade the schema",
                       schema_steps[version])) != SQLITE_OK)
            goto fail;
    }
    {
        char sql[96];
        apr_snprintf(sql, sizeof(sql),
                     "PRAGMA user_version = %d; PRAGMA application_id = %d",
                     SM_SCHEMA_VERSION, SM_APPLICATION_ID);
        if ((rc = exec(s, "cannot set the schema version", sql)) != SQLITE_OK)
            goto fail;
    }
    if ((rc = exec(s, "cannot commit the schema", "COMMIT")) != SQLITE_OK)
        goto fail;
    return SQLITE_OK;

fail:
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;

check_id:
    if ((rc = int_pragma(s, "PRAGMA application_id", &app_id)) != SQLITE_OK)
        return rc;
    if (app_id != SM_APPLICATION_ID) {
        apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                     "not a mod_sitemap store (application_id %08x)",
                     (unsigned)app_id);
        return SQLITE_MISMATCH;
    }
    return SQLITE_OK;
}

static sqlite3_stmt *stmt(sqlite_store *s, int which)
{
    sqlite3_stmt *q = s->stmt[which];
    if (!q) {
        if (sqlite3_prepare_v3(s->db, stmt_sql[which], -1,
                               SQLITE_PREPARE_PERSISTENT, &q,
                               NULL) != SQLITE_OK) {
            set_error(&s->base, "cannot prepare a statement", s->db);
            return NULL;
        }
        s->stmt[which] = q;
    }
    return q;
}

static void text(sqlite3_stmt *q, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(q, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(q, i);
}

/* Run a statement that returns no rows. */
static int run(sqlite_store *s, sqlite3_stmt *q, const char *what)
{
    int rc = sqlite3_step(q);
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (rc != SQLITE_DONE) {
        set_error(&s->base, what, s->db);
        return rc;
    }
    return SQLITE_OK;
}

typedef struct {
    sqlite3_int64 id, last_page, url_count;
} site_row;

static int site_get(sqlite_store *s, const sm_site_conf *site, site_row *row)
{
    sqlite3_stmt *q;
    int rc, attempt;

    for (attempt = 0; attempt < 2; attempt++) {
        if (!(q = stmt(s, STMT_SITE_GET)))
            return SQLITE_ERROR;
        text(q, 1, site->base);
        rc = sqlite3_step(q);
        if (rc == SQLITE_ROW) {
            row->id = sqlite3_column_int64(q, 0);
            row->last_page = sqlite3_column_int64(q, 1);
            row->url_count = sqlite3_column_int64(q, 2);
        }
        sqlite3_reset(q);
        sqlite3_clear_bindings(q);
        if (rc == SQLITE_ROW)
            return SQLITE_OK;
        if (rc != SQLITE_DONE) {
            set_error(&s->base, "cannot read the site", s->db);
            return rc;
        }
        if (!(q = stmt(s, STMT_SITE_ADD)))
            return SQLITE_ERROR;
        text(q, 1, site->base);
        sqlite3_bind_int(q, 2, site->page_size);
        if ((rc = run(s, q, "cannot add the site")) != SQLITE_OK)
            return rc;
    }
    return SQLITE_ERROR;
}

/* The page a new URL of entry_bytes goes on: the last one, or a new one. */
static int choose_page(sqlite_store *s, const sm_site_conf *site,
                       site_row *row, apr_int64_t entry_bytes,
                       sqlite3_int64 *page)
{
    sqlite3_stmt *q = stmt(s, STMT_PAGE_GET);
    sqlite3_int64 count = 0, bytes = 0;
    int page_size = site->page_size;
    int rc;

    if (!q)
        return SQLITE_ERROR;
    if (page_size < 1 || page_size > SM_PAGE_MAX_URLS)
        page_size = SM_PAGE_MAX_URLS;
    sqlite3_bind_int64(q, 1, row->id);
    sqlite3_bind_int64(q, 2, row->last_page);
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        count = sqlite3_column_int64(q, 0);
        bytes = sqlite3_column_int64(q, 1);
    }
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        set_error(&s->base, "cannot read the page summary", s->db);
        return rc;
    }
    if (count < page_size
        && SM_PAGE_OVERHEAD + bytes + entry_bytes <= SM_PAGE_MAX_BYTES) {
        *page = row->last_page;
        return SQLITE_OK;
    }
    row->last_page++;
    if (!(q = stmt(s, STMT_SITE_NEXT_PAGE)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, row->id);
    sqlite3_bind_int64(q, 2, row->last_page);
    *page = row->last_page;
    return run(s, q, "cannot open a new page");
}

static int same_etag(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

static int record(sqlite_store *s, const sm_change *c, sm_apply_stats *stats)
{
    sqlite3_int64 seen = apr_time_sec(c->seen);
    sqlite3_int64 lastmod = c->last_modified ? apr_time_sec(c->last_modified)
                                             : seen;
    sqlite3_stmt *q;
    site_row site;
    int rc;

    if ((rc = site_get(s, c->site, &site)) != SQLITE_OK)
        return rc;
    if (!(q = stmt(s, STMT_URL_GET)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, site.id);
    text(q, 2, c->url);
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        sqlite3_int64 id = sqlite3_column_int64(q, 0);
        sqlite3_int64 old_lastmod = sqlite3_column_int64(q, 1);
        int etag_same = same_etag(c->etag,
                                  (const char *)sqlite3_column_text(q, 2));
        sqlite3_reset(q);
        sqlite3_clear_bindings(q);

        /* Without Last-Modified, lastmod is the first-seen time, moved
         * forward when the ETag changes. */
        if (!c->last_modified)
            lastmod = etag_same ? old_lastmod
                                : (seen > old_lastmod ? seen : old_lastmod);
        if (lastmod != old_lastmod || !etag_same) {
            if (!(q = stmt(s, STMT_URL_CHANGE)))
                return SQLITE_ERROR;
            sqlite3_bind_int64(q, 1, id);
            sqlite3_bind_int64(q, 2, lastmod);
            text(q, 3, c->etag);
            sqlite3_bind_int64(q, 4, seen);
            stats->updated++;
            return run(s, q, "cannot update a URL");
        }
        if (!(q = stmt(s, STMT_URL_TOUCH)))
            return SQLITE_ERROR;
        sqlite3_bind_int64(q, 1, id);
        sqlite3_bind_int64(q, 2, seen);
        stats->touched++;
        return run(s, q, "cannot refresh a URL");
    }
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (rc != SQLITE_DONE) {
        set_error(&s->base, "cannot read a URL", s->db);
        return rc;
    }
    if (c->site->max_urls > 0 && site.url_count >= c->site->max_urls) {
        stats->refused_full++;
        return SQLITE_OK;
    }
    {
        apr_int64_t entry = (apr_int64_t)strlen(c->site->base)
                            + (apr_int64_t)sm_xml_escaped_len(c->url)
                            + SM_ENTRY_OVERHEAD;
        sqlite3_int64 page = 0;

        if ((rc = choose_page(s, c->site, &site, entry, &page)) != SQLITE_OK)
            return rc;
        if (!(q = stmt(s, STMT_URL_ADD)))
            return SQLITE_ERROR;
        sqlite3_bind_int64(q, 1, site.id);
        text(q, 2, c->url);
        sqlite3_bind_int64(q, 3, page);
        sqlite3_bind_int64(q, 4, lastmod);
        text(q, 5, c->etag);
        sqlite3_bind_int64(q, 6, seen);
        sqlite3_bind_int64(q, 7, entry);
        stats->added++;
        return run(s, q, "cannot add a URL");
    }
}

static int forget(sqlite_store *s, const sm_change *c, sm_apply_stats *stats)
{
    sqlite3_stmt *q;
    int rc;

    if (!(q = stmt(s, STMT_URL_DEL)))
        return SQLITE_ERROR;
    /* The site id is looked up inside the statement's own subquery only
     * when the site exists; a missing site means nothing to forget. */
    {
        site_row site;
        if ((rc = site_get(s, c->site, &site)) != SQLITE_OK)
            return rc;
        sqlite3_bind_int64(q, 1, site.id);
    }
    text(q, 2, c->url);
    if ((rc = run(s, q, "cannot remove a URL")) == SQLITE_OK)
        stats->removed += sqlite3_changes(s->db);
    return rc;
}

static apr_status_t sqlite_apply(sm_store *st, const sm_change *changes,
                                 int n, sm_apply_stats *stats)
{
    sqlite_store *s = (sqlite_store *)st;
    int i, rc;

    memset(stats, 0, sizeof(*stats));
    if ((rc = exec(s, "cannot start a transaction", "BEGIN IMMEDIATE"))
        != SQLITE_OK)
        return sqlite_status(rc);
    for (i = 0; i < n; i++) {
        rc = changes[i].op == SM_CHANGE_FORGET
           ? forget(s, &changes[i], stats)
           : record(s, &changes[i], stats);
        if (rc != SQLITE_OK)
            goto fail;
    }
    if ((rc = exec(s, "cannot commit", "COMMIT")) != SQLITE_OK)
        goto fail;
    return APR_SUCCESS;

fail:
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    memset(stats, 0, sizeof(*stats));
    return APR_EGENERAL;
}

static apr_status_t sqlite_expire(sm_store *st, const sm_site_conf *site,
                                  apr_time_t now, int *removed)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_int64 before = apr_time_sec(now) - apr_time_sec(site->expire);
    int rc, n;

    *removed = 0;
    if (site->expire <= 0)
        return APR_SUCCESS;
    /* Short transactions of at most 10000 rows, so writers never wait long. */
    do {
        sqlite3_stmt *q = stmt(s, STMT_EXPIRE);
        if (!q)
            return APR_EGENERAL;
        text(q, 1, site->base);
        sqlite3_bind_int64(q, 2, before);
        if ((rc = run(s, q, "cannot expire old URLs")) != SQLITE_OK)
            return APR_EGENERAL;
        n = sqlite3_changes(s->db);
        *removed += n;
    } while (n == 10000);
    return APR_SUCCESS;
}

static int sqlite_is_current(sm_store *st)
{
    sqlite_store *s = (sqlite_store *)st;
    struct stat sb;

    return stat(st->path, &sb) == 0 && sb.st_dev == s->dev
           && sb.st_ino == s->ino;
}

static void sqlite_close(sm_store *st)
{
    sqlite_store *s = (sqlite_store *)st;
    int i;

    for (i = 0; i < STMT_COUNT; i++) {
        sqlite3_finalize(s->stmt[i]);
        s->stmt[i] = NULL;
    }
    if (s->db) {
        sqlite3_close_v2(s->db);
        s->db = NULL;
    }
}

static apr_status_t store_cleanup(void *data)
{
    sqlite_close(data);
    return APR_SUCCESS;
}

/* ---- reading ------------------------------------------------------------ */

static apr_status_t sqlite_read_begin(sm_store *st)
{
    sqlite_store *s = (sqlite_store *)st;
    /* A deferred transaction: the snapshot starts at the first read. */
    return sqlite_status(exec(s, "cannot start reading", "BEGIN"));
}

static void sqlite_read_end(sm_store *st)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
}

static apr_status_t read_error(sqlite_store *s, sqlite3_stmt *q,
                               const char *what)
{
    set_error(&s->base, what, s->db);
    if (q) {
        sqlite3_reset(q);
        sqlite3_clear_bindings(q);
    }
    return APR_EGENERAL;
}

static apr_status_t sqlite_site_info(sm_store *st, apr_pool_t *p,
                                     const char *base, apr_int64_t page,
                                     sm_site_info *out)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q;
    sqlite3_int64 site_id = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    out->pages = apr_array_make(p, 4, sizeof(sm_page_info));
    if (!(q = stmt(s, STMT_STORE_ID)))
        return APR_EGENERAL;
    if ((rc = sqlite3_step(q)) == SQLITE_ROW)
        out->store_id = apr_pstrdup(p, (const char *)sqlite3_column_text(q, 0));
    sqlite3_reset(q);
    if (rc != SQLITE_ROW)
        return read_error(s, NULL, "cannot read the store id");

    if (!(q = stmt(s, STMT_SITE_GET)))
        return APR_EGENERAL;
    text(q, 1, base);
    if ((rc = sqlite3_step(q)) == SQLITE_ROW)
        site_id = sqlite3_column_int64(q, 0);
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return read_error(s, NULL, "cannot read the site");
    if (rc == SQLITE_DONE)
        return APR_SUCCESS;
    out->known = 1;

    if (!(q = stmt(s, page ? STMT_PAGES_ONE : STMT_PAGES_ALL)))
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
    }
    if (rc != SQLITE_DONE)
        return read_error(s, q, "cannot read the pages");
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);

    if (!(q = stmt(s, STMT_SITE_CHANGED)))
        return APR_EGENERAL;
    sqlite3_bind_int64(q, 1, site_id);
    if ((rc = sqlite3_step(q)) == SQLITE_ROW)
        out->changed = apr_time_from_sec(sqlite3_column_int64(q, 0));
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (rc != SQLITE_ROW)
        return read_error(s, NULL, "cannot read the site's pages");
    return APR_SUCCESS;
}

static apr_status_t sqlite_page_urls(sm_store *st, const char *base,
                                     apr_int64_t page, sm_url_fn *fn,
                                     void *baton)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q = stmt(s, STMT_PAGE_URLS);
    apr_status_t rv = APR_SUCCESS;
    int rc;

    if (!q)
        return APR_EGENERAL;
    text(q, 1, base);
    sqlite3_bind_int64(q, 2, page);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        rv = fn(baton, (const char *)sqlite3_column_text(q, 0),
                apr_time_from_sec(sqlite3_column_int64(q, 1)));
        if (rv != APR_SUCCESS)
            break;
    }
    if (rv == APR_SUCCESS && rc != SQLITE_DONE)
        return read_error(s, q, "cannot read the page's URLs");
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return rv;
}

static const sm_store_ops sqlite_ops = {
    "sqlite", sqlite_apply, sqlite_expire, sqlite_is_current, sqlite_close,
    sqlite_read_begin, sqlite_read_end, sqlite_site_info, sqlite_page_urls
};

apr_status_t sm_store_open_sqlite(sm_store **out, apr_pool_t *p,
                                  const char *path, int flags,
                                  int busy_timeout_ms, const sm_logger *log,
                                  char *errmsg, apr_size_t errlen)
{
    sqlite_store *s = apr_pcalloc(p, sizeof(*s));
    int readonly = (flags & SM_STORE_READONLY) != 0;
    int oflags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    struct stat sb;
    int rc;

    *out = NULL;
    s->base.ops = &sqlite_ops;
    s->base.path = apr_pstrdup(p, path);
    s->base.pool = p;
    s->base.log = log;
    if ((flags & SM_STORE_CREATE) && !readonly)
        oflags |= SQLITE_OPEN_CREATE;
    oflags |= SQLITE_OPEN_NOMUTEX;

    rc = sqlite3_open_v2(path, &s->db, oflags, NULL);
    if (rc != SQLITE_OK) {
        set_error(&s->base, "cannot open", s->db);
        goto fail;
    }
    apr_pool_cleanup_register(p, s, store_cleanup, apr_pool_cleanup_null);
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, busy_timeout_ms);
    if (!readonly) {
        rc = exec(s, "cannot switch to WAL mode",
                  "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
        if (rc != SQLITE_OK)
            goto fail;
    }
    if ((rc = migrate(s, readonly)) != SQLITE_OK)
        goto fail;
    if (stat(path, &sb) == 0) {
        s->dev = sb.st_dev;
        s->ino = sb.st_ino;
    }
    *out = &s->base;
    return APR_SUCCESS;

fail:
    if (errmsg)
        apr_cpystrn(errmsg, s->base.errmsg, errlen);
    sqlite_close(&s->base);
    return APR_EGENERAL;
}
