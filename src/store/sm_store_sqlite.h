/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite.h: what the files of the SQLite store share (private to
 * sm_store_sqlite*.c; callers use sm_store.h).
 *
 *   sm_store_sqlite.c           the schema, statements, opening, writing
 *   sm_store_sqlite_read.c      reading: the sitemap's and sitemapctl's
 *   sm_store_sqlite_check.c     sitemapctl check
 *   sm_store_sqlite_indexnow.c  IndexNow's pending list
 *   sm_store_sqlite_crawl.c     crawl coverage */
#ifndef SM_STORE_SQLITE_H
#define SM_STORE_SQLITE_H

#include <apr_hash.h>
#include <sqlite3.h>
#include <sys/types.h>

#include "store/sm_store_backend.h"
#include "store/sm_store_tx.h"

/* "SMAP": marks the file as ours (PRAGMA application_id). */
#define SM_APPLICATION_ID 0x534D4150
/* The schema version that brought crawl coverage per day and
 * SitemapIndexNowStale's mark (a writer of an older file takes no day). */
#define SM_SQLITE_SCHEMA_CRAWL_DAYS 10

/* A URL's id: (site id << SITE_ID_SHIFT) + the site's running number, so
 * a site's URLs, and each of its pages, are one range of rowids. */
#define SITE_ID_SHIFT 40
#define SITE_ID_SHIFT_SQL "40"
#define SITE_ID_MAX ((((sqlite3_int64)1) << (62 - SITE_ID_SHIFT)) - 1)
#define SITE_FIRST_ID(site) (((sqlite3_int64)(site)) << SITE_ID_SHIFT)

enum {
    STMT_SITE_GET,
    STMT_SITE_ADD,
    STMT_PAGE_GET,
    STMT_URL_GET,
    STMT_URL_ADD,
    STMT_URL_CHANGE,
    STMT_URL_TOUCH,
    STMT_URL_VOUCH,
    STMT_URL_DEL,
    STMT_EXPIRE,
    STMT_EXPIRE_CLAIM,
    STMT_PAGE_PUT,
    STMT_SITE_SUMMARY,
    STMT_STORE_ID,
    STMT_PAGES_ALL,
    STMT_PAGES_ONE,
    STMT_SITE_CHANGED,
    STMT_PAGE_URLS,
    STMT_PAGE_TITLES,
    STMT_URL_TITLE,
    STMT_URL_ALTERNATES,
    STMT_URL_UNDER,
    STMT_REMOVED_ADD,
    STMT_REMOVED_PRUNE,
    /* sitemapctl and the settings kept with a site */
    STMT_SITE_SETTINGS,
    STMT_SITE_SET_SETTINGS,
    STMT_SITE_ROW,
    STMT_URL_ROWS_ALL,
    STMT_URL_ROWS_ONE,
    /* IndexNow's pending list (sm_store_sqlite_indexnow.c) */
    STMT_IN_REQUEUE,
    STMT_IN_ADD,
    STMT_IN_COUNT,
    STMT_IN_OVERFLOW,
    /* verdicts (sm_store_sqlite_why.c) */
    STMT_VERDICT_PUT,
    STMT_VERDICT_TRIM,
    STMT_WHY_URL,
    STMT_WHY_VERDICT,
    STMT_LEFT_OUT,
    /* a document's read snapshot (sm_store_sqlite_read.c): prepared once,
     * not parsed again by sqlite3_exec for every sitemap request */
    STMT_READ_BEGIN,
    STMT_READ_END,
    /* crawl coverage (sm_store_sqlite_crawl.c) */
    STMT_CRAWL_PUT,
    STMT_CRAWL_SITEMAP,
    STMT_CRAWL_UNLISTED_HIT,
    STMT_CRAWL_UNLISTED_PUT,
    STMT_CRAWL_UNLISTED_TRIM,
    STMT_COVERAGE_URLS,
    STMT_COVERAGE_COUNTS,
    STMT_COVERAGE_UNLISTED,
    /* SitemapImages (sm_store_sqlite_images.c) */
    STMT_IMG_HEAD_GET,
    STMT_IMG_HEAD_DEL,
    STMT_IMG_PUT,
    STMT_IMG_SEEN,
    STMT_IMG_TRIM,
    STMT_IMG_GONE_PAGES,
    STMT_IMG_GONE,
    STMT_IMG_PAGE,
    /* starts a document's snapshot (sm_store_sqlite_sitecache.c) */
    STMT_DATA_VERSION,
    /* the news sitemap and llms.txt (sm_store_sqlite_news.c) */
    STMT_NEWS_PUT,
    STMT_NEWS_URLS,
    STMT_LLMS_URLS,
    /* a stored URL by (site, url): sm_sqlite_url_find */
    STMT_URL_FIND,
    /* new URLs several to an INSERT (sm_store_sqlite_batch.c) */
    STMT_URL_ADD_4,
    STMT_URL_ADD_16,
    STMT_URL_ADD_32,
    STMT_URL_UNDO,
    STMT_URL_MAX_ID,
    /* the same without the rarely set columns (sm_store_sqlite_batch.c) */
    STMT_URL_ADD_4_PLAIN,
    STMT_URL_ADD_16_PLAIN,
    STMT_URL_ADD_32_PLAIN,
    STMT_COUNT
};

