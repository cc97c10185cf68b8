/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite.c: the store in one SQLite file (WAL mode): its
 * statements, opening and closing it, the helpers its other files share.
 * Writing is in sm_store_sqlite_write.c, reading in sm_store_sqlite_read.c,
 * the schema in sm_store_sqlite_schema.c.  One connection is used by one
 * thread at a time. */
#include "store/sm_store_sqlite.h"
#include "store/sm_store_sqlite_indexnow.h"

#include <apr_hash.h>
#include <apr_strings.h>
#include <sqlite3.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>


/* The -wal file's bound (see sm_store_open_sqlite; README, The store). */
#define WAL_CHECKPOINT_PAGES "1000"
#define WAL_SIZE_LIMIT "4194304"


/* The ids of page ?2 of site ?1 (by base): from the page's first id to the
 * next page's, or to the end of the site's range.  Readers never rely on
 * sites.next_id, which only writers keep. */
#define PAGE_IDS \
    "(SELECT p.first_id AS lo, coalesce((SELECT n.first_id FROM pages n" \
    "   WHERE n.site_id = p.site_id AND n.page > p.page" \
    "   ORDER BY n.page LIMIT 1), (s.id + 1) << " SITE_ID_SHIFT_SQL ") AS hi" \
    " FROM sites s JOIN pages p ON p.site_id = s.id" \
    " WHERE s.base = ?1 AND p.page = ?2)"

/* The ids of site ?1 (by base). */
#define SITE_IDS \
    "(SELECT id << " SITE_ID_SHIFT_SQL " AS lo," \
    "  (id + 1) << " SITE_ID_SHIFT_SQL " AS hi FROM sites" \
    "  WHERE base = ?1) r"