/* One summary a connection keeps (sm_store_sqlite_sitecache.c); base
 * NULL when the slot is empty. */
#define SITE_CACHE_SLOTS 4
#define SITE_CACHE_MAX_PAGES 4096
typedef struct {
    char *base;
    char *store_id;
    char *settings;
    sm_page_info *pages;
    int npages;
    int known;
    apr_int64_t page;
    unsigned version;           /* SQLITE_FCNTL_DATA_VERSION read with it */
    apr_time_t index_changed;
    apr_time_t settings_changed;
} sm_sqlite_site_slot;

typedef struct {
    sm_store base;
    sqlite3 *db;
    sqlite3_stmt *stmt[STMT_COUNT];
    dev_t dev;
    ino_t ino;
    /* base -> the settings text known to be in the site's row (checked
     * once per connection and site; forgotten when a write rolls back) */
    apr_hash_t *settings_kept;
    sm_tx tx;                   /* the write transaction's summaries */
    sm_sqlite_site_slot site_cache[SITE_CACHE_SLOTS];
    int site_cache_next;        /* the slot the next summary replaces */
    /* the write's changes before this index go one by one (a run met a
     * URL stored already: sm_store_sqlite_batch.c) */
    int runs_from;
} sqlite_store;

/* ---- the site summaries a connection keeps (sm_store_sqlite_sitecache.c)
 * Registered with the connection's pool (freed with it). */
void sm_sqlite_site_cache_init(sqlite_store *s);
/* The connection's data version; 0 unless in a read (not a write)
 * transaction, when a summary may be kept or used. */
int sm_sqlite_data_version(sqlite_store *s, unsigned *version);
/* 1 with *out filled (in p) from a summary of base and page read at
 * version; 0 when there is none. */
int sm_sqlite_site_cache_get(sqlite_store *s, apr_pool_t *p,
                             const char *base, apr_int64_t page,
                             unsigned version, sm_site_info *out);
void sm_sqlite_site_cache_put(sqlite_store *s, const char *base,
                              apr_int64_t page, unsigned version,
                              const sm_site_info *in);

/* ---- helpers (sm_store_sqlite.c) ---------------------------------------- */

extern const sm_store_ops sm_sqlite_ops;

/* errmsg: what, and SQLite's message and extended code. */
void sm_sqlite_set_error(sm_store *st, const char *what, sqlite3 *db);
apr_status_t sm_sqlite_status(int rc);
int sm_sqlite_exec(sqlite_store *s, const char *what, const char *sql);
/* The first column of the first row of sql. */
int sm_sqlite_int_pragma(sqlite_store *s, const char *sql,
                         sqlite3_int64 *out);
/* The prepared statement which (prepared on first use); NULL (errmsg set)
 * when it cannot be. */
/* Create or upgrade the schema (sm_store_sqlite_schema.c); one writer at
 * a time does it.  probe: a read-only look that accepts an older schema. */
int sm_sqlite_migrate(sqlite_store *s, int readonly, int probe);
/* Schema step i (user_version i to i + 1); NULL past the last. */
const char *sm_sqlite_schema_step(int i);
/* What the steps make of an empty file, as one script (a new store's
 * schema and meta rows); NULL: run the steps (sm_store_sqlite_fresh.c). */
const char *sm_sqlite_fresh_schema(void);
/* Make a new store file at path (missing) as a copy of the process's
 * template of the schema, synced once and linked to its name
 * (sm_store_sqlite_fresh.c); APR_SUCCESS also when another process made
 * it meanwhile.  On failure the store is made as before, by the open. */
apr_status_t sm_sqlite_make_file(apr_pool_t *p, const char *path);
/* Is path new: neither it nor a -wal of an earlier file there exists (a
 * copy would get that -wal replayed into it; SQLite drops it for an empty
 * file)? */
int sm_sqlite_is_new(apr_pool_t *p, const char *path);
/* The same for n new store files, synced together (one sync per file
 * system): made[i] says which were made; returns how many. */
int sm_sqlite_make_files(apr_pool_t *p, const char *const *paths, int n,
                         char *made);
/* SQLite's defensive settings on a newly opened connection. */
int sm_sqlite_harden(sqlite_store *s);
/* SQLITE_MISMATCH (errmsg says which) when the file holds a trigger or a
 * view the schema of that version does not make. */
int sm_sqlite_check_objects(sqlite_store *s, sqlite3_int64 version);
sqlite3_stmt *sm_sqlite_stmt(sqlite_store *s, int which);
/* Bind v (NULL: SQL NULL) to parameter i. */
void sm_sqlite_text(sqlite3_stmt *q, int i, const char *v);
/* Run q, a statement that returns no rows; SQLITE_OK, or its error (errmsg
 * set, with what). */
int sm_sqlite_run(sqlite_store *s, sqlite3_stmt *q, const char *what);
/* q stepped to its end with rc, its last sqlite3_step's: reset, bindings
 * cleared; SQLITE_OK when rc is SQLITE_DONE, else rc (errmsg set, with
 * what). */
int sm_sqlite_finish(sqlite_store *s, sqlite3_stmt *q, int rc,
                     const char *what);
void sm_sqlite_close(sm_store *st);

/* A stored URL found by its site and text (sm_sqlite_url_find): id 0 when
 * it is not stored.  news_differs: with a news_of given, whether the row's
 * description and publication time differ from the change's. */
typedef struct {
    sqlite3_int64 id, page;
    int news_differs;
} sm_sqlite_url_ref;
/* The one lookup of a URL's row by (site, url) that crawl coverage,
 * images and the news columns share (one prepared statement). */
int sm_sqlite_url_find(sqlite_store *s, sqlite3_int64 site_id,
                       const char *url, const sm_change *news_of,
                       sm_sqlite_url_ref *out);

/* ---- writing (sm_store_sqlite_write.c) ------------------------------------ */

/* The writer's forget (sm_store_sqlite_write.c), and what leaves when a
 * file's own URL is stored (sm_change.file_url; sm_store_sqlite_copies.c). */
int sm_sqlite_forget(sqlite_store *s, const sm_change *c,
                     sm_apply_stats *stats);
/* url added, its lastmod moved or removed: on the site's IndexNow pending
 * list when the site has SitemapIndexNow On (sm_store_sqlite_indexnow.c). */
int sm_sqlite_indexnow_note(sqlite_store *s, sm_tx_site *ts, const char *url);
/* One change of a write and what follows it (sm_store_sqlite_write.c); i:
 * its index in the write's list (held_v). */
int sm_sqlite_apply_one(sqlite_store *s, const sm_change *c, int i,
                        sm_apply_stats *stats);
/* ts->last_count and last_bytes read for the transaction, once. */
int sm_sqlite_last_page_known(sqlite_store *s, sm_tx_site *ts);
/* New URLs from changes[i] on, several to one INSERT
 * (sm_store_sqlite_batch.c): *done the changes it wrote, with what
 * follows each (0: changes[i] starts no such run). */