static const char *const stmt_sql[STMT_COUNT] = {
    [STMT_SITE_GET] =
        "SELECT id, last_page, url_count, next_id FROM sites WHERE base = ?1",
    /* The next site id, as SQLite would choose it, with the site's first
     * URL id; no row when the ids have run out. */
    [STMT_SITE_ADD] =
        "INSERT INTO sites(id, base, page_size, next_id)"
        " SELECT n, ?1, ?2, (n << " SITE_ID_SHIFT_SQL ") + 1"
        " FROM (SELECT coalesce(max(id), 0) + 1 AS n FROM sites)"
        " WHERE n <= ?3",
    [STMT_PAGE_GET] =
        "SELECT url_count, xml_bytes, lastmod FROM pages"
        " WHERE site_id = ?1 AND page = ?2",
    [STMT_URL_GET] =
        "SELECT id, lastmod, etag, page, title, alternates, held FROM urls"
        " WHERE site_id = ?1 AND url = ?2",
    [STMT_URL_ADD] =
        "INSERT INTO urls(id, site_id, url, page, lastmod, etag, first_seen,"
        " last_seen, xml_len, title, alternates, held, description,"
        " published)"
        " VALUES (?8, ?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?9, ?10, ?11, ?12,"
        " ?13)"
        " ON CONFLICT(site_id, url) DO NOTHING",
    [STMT_URL_CHANGE] =
        "UPDATE urls SET lastmod = ?2, etag = ?3, last_seen = max(last_seen, ?4)"
        " WHERE id = ?1",
    /* Corroborated (sm_store_tx.h): no longer held. */
    [STMT_URL_VOUCH] =
        "UPDATE urls SET held = 0 WHERE id = ?1",
    [STMT_URL_TOUCH] =
        "UPDATE urls SET last_seen = ?2 WHERE id = ?1 AND last_seen < ?2",
    [STMT_URL_DEL] =
        "DELETE FROM urls WHERE site_id = ?1 AND url = ?2"
        " RETURNING page, xml_len, url, held",
    /* Expiry walks the site's range of ids: no index on last_seen to keep
     * up to date on every insert and refresh. */
    [STMT_EXPIRE] =
        "DELETE FROM urls WHERE id >= ?1 AND id < ?2 AND last_seen < ?3"
        " RETURNING page, xml_len, url, held",
    [STMT_EXPIRE_CLAIM] =
        "UPDATE sites SET expiry_claimed = ?2 WHERE id = ?1"
        " AND expiry_claimed <= ?3",
    /* A page summary, written once per transaction that touched it. */
    [STMT_PAGE_PUT] =
        "INSERT INTO pages(site_id, page, url_count, xml_bytes, lastmod,"
        " changed, version, first_id, oldest_seen)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8)"
        " ON CONFLICT(site_id, page) DO UPDATE SET"
        " url_count = excluded.url_count, xml_bytes = excluded.xml_bytes,"
        " lastmod = excluded.lastmod, changed = excluded.changed,"
        " version = version + 1,"
        " oldest_seen = min(oldest_seen, excluded.oldest_seen)",
    [STMT_SITE_SUMMARY] =
        "UPDATE sites SET url_count = url_count + ?2, last_page = ?5,"
        " next_id = ?6,"
        " index_changed = CASE WHEN ?3 THEN ?4 ELSE index_changed END"
        " WHERE id = ?1",
    [STMT_STORE_ID] =
        "SELECT value FROM meta WHERE key = 'store_id'",
    [STMT_PAGES_ALL] =
        "SELECT page, url_count, version, lastmod, changed, xml_bytes"
        " FROM pages"
        " WHERE site_id = ?1 AND url_count > 0 ORDER BY page",
    [STMT_PAGES_ONE] =
        "SELECT page, url_count, version, lastmod, changed, xml_bytes"
        " FROM pages"
        " WHERE site_id = ?1 AND page = ?2 AND url_count > 0",
    [STMT_SITE_CHANGED] =
        "SELECT index_changed, settings_changed, settings FROM sites"
        " WHERE id = ?1",
    [STMT_PAGE_URLS] =
        "SELECT u.url, u.lastmod, u.alternates FROM " PAGE_IDS " r, urls u"
        " WHERE u.id >= r.lo AND u.id < r.hi ORDER BY u.id",
    [STMT_PAGE_TITLES] =
        "SELECT u.url, u.title FROM " PAGE_IDS " r, urls u"
        " WHERE u.id >= r.lo AND u.id < r.hi AND u.title IS NOT NULL"
        " ORDER BY u.id",
    [STMT_URL_TITLE] =
        "UPDATE urls SET title = ?2 WHERE id = ?1",
    [STMT_URL_ALTERNATES] =
        "UPDATE urls SET alternates = ?2 WHERE id = ?1",
    [STMT_URL_UNDER] =
        "SELECT url, etag FROM urls"
        " WHERE site_id = ?1 AND url >= ?2 AND url < ?3 AND etag IS NOT NULL",
    [STMT_REMOVED_ADD] =
        "INSERT INTO removed_days(site_id, day, n) VALUES (?1, ?2, ?3)"
        " ON CONFLICT(site_id, day) DO UPDATE SET n = n + excluded.n",
    [STMT_REMOVED_PRUNE] =
        "DELETE FROM removed_days WHERE site_id = ?1 AND day < ?2",
    [STMT_SITE_SETTINGS] =
        "SELECT settings, page_size FROM sites WHERE id = ?1",
    [STMT_SITE_SET_SETTINGS] =
        "UPDATE sites SET settings = ?2, page_size = ?3 WHERE id = ?1",
    [STMT_SITE_ROW] =
        "SELECT url_count, last_page, page_size, settings FROM sites"
        " WHERE base = ?1",
    /* Id order is page order, and within a page the order of arrival. */
    [STMT_URL_ROWS_ALL] =
        "SELECT u.url, u.page, u.lastmod, u.last_seen, u.alternates FROM"
        " (SELECT id << " SITE_ID_SHIFT_SQL " AS lo,"
        "  (id + 1) << " SITE_ID_SHIFT_SQL " AS hi FROM sites"
        "  WHERE base = ?1) r, urls u"
        " WHERE u.id >= r.lo AND u.id < r.hi ORDER BY u.id",
    [STMT_URL_ROWS_ONE] =
        "SELECT u.url, u.page, u.lastmod, u.last_seen, u.alternates FROM "
        PAGE_IDS " r,"
        " urls u WHERE u.id >= r.lo AND u.id < r.hi ORDER BY u.id",
    /* A URL pending already is pending once, as of its latest change. */
    [STMT_IN_REQUEUE] =
        "UPDATE indexnow_pending SET queued = ?3 WHERE site = ?1 AND url = ?2",
    [STMT_IN_ADD] =
        "INSERT INTO indexnow_pending(site, url, queued) VALUES (?1, ?2, ?3)",
    [STMT_IN_COUNT] =
        "SELECT count(*) FROM indexnow_pending WHERE site = ?1",
    [STMT_IN_OVERFLOW] =
        "INSERT INTO indexnow_state(site, overflow) VALUES (?1, 1)"
        " ON CONFLICT(site) DO UPDATE SET overflow = overflow + 1",
    /* A URL's latest verdict, unless one of a later time is kept. */
    [STMT_VERDICT_PUT] =
        "INSERT INTO verdicts(site_id, url, seq, verdict, reason, detail,"
        " status, at) VALUES (?1, ?2, (SELECT coalesce(max(seq), 0) + 1"
        " FROM verdicts WHERE site_id = ?1), ?3, ?4, ?5, ?6, ?7)"
        " ON CONFLICT(site_id, url) DO UPDATE SET seq = excluded.seq,"
        " verdict = excluded.verdict, reason = excluded.reason,"
        " detail = excluded.detail, status = excluded.status,"
        " at = excluded.at WHERE excluded.at >= verdicts.at",
    [STMT_VERDICT_TRIM] =
        "DELETE FROM verdicts WHERE site_id = ?1 AND seq <= (SELECT max(seq)"
        " FROM verdicts WHERE site_id = ?1) - ?2",
    [STMT_WHY_URL] =
        "SELECT u.lastmod, u.last_seen FROM sites s JOIN urls u"
        " ON u.site_id = s.id WHERE s.base = ?1 AND u.url = ?2",
    [STMT_WHY_VERDICT] =
        "SELECT v.verdict, v.reason, v.detail, v.status, v.at FROM sites s"
        " JOIN verdicts v ON v.site_id = s.id WHERE s.base = ?1"
        " AND v.url = ?2",
    /* Among the site's newest SM_VERDICTS_SCAN verdicts: a status
     * request never probes more URLs than that. */
    [STMT_LEFT_OUT] =
        "SELECT v.url, v.verdict, v.reason, v.detail, v.status, v.at FROM"
        " (SELECT w.* FROM sites s JOIN verdicts w ON w.site_id = s.id"
        "  WHERE s.base = ?1 ORDER BY w.seq DESC LIMIT ?3) v"
        " WHERE NOT EXISTS (SELECT 1 FROM urls u"
        " WHERE u.site_id = v.site_id AND u.url = v.url)"
        " ORDER BY v.seq DESC LIMIT ?2",
    [STMT_READ_BEGIN] = "BEGIN",
    [STMT_READ_END] = "COMMIT",
    /* the cheapest read that starts a snapshot: no table is searched */
    [STMT_DATA_VERSION] = "PRAGMA data_version",
    /* crawl coverage: a fetch older than the one kept changes nothing */
    [STMT_CRAWL_PUT] =
        "INSERT INTO crawls(url_id, crawler, fetched, status)"
        " VALUES (?1, ?2, ?3, ?4) ON CONFLICT(url_id, crawler) DO UPDATE"
        " SET fetched = excluded.fetched, status = excluded.status"
        " WHERE excluded.fetched >= crawls.fetched",
    [STMT_CRAWL_SITEMAP] =
        "INSERT INTO crawlers(site_id, crawler, sitemap_fetches,"
        " last_sitemap_fetch) VALUES (?1, ?2, 1, ?3)"
        " ON CONFLICT(site_id, crawler) DO UPDATE SET"
        " sitemap_fetches = sitemap_fetches + 1, last_sitemap_fetch ="
        " max(last_sitemap_fetch, excluded.last_sitemap_fetch)",
    [STMT_CRAWL_UNLISTED_HIT] =
        "INSERT INTO crawlers(site_id, crawler, unlisted_hits)"
        " VALUES (?1, ?2, 1) ON CONFLICT(site_id, crawler) DO UPDATE SET"
        " unlisted_hits = unlisted_hits + 1",
    [STMT_CRAWL_UNLISTED_PUT] =
        "INSERT INTO crawl_unlisted(site_id, crawler, url, seq, fetched,"
        " status) VALUES (?1, ?2, ?3, (SELECT coalesce(max(seq), 0) + 1"
        " FROM crawl_unlisted WHERE site_id = ?1 AND crawler = ?2), ?4, ?5)"
        " ON CONFLICT(site_id, crawler, url) DO UPDATE SET seq = excluded.seq,"
        " fetched = excluded.fetched, status = excluded.status"
        " WHERE excluded.fetched >= crawl_unlisted.fetched",
    [STMT_CRAWL_UNLISTED_TRIM] =
        "DELETE FROM crawl_unlisted WHERE site_id = ?1 AND crawler = ?2"
        " AND seq <= (SELECT max(seq) FROM crawl_unlisted"
        " WHERE site_id = ?1 AND crawler = ?2) - ?3",
    /* The site's URLs in sitemap order (its id range), with the
     * crawler's fetch of each. */
    [STMT_COVERAGE_URLS] =
        "SELECT u.url, u.lastmod, c.fetched, c.status FROM sites s"
        " JOIN urls u ON u.id >= (s.id << " SITE_ID_SHIFT_SQL ")"
        " AND u.id < ((s.id + 1) << " SITE_ID_SHIFT_SQL ")"
        " LEFT JOIN crawls c ON c.url_id = u.id AND c.crawler = ?2"
        " WHERE s.base = ?1 ORDER BY u.id",
    [STMT_COVERAGE_COUNTS] =
        "SELECT c.unlisted_hits, c.sitemap_fetches, c.last_sitemap_fetch"
        " FROM sites s JOIN crawlers c ON c.site_id = s.id"
        " WHERE s.base = ?1 AND c.crawler = ?2",
    [STMT_COVERAGE_UNLISTED] =
        "SELECT c.url, c.fetched, c.status FROM sites s"
        " JOIN crawl_unlisted c ON c.site_id = s.id"
        " WHERE s.base = ?1 AND c.crawler = ?2 ORDER BY c.seq DESC",
    /* SitemapImages: a page's images by id, the head's (source 1) first */
    [STMT_IMG_HEAD_GET] =
        "SELECT image FROM images WHERE url_id = ?1 AND source = 1"
        " ORDER BY image",
    [STMT_IMG_HEAD_DEL] =
        "DELETE FROM images WHERE url_id = ?1 AND source = 1",
    [STMT_IMG_PUT] =
        "INSERT OR IGNORE INTO images(url_id, image, site_id, source,"
        " last_seen) VALUES (?1, ?2, ?3, ?4, ?5)",
    [STMT_IMG_SEEN] =
        "UPDATE images SET last_seen = ?3"
        " WHERE url_id = ?1 AND image = ?2 AND last_seen < ?3",
    [STMT_IMG_TRIM] =
        "DELETE FROM images WHERE url_id = ?1 AND image IN (SELECT image"
        " FROM images WHERE url_id = ?1 ORDER BY last_seen DESC, image"
        " LIMIT -1 OFFSET ?2)",
    [STMT_IMG_GONE_PAGES] =
        "SELECT u.page FROM images i, urls u WHERE i.site_id = ?1"
        " AND i.image = ?2 AND u.id = i.url_id",
    [STMT_IMG_GONE] =
        "DELETE FROM images WHERE site_id = ?1 AND image = ?2",
    [STMT_IMG_PAGE] =
        "SELECT u.url, i.image FROM " PAGE_IDS " r, images i, urls u"
        " WHERE i.url_id >= r.lo AND i.url_id < r.hi AND u.id = i.url_id"
        " ORDER BY i.url_id, i.source, i.image",
    /* the news sitemap and llms.txt (sm_store_sqlite_news.c): a stored
     * URL's id and page, and whether its description or publication time
     * differ; then the change by id (no RETURNING: SQLite would open an
     * ephemeral table for it each time, 30k instructions a new URL) */
    [STMT_NEWS_PUT] =
        "UPDATE urls SET description = ?2, published = ?3 WHERE id = ?1",
    /* published > 0 lets the partial index urls_published serve it */
    [STMT_NEWS_URLS] =
        "SELECT u.url, u.title, u.published FROM " SITE_IDS ", urls u"
        " WHERE u.published > 0 AND u.published >= ?2"
        " AND u.id >= r.lo AND u.id < r.hi"
        " ORDER BY u.published DESC, u.id LIMIT ?3",
    /* a top-N sort: SQLite keeps max rows at a time, not the site's */
    [STMT_LLMS_URLS] =
        "SELECT u.url, u.title, u.description, u.lastmod FROM " SITE_IDS
        ", urls u WHERE u.id >= r.lo AND u.id < r.hi"
        " ORDER BY length(u.url) - length(replace(u.url, '/', '')),"
        " u.url <> '/', u.lastmod DESC, u.id LIMIT ?2",
    /* the news columns are read only when asked for (sm_sqlite_url_find) */
    [STMT_URL_FIND] =
        "SELECT id, page, published, description FROM urls"
        " WHERE site_id = ?1 AND url = ?2",
    /* STMT_URL_ADD_4, _16 and _32: sm_store_sqlite_batch.c writes and
     * prepares them (64 rows: its prepare, 1.7 million instructions at
     * each open, outweighs it) */
    /* a run's rows taken back (its ids are new: any there went in) */
    [STMT_URL_UNDO] =
        "DELETE FROM urls WHERE id >= ?1 AND id <= ?2",
    /* the largest id (the b-tree's last row), 0 with none */
    [STMT_URL_MAX_ID] = "SELECT coalesce(max(id), 0) FROM urls",
};


void sm_sqlite_set_error(sm_store *st, const char *what, sqlite3 *db)
{
    apr_snprintf(st->errmsg, sizeof(st->errmsg), "%s: %s (SQLite error %d)",
                 what, db ? sqlite3_errmsg(db) : "out of memory",
                 db ? sqlite3_extended_errcode(db) : SQLITE_NOMEM);
}

apr_status_t sm_sqlite_status(int rc)
{
    return rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW
        ? APR_SUCCESS : APR_EGENERAL;
}

int sm_sqlite_exec(sqlite_store *s, const char *what, const char *sql)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        sm_sqlite_set_error(&s->base, what, s->db);
    return rc;
}

int sm_sqlite_int_pragma(sqlite_store *s, const char *sql, sqlite3_int64 *out)
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
        sm_sqlite_set_error(&s->base, "cannot read the schema version", s->db);
    return rc;
}

sqlite3_stmt *sm_sqlite_stmt(sqlite_store *s, int which)
{
    sqlite3_stmt *q = s->stmt[which];
    if (!q) {
        if (sqlite3_prepare_v3(s->db, stmt_sql[which], -1,
                               SQLITE_PREPARE_PERSISTENT, &q,
                               NULL) != SQLITE_OK) {
            sm_sqlite_set_error(&s->base, "cannot prepare a statement", s->db);
            return NULL;
        }
        s->stmt[which] = q;
    }
    return q;
}