int sm_sqlite_add_run(sqlite_store *s, const sm_change *changes, int n,
                      int i, sm_apply_stats *stats, int *done);
int sm_sqlite_copies_leave(sqlite_store *s, const sm_change *c,
                           sqlite3_int64 site_id, sm_apply_stats *stats);
/* The same in two steps: the copies of c stored (*found NULL when c is
 * not a file's own URL), then their removal. */
int sm_sqlite_copies_find(sqlite_store *s, const sm_change *c,
                          sqlite3_int64 site_id, apr_array_header_t **found);
int sm_sqlite_copies_forget(sqlite_store *s, const sm_change *c,
                            const apr_array_header_t *found,
                            sm_apply_stats *stats);
apr_status_t sm_sqlite_apply(sm_store *st, const sm_change *changes, int n,
                             sm_apply_stats *stats);
apr_status_t sm_sqlite_expire(sm_store *st, const sm_site_conf *site,
                              apr_time_t now, apr_interval_time_t every,
                              int *removed);
/* The writer's transaction (tx_start, tx_commit, tx_rollback), a site's
 * row in it, a site's row without adding it (SQLITE_DONE: none), and
 * the removal of the rows q returns (page, xml_len, url, held), counted
 * in the summaries and IndexNow's list: for expiry
 * (sm_store_sqlite_expire.c). */
int sm_sqlite_tx_start(sqlite_store *s);
int sm_sqlite_tx_commit(sqlite_store *s);
void sm_sqlite_tx_rollback(sqlite_store *s);
int sm_sqlite_tx_site(sqlite_store *s, const sm_site_conf *site,
                      sm_tx_site **out);
int sm_sqlite_site_find(sqlite_store *s, const char *base, sm_tx_row *row);
int sm_sqlite_delete_rows(sqlite_store *s, sqlite3_stmt *q, sm_tx_site *ts,
                          const char *what, int *removed);
/* sm_store_sqlite_prune.c */
apr_status_t sm_sqlite_prune_sites(sm_store *st, sm_base_test_fn *test,
                                   void *baton, int *pruned);
apr_status_t sm_sqlite_sync_sites(sm_store *st,
                                  const sm_site_conf *const *sites, int n);

/* ---- reading (sm_store_sqlite_read.c) ------------------------------------ */

apr_status_t sm_sqlite_read_begin(sm_store *st);
void sm_sqlite_read_end(sm_store *st);
apr_status_t sm_sqlite_site_info(sm_store *st, apr_pool_t *p,
                                 const char *base, apr_int64_t page,
                                 sm_site_info *out);
apr_status_t sm_sqlite_page_urls(sm_store *st, const char *base,
                                 apr_int64_t page, sm_url_fn *fn,
                                 void *baton);
apr_status_t sm_sqlite_page_titles(sm_store *st, const char *base,
                                   apr_int64_t page, sm_title_fn *fn,
                                   void *baton);
apr_status_t sm_sqlite_site_row(sm_store *st, apr_pool_t *p,
                                const char *base, sm_site_row *out);
apr_status_t sm_sqlite_site_stats(sm_store *st, apr_pool_t *p,
                                  const char *base, apr_array_header_t **out);
apr_status_t sm_sqlite_site_list(sm_store *st, apr_pool_t *p,
                                 apr_array_header_t **out);
apr_status_t sm_sqlite_url_rows(sm_store *st, const char *base,
                                apr_int64_t page, sm_url_row_fn *fn,
                                void *baton);
apr_status_t sm_sqlite_about(sm_store *st, apr_pool_t *p,
                             sm_store_about *out);
apr_status_t sm_sqlite_recent(sm_store *st, apr_pool_t *p, const char *base,
                              int n, apr_time_t since,
                              apr_array_header_t **urls,
                              apr_array_header_t **days);
/* ---- verdicts (sm_store_sqlite_why.c) ---------------------------------- */

/* Keep c's verdict (a note, or a forget with a why; removed: the forget
 * removed a stored URL) for the site site_id, within SM_VERDICTS_MAX. */