void sm_sqlite_text(sqlite3_stmt *q, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(q, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(q, i);
}

/* Run a statement that returns no rows. */
int sm_sqlite_run(sqlite_store *s, sqlite3_stmt *q, const char *what)
{
    return sm_sqlite_finish(s, q, sqlite3_step(q), what);
}

int sm_sqlite_finish(sqlite_store *s, sqlite3_stmt *q, int rc,
                     const char *what)
{
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (rc != SQLITE_DONE) {
        sm_sqlite_set_error(&s->base, what, s->db);
        return rc;
    }
    return SQLITE_OK;
}


static int sqlite_is_current(sm_store *st)
{
    sqlite_store *s = (sqlite_store *)st;
    struct stat sb;

    return stat(st->path, &sb) == 0 && sb.st_dev == s->dev
           && sb.st_ino == s->ino;
}

int sm_sqlite_url_find(sqlite_store *s, sqlite3_int64 site_id,
                       const char *url, const sm_change *news_of,
                       sm_sqlite_url_ref *out)
{
    sqlite3_stmt *q = sm_sqlite_stmt(s, STMT_URL_FIND);
    int rc;

    memset(out, 0, sizeof(*out));
    if (!q)
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, site_id);
    sm_sqlite_text(q, 2, url);
    if ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        out->id = sqlite3_column_int64(q, 0);
        out->page = sqlite3_column_int64(q, 1);
        if (news_of) {
            const char *want = news_of->description
                               && *news_of->description
                               ? news_of->description : NULL;
            const char *had = (const char *)sqlite3_column_text(q, 3);
            sqlite3_int64 published = news_of->published > 0
                                      ? apr_time_sec(news_of->published) : 0;

            out->news_differs = sqlite3_column_int64(q, 2) != published
                                || (!want != !had)
                                || (want && strcmp(want, had) != 0);
        }
        rc = sqlite3_step(q);
    }
    return sm_sqlite_finish(s, q, rc, "cannot read a URL");
}

void sm_sqlite_close(sm_store *st)
{
    sqlite_store *s = (sqlite_store *)st;
    int i;

    /* Closed while idle, to be opened again (sm_store_close_idle): the
     * last connection to close leaves the -wal and -shm as they are.
     * With thousands of store files that close-and-open cycle is the
     * module writer's main cost: 1.6 ms a store with the checkpoint,
     * fsync, unlink and creation of both files, 0.4 ms without. */
    if (s->db && st->close_lightly) {
        int one = 1;
        sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
        sqlite3_file_control(s->db, "main", SQLITE_FCNTL_PERSIST_WAL, &one);
    }

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
    sm_sqlite_close(data);
    return APR_SUCCESS;
}


const sm_store_ops sm_sqlite_ops = {
    "sqlite", sm_sqlite_apply, sm_sqlite_expire, sqlite_is_current,
    sm_sqlite_close,
    sm_sqlite_read_begin, sm_sqlite_read_end, sm_sqlite_site_info,
    sm_sqlite_page_urls, sm_sqlite_page_titles, sm_sqlite_site_row,
    sm_sqlite_site_stats, sm_sqlite_url_rows, sm_sqlite_about,
    sm_sqlite_sync_sites, sm_sqlite_recent, sm_sqlite_indexnow_claim,
    sm_sqlite_indexnow_finish, sm_sqlite_indexnow_queue,
    sm_sqlite_indexnow_stats, sm_sqlite_site_list, sm_sqlite_why,
    sm_sqlite_left_out, sm_sqlite_prune_sites, sm_sqlite_coverage,
    sm_sqlite_coverage_urls, sm_sqlite_page_images,
    sm_sqlite_crawl_days_note, sm_sqlite_crawl_days, sm_sqlite_indexnow_stale,
    sm_sqlite_news_urls, sm_sqlite_llms_urls,
    sm_sqlite_robots_list, sm_sqlite_robots_body,
    sm_sqlite_robots_urls, sm_sqlite_robots_swept
};