int sm_sqlite_verdict_put(sqlite_store *s, sqlite3_int64 site_id,
                          const sm_change *c, int removed);
apr_status_t sm_sqlite_why(sm_store *st, apr_pool_t *p, const char *base,
                           const char *url, sm_why_info *out);
apr_status_t sm_sqlite_left_out(sm_store *st, apr_pool_t *p,
                                const char *base, int n,
                                apr_array_header_t **out);

/* ---- crawl coverage (sm_store_sqlite_crawl.c) ---------------------------- */

/* Count c (SM_CHANGE_CRAWL) for the site site_id. */
/* SitemapImages (sm_store_sqlite_images.c): a change's images written
 * in the writer's transaction (a RECORD's head images, SM_CHANGE_IMAGE,
 * SM_CHANGE_IMAGE_GONE), the pages whose images changed counted as
 * changed (sm_tx_count) in ts. */
int sm_sqlite_images_put(sqlite_store *s, sm_tx_site *ts,
                         const sm_change *c);
apr_status_t sm_sqlite_page_images(sm_store *st, const char *base,
                                   apr_int64_t page, sm_image_fn *fn,
                                   void *baton);
int sm_sqlite_crawl_put(sqlite_store *s, sqlite3_int64 site_id,
                        const sm_change *c);
apr_status_t sm_sqlite_coverage(sm_store *st, const char *base,
                                const char *crawler, apr_time_t now,
                                sm_coverage *out);
apr_status_t sm_sqlite_coverage_urls(sm_store *st, const char *base,
                                     const char *crawler,
                                     sm_coverage_which which,
                                     sm_coverage_fn *fn, void *baton);
/* Per UTC day (sm_store_sqlite_crawl_days.c). */
apr_status_t sm_sqlite_crawl_days_note(sm_store *st, const char *base,
                                       apr_int64_t day, apr_int64_t now_s,
                                       int *taken);
apr_status_t sm_sqlite_crawl_days(sm_store *st, apr_pool_t *p,
                                  const char *base, const char *crawler,
                                  apr_int64_t since, apr_array_header_t **out);
/* SitemapIndexNowStale (sm_store_sqlite_stale.c). */
apr_status_t sm_sqlite_indexnow_stale(sm_store *st, const char *base,
                                      apr_time_t now, int *queued);

/* ---- news sitemap and llms.txt (sm_store_sqlite_news.c) ----------------- */

/* c's description and publication time (c->description not NULL) into
 * its stored row, if it is stored, moving its page's version when they
 * change. */
int sm_sqlite_news_put(sqlite_store *s, sm_tx_site *ts, const sm_change *c);
apr_status_t sm_sqlite_news_urls(sm_store *st, const char *base,
                                 apr_time_t since, int max, sm_news_fn *fn,
                                 void *baton);
apr_status_t sm_sqlite_llms_urls(sm_store *st, const char *base, int max,
                                 sm_llms_fn *fn, void *baton);

/* ---- robots.txt (sm_store_sqlite_robots.c) ------------------------------ */

/* Keep c's body (SM_CHANGE_ROBOTS) when it differs, in the write's
 * transaction. */
int sm_sqlite_robots_put(sqlite_store *s, const sm_change *c);
apr_status_t sm_sqlite_robots_list(sm_store *st, apr_pool_t *p,
                                   apr_array_header_t **out);
apr_status_t sm_sqlite_robots_body(sm_store *st, apr_pool_t *p,
                                   const char *base, sm_robots_row *out);
apr_status_t sm_sqlite_robots_urls(sm_store *st, apr_pool_t *p,
                                   const char *base, const char *after,
                                   int n, apr_array_header_t **out);
apr_status_t sm_sqlite_robots_swept(sm_store *st, const char *base,
                                    apr_int64_t hash, const char *upto);

/* What sitemapctl stats and check say of the file (with_meta: also the
 * store's id and creation time). */
int sm_sqlite_read_about(sqlite_store *s, apr_pool_t *p, sm_store_about *out,
                         int with_meta);

#endif