sqlite3 *sm_sqlite_handle(sm_store *st)
{
    return ((sqlite_store *)st)->db;
}

void sm_store_sqlite_init(void)
{
    /* SQLITE_MISUSE when SQLite is initialised already: nothing to do. */
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

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
    s->base.ops = &sm_sqlite_ops;
    s->base.path = apr_pstrdup(p, path);
    s->base.pool = p;
    s->base.log = log;
    if (apr_pool_create(&s->tx.pool, p) != APR_SUCCESS)
        return APR_ENOMEM;
    if ((flags & SM_STORE_CREATE) && !readonly) {
        oflags |= SQLITE_OPEN_CREATE;
        /* A new file: a copy of the schema's template (one sync), then
         * opened as any store (sm_sqlite_is_new). */
        apr_pool_t *tp;
        if (apr_pool_create(&tp, p) == APR_SUCCESS) {
            if (sm_sqlite_is_new(tp, path))
                (void)sm_sqlite_make_file(tp, path);
            apr_pool_destroy(tp);
        }
    }
    oflags |= SQLITE_OPEN_NOMUTEX;

    rc = sqlite3_open_v2(path, &s->db, oflags, NULL);
    if (rc != SQLITE_OK) {
        sm_sqlite_set_error(&s->base, "cannot open", s->db);
        goto fail;
    }
    apr_pool_cleanup_register(p, s, store_cleanup, apr_pool_cleanup_null);
    sm_sqlite_site_cache_init(s);
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, busy_timeout_ms);
    if ((rc = sm_sqlite_harden(s)) != SQLITE_OK)
        goto fail;
    /* Someone else's trigger or view: refused before the file is switched
     * to WAL mode or written at all (sm_sqlite_migrate looks again under
     * its lock). */
    {
        sqlite3_int64 version;
        if ((rc = sm_sqlite_int_pragma(s, "PRAGMA user_version", &version))
            != SQLITE_OK)
            goto fail;
        if (version <= SM_SCHEMA_VERSION
            && (rc = sm_sqlite_check_objects(s, version)) != SQLITE_OK)
            goto fail;
    }
    if (!readonly) {
        /* The -wal file is bounded: a (passive) checkpoint after every
         * WAL_CHECKPOINT_PAGES pages written (4 MiB with 4 KiB pages),
         * and the file cut back to WAL_SIZE_LIMIT whenever a writer
         * starts it over.  So it holds at most the limit plus the last
         * transaction (a batch of 1,000 new URLs is about 1.5 MB), unless
         * a reader keeps an old snapshot for long.  Checkpointing every
         * 10,000 pages instead saved about 6% of the writer's CPU per new
         * URL but let the file reach 40 MB (bench/RESULTS.md). */
        rc = sm_sqlite_exec(s, "cannot switch to WAL mode",
                  "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                  " PRAGMA wal_autocheckpoint = " WAL_CHECKPOINT_PAGES ";"
                  " PRAGMA journal_size_limit = " WAL_SIZE_LIMIT);
        if (rc != SQLITE_OK)
            goto fail;
    }
    if ((flags & SM_STORE_BULK)
        && (rc = sm_sqlite_exec(s, "cannot size the page cache",
                      "PRAGMA cache_size = -65536")) != SQLITE_OK)
        goto fail;
    if ((rc = sm_sqlite_migrate(s, readonly, (flags & SM_STORE_PROBE) != 0))
        != SQLITE_OK)
        goto fail;
    if (!readonly
        && (rc = sm_sqlite_exec(s, "cannot create IndexNow's tables",
                      sm_sqlite_indexnow_tables)) != SQLITE_OK)
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
    sm_sqlite_close(&s->base);
    return APR_EGENERAL;
}
