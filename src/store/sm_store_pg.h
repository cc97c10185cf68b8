/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_pg.h: what the files of the PostgreSQL store share (private to
 * sm_store_pg*.c; callers use sm_store.h).
 *
 *   sm_store_pg_conn.c   connecting, statements, the schema
 *   sm_store_pg.c        writing (apply, expire, sites) and opening
 *   sm_store_pg_read.c   reading, administration, check
 *   sm_store_pg_indexnow.c  IndexNow's pending list
 *   sm_store_pg_batch.c  a transaction's new URLs, by COPY */
#ifndef SM_STORE_PG_H
#define SM_STORE_PG_H

#include <apr_hash.h>
#include <apr_strings.h>
#include <libpq-fe.h>

#include "store/sm_store_backend.h"
#include "store/sm_store_tx.h"

#define SITE_ID_SHIFT_SQL "40"
#define SITE_FIRST_ID(site) (((apr_int64_t)(site)) << 40)
/* What a statement may take, locks aside (lock_timeout is the caller's
 * busy timeout): long enough to stream a 50,000-URL page to a slow client,
 * short enough that a stuck database never holds a thread for long. */
#define STATEMENT_TIMEOUT "30s"
/* A transaction-scoped advisory lock key ("SMAP") for schema creation. */
#define SCHEMA_LOCK_KEY "1397571920"
/* The schema version that brought crawl coverage per day and
 * SitemapIndexNowStale's mark. */
#define SM_PG_SCHEMA_CRAWL_DAYS 9

typedef struct {
    sm_store base;
    PGconn *conn;
    const char *uri;
    int lock_timeout_ms;
    int readonly;
    /* (sm_store_pg_conn.c) The connection was given up (no answer in
     * time): not made again within the same operation.  Once the writer
     * stops, every wait ends by stop_deadline (the busy timeout after the
     * stop was first seen). */
    int gave_up;
    apr_time_t stop_deadline;
    /* base -> the settings text known to be in the site's row (checked
     * once per connection and site; forgotten when a write rolls back) */
    apr_hash_t *settings_kept;
    sm_tx tx;       /* the write transaction's summaries (now: the
                       database's clock) */
    int verdicts_ok;    /* may write sitemap_verdicts: 0 not asked yet,
                           1 yes, -1 no (a role not granted it) */
    int crawls_ok;      /* the same for the crawl coverage's tables
                           (-2: no, and the log said so) */
    int robots_ok;      /* the same for sitemap_robots */
    int images_ok;      /* the same for sitemap_images */
} pg_store;

/* ---- statements (sm_store_pg_conn.c) ----------------------------------- */

#define MAX_PARAMS 13

typedef struct {
    const char *v[MAX_PARAMS];
    char buf[MAX_PARAMS][24];
    int n;
} params;

static inline void p_i64(params *ps, apr_int64_t x)
{
    apr_snprintf(ps->buf[ps->n], sizeof(ps->buf[0]), "%" APR_INT64_T_FMT, x);
    ps->v[ps->n] = ps->buf[ps->n];
    ps->n++;
}

static inline void p_str(params *ps, const char *x)
{
    ps->v[ps->n++] = x;
}

static inline apr_int64_t i64(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? 0
           : apr_atoi64(PQgetvalue(res, row, col));
}

/* PostgreSQL array literals of n values: text (every element quoted, '"'
 * and '\\' escaped; a NULL pointer is NULL) and bigint. */
const char *sm_pg_text_array(apr_pool_t *p, const char *const *v, int n);
const char *sm_pg_int_array(apr_pool_t *p, const apr_int64_t *v, int n);

void sm_pg_set_error(pg_store *s, const char *what, const PGresult *res);
/* Run sql with ps; the result on success (PQclear it), NULL (errmsg set)
 * otherwise. */
PGresult *sm_pg_q(pg_store *s, const char *what, const char *sql,
                  const params *ps);
/* sm_pg_q with parameters given as libpq's PQexecParams takes them (some
 * in binary: formats[i] 1, lengths[i] their bytes). */
PGresult *sm_pg_q_binary(pg_store *s, const char *what, const char *sql,
                         int n, const char *const *values,
                         const int *lengths, const int *formats);
/* A statement without a result worth keeping; *changed (when not NULL)
 * gets the rows it changed. */
int sm_pg_run(pg_store *s, const char *what, const char *sql, const params *ps,
              apr_int64_t *changed);
/* COPY ... FROM STDIN (sql) of data, len bytes in COPY's format: 0 with
 * *rows (when not NULL) the rows added, or -1 (errmsg set). */
int sm_pg_copy_in(pg_store *s, const char *what, const char *sql,
                  const char *data, apr_size_t len, apr_int64_t *rows);
/* Simple-protocol text (several statements, no parameters). */
PGresult *sm_pg_exec(pg_store *s, const char *what, const char *sql);
/* Start a transaction with bounded waits; *now (when not NULL) gets the
 * database's time in seconds. */
int sm_pg_begin(pg_store *s, const char *mode, apr_int64_t *now);
void sm_pg_rollback(pg_store *s);
/* May the role use table with privileges ("SELECT, INSERT, ...")?  Asked
 * once per store (*ok: 0 not asked, 1 yes, -1 no): a role whose grants
 * predate the table goes on without it, and the log says once "this role
 * may not write TABLE: WITHOUT".  1 yes, 0 no, -1 error (errmsg). */
int sm_pg_table_allowed(pg_store *s, int *ok, const char *table,
                        const char *privileges, const char *without);
/* The connection, made again when it broke. */
int sm_pg_connection(pg_store *s);
/* The same for a read or check that may run inside the caller's
 * transaction: outside one (idle, or no working connection at all: given
 * up on, or closed by the server) the connection is made again; inside
 * one it is the caller's. */
int sm_pg_connected(pg_store *s);
/* sm_pg_begin on a working connection (made again when it broke, also
 * when that shows only at BEGIN). */
int sm_pg_start(pg_store *s, const char *mode, apr_int64_t *now);
/* Connect s->conn to s->uri (closing what it had), waiting at most
 * connect_timeout an address, and at most the busy timeout once the
 * writer stops (s->base.stopping), as statements do: 0, or -1 (errmsg
 * set, s->conn NULL). */
int sm_pg_connect(pg_store *s);
/* The schema's version; 0 when its tables are not there. */
int sm_pg_schema_version(pg_store *s, int *version);
/* Connected (when idle), with *has 1 when the schema is version since or
 * newer (the tables a feature needs), 0 for an older one, which
 * sitemapctl may still read; -1 when not connected. */
int sm_pg_ready(pg_store *s, int since, int *has);
/* Create or upgrade the schema when create, else only check it. */
int sm_pg_migrate(pg_store *s, int create);
void sm_pg_close(sm_store *st);

/* ---- reading (sm_store_pg_read.c) ------------------------------------ */

apr_status_t sm_pg_read_begin(sm_store *st);
void sm_pg_read_end(sm_store *st);
apr_status_t sm_pg_site_info(sm_store *st, apr_pool_t *p, const char *base,
                             apr_int64_t page, sm_site_info *out);
apr_status_t sm_pg_page_urls(sm_store *st, const char *base, apr_int64_t page,
                             sm_url_fn *fn, void *baton);
apr_status_t sm_pg_page_titles(sm_store *st, const char *base,
                               apr_int64_t page, sm_title_fn *fn,
                               void *baton);
apr_status_t sm_pg_site_row(sm_store *st, apr_pool_t *p, const char *base,
                            sm_site_row *out);
apr_status_t sm_pg_site_stats(sm_store *st, apr_pool_t *p, const char *base,
                              apr_array_header_t **out);
apr_status_t sm_pg_site_list(sm_store *st, apr_pool_t *p,
                             apr_array_header_t **out);
apr_status_t sm_pg_url_rows(sm_store *st, const char *base, apr_int64_t page,
                            sm_url_row_fn *fn, void *baton);
apr_status_t sm_pg_about(sm_store *st, apr_pool_t *p, sm_store_about *out);
apr_status_t sm_pg_recent(sm_store *st, apr_pool_t *p, const char *base,
                          int n, apr_time_t since, apr_array_header_t **urls,
                          apr_array_header_t **days);

/* ---- writing (sm_store_pg.c, sm_store_pg_batch.c) --------------------- */

/* Where a new URL of ts's site goes: 1 with its page, id and entry bytes,
 * 0 when the site is full (max_urls, or its ids ran out), -1 on error. */
int sm_pg_plan_url(pg_store *s, const sm_change *c, sm_tx_site *ts,
                   apr_int64_t *page, apr_int64_t *id, apr_int64_t *entry);

/* The new rows of a transaction, written by sm_pg_write_new. */
typedef struct {
    apr_pool_t *p;
    apr_hash_t *stored;         /* "site id/url" of the stored URLs */
    apr_hash_t *pending;        /* "site id/url" of the rows below */
    apr_array_header_t *site, *id, *page, *lastmod, *seen, *len,
                       *held, *published;                       /* int64 */
    apr_array_header_t *url, *etag, *title, *alternates,
                       *description;                            /* char * */
    /* The transaction's changes, and which of them a new row took whole
     * (its description and publication time too: sm_pg_news_put passes
     * them by). */
    const sm_change *changes;
    int n_changes;
    unsigned char *in_row;
} sm_pg_new_rows;

/* The writer's forget (sm_store_pg.c), and what leaves when a file's own
 * URL is added (sm_change.file_url; sm_store_pg_copies.c): 0, or -1. */
int sm_pg_forget(pg_store *s, const sm_change *c, sm_tx_site *ts,
                 sm_apply_stats *stats);
int sm_pg_copies_leave(pg_store *s, sm_pg_new_rows *nr, const sm_change *c,
                       sm_tx_site *ts, sm_apply_stats *stats);

void sm_pg_new_rows_init(sm_pg_new_rows *nr, apr_pool_t *p,
                         const sm_change *changes, int n);
/* The key of url of ts's site in nr's tables. */
const char *sm_pg_row_key(apr_pool_t *p, const sm_tx_site *ts,
                          const char *url);
/* Which URLs of the changes that may add one are stored (nr->stored). */
int sm_pg_find_stored(pg_store *s, sm_pg_new_rows *nr,
                      const sm_change *changes, int n);
/* c adds a URL neither stored nor pending: planned, counted, kept. */
int sm_pg_queue_new(pg_store *s, sm_pg_new_rows *nr, const sm_change *c,
                    sm_tx_site *ts, const char *key, sm_apply_stats *stats);
/* Write the pending rows in one statement (none: nothing). */
int sm_pg_write_new(pg_store *s, sm_pg_new_rows *nr);

/* ---- IndexNow (sm_store_pg_indexnow.c) ------------------------------- */

/* Put url on the pending list of ts's site, when it has SitemapIndexNow On,
 * in the caller's write transaction: 0, or -1 (errmsg set). */
int sm_pg_indexnow_note(pg_store *s, sm_tx_site *ts, const char *url);
/* A RECORD c of the held URL id (*held non-zero, sm_store_tx.h): when it
 * corroborates, the URL is held no more and goes on the list (*held 0);
 * otherwise it stays held (s->tx.held).  0, or -1 (errmsg set). */
int sm_pg_indexnow_vouch(pg_store *s, const sm_change *c, sm_tx_site *ts,
                         apr_int64_t id, apr_int64_t *held);

/* ---- verdicts (sm_store_pg_why.c) -------------------------------------- */

/* Keep c's verdict (removed: a forget removed the stored URL). */
int sm_pg_verdict_put(pg_store *s, apr_int64_t site_id, const sm_change *c,
                      int removed);
/* ---- crawl coverage (sm_store_pg_crawl.c) ----------------------------- */

/* Count c (SM_CHANGE_CRAWL) for the site site_id, in the caller's write
 * transaction: 0, or -1 (errmsg set). */
int sm_pg_crawl_put(pg_store *s, apr_int64_t site_id, const sm_change *c);
/* SitemapImages (sm_store_pg_images.c): SM_CHANGE_IMAGE and _IMAGE_GONE;
 * after a RECORD, its head images (the new rows before written first when
 * there are any). */
int sm_pg_images_put(pg_store *s, sm_tx_site *ts, const sm_change *c);
int sm_pg_images_after(pg_store *s, sm_pg_new_rows *nr, const sm_change *c);
apr_status_t sm_pg_page_images(sm_store *st, const char *base,
                               apr_int64_t page, sm_image_fn *fn,
                               void *baton);
/* May the role write the coverage's tables (asked once per store; a
 * fetch to write says so in the log once when not): 1 yes, 0 no, -1
 * error. */
int sm_pg_crawls_allowed(pg_store *s);
/* fn(s, baton) in a transaction of its own, committed when it gives 0, on
 * a store whose schema keeps crawl days and whose role may write the
 * crawl tables: APR_SUCCESS; APR_ENOTIMPL when either is not so (nothing
 * logged); APR_EGENERAL (errmsg set, rolled back). */
apr_status_t sm_pg_crawl_tx(pg_store *s, int (*fn)(pg_store *, void *),
                           void *baton);
apr_status_t sm_pg_coverage(sm_store *st, const char *base,
                            const char *crawler, apr_time_t now,
                            sm_coverage *out);
apr_status_t sm_pg_coverage_urls(sm_store *st, const char *base,
                                 const char *crawler,
                                 sm_coverage_which which,
                                 sm_coverage_fn *fn, void *baton);
/* Per UTC day (sm_store_pg_crawl_days.c). */
apr_status_t sm_pg_crawl_days_note(sm_store *st, const char *base,
                                   apr_int64_t day, apr_int64_t now_s,
                                   int *taken);
apr_status_t sm_pg_crawl_days(sm_store *st, apr_pool_t *p, const char *base,
                              const char *crawler, apr_int64_t since,
                              apr_array_header_t **out);
/* SitemapIndexNowStale (sm_store_pg_stale.c). */
apr_status_t sm_pg_indexnow_stale(sm_store *st, const char *base,
                                  apr_time_t now, int *queued);

/* ---- robots.txt (sm_store_pg_robots.c) -------------------------------- */

/* Keep c's body (SM_CHANGE_ROBOTS) when it differs, in the caller's
 * write transaction: 0, or -1 (errmsg set). */
int sm_pg_robots_put(pg_store *s, apr_int64_t site_id, const sm_change *c);
apr_status_t sm_pg_robots_list(sm_store *st, apr_pool_t *p,
                               apr_array_header_t **out);
apr_status_t sm_pg_robots_body(sm_store *st, apr_pool_t *p, const char *base,
                               sm_robots_row *out);
apr_status_t sm_pg_robots_urls(sm_store *st, apr_pool_t *p, const char *base,
                               const char *after, int n,
                               apr_array_header_t **out);
apr_status_t sm_pg_robots_swept(sm_store *st, const char *base,
                                apr_int64_t hash, const char *upto);

/* ---- reading helpers (sm_store_pg_read.c) ------------------------------ */

typedef apr_status_t sm_pg_row_fn(void *baton, const PGresult *res, int row);
/* What every query given to sm_pg_stream begins with. */
#define SM_PG_CURSOR "DECLARE sm_rows NO SCROLL CURSOR FOR "
/* Run sql (SM_PG_CURSOR "SELECT ...") through a cursor, a batch of rows
 * at a time, in the caller's transaction or one of its own. */
apr_status_t sm_pg_stream(pg_store *s, const char *what, const char *sql,
                          const params *ps, sm_pg_row_fn *fn, void *baton);
/* The id range of the site (by base); *lo == *hi: no such site. */
int sm_pg_id_range(pg_store *s, const char *what, const char *base,
                   apr_int64_t *lo, apr_int64_t *hi);

/* sm_store_pg_prune.c */
apr_status_t sm_pg_prune_sites(sm_store *st, sm_base_test_fn *test,
                               void *baton, int *pruned);
apr_status_t sm_pg_why(sm_store *st, apr_pool_t *p, const char *base,
                       const char *url, sm_why_info *out);
apr_status_t sm_pg_left_out(sm_store *st, apr_pool_t *p, const char *base,
                            int n, apr_array_header_t **out);
apr_status_t sm_pg_indexnow_claim(sm_store *st, apr_pool_t *p,
                                  const char *base, apr_time_t now,
                                  apr_interval_time_t lease,
                                  sm_indexnow_batch *out);
apr_status_t sm_pg_indexnow_finish(sm_store *st, const char *base,
                                   const sm_indexnow_batch *batch,
                                   const sm_indexnow_result *result);
apr_status_t sm_pg_indexnow_queue(sm_store *st, const char *base,
                                  const char *const *urls, int n,
                                  int *queued);
apr_status_t sm_pg_indexnow_stats(sm_store *st, apr_pool_t *p,
                                  const char *base, apr_array_header_t **out);

/* ---- the writer's transaction (sm_store_pg.c), for expiry ---------------- */

/* Begin a write transaction: sm_pg_tx_lock_sites, then sm_pg_tx_commit
 * (the touched summaries written) or sm_pg_tx_rollback; 0 or -1. */
int sm_pg_tx_start(pg_store *s);
/* Lock the rows of the sites of n elements of stride bytes, each
 * starting with a pointer to its sm_site_conf. */
int sm_pg_tx_lock_sites(pg_store *s, const void *elts, apr_size_t stride,
                        int n);
int sm_pg_tx_commit(pg_store *s);
void sm_pg_tx_rollback(pg_store *s);
/* The site's row (*found 0: none), locked when lock. */
int sm_pg_site_find(pg_store *s, const char *base, int lock, sm_tx_row *row,
                    int *found);
/* Run a DELETE ... RETURNING page, xml_len, url, held and count what it
 * removed in the summaries and IndexNow's list. */
int sm_pg_delete_rows(pg_store *s, sm_tx_site *ts, const char *what,
                      const char *sql, const params *ps, int *removed);
/* sm_store_pg_expire.c */
apr_status_t sm_pg_expire(sm_store *st, const sm_site_conf *site,
                          apr_time_t now, apr_interval_time_t every,
                          int *removed);

/* ---- news sitemap and llms.txt (sm_store_pg_news.c) --------------------- */

/* The descriptions and publication times of the batch's records (those
 * with a description), after its new rows are written; each change moves
 * its page's version.  Those in_row marks (when not NULL) are in their
 * new rows already and are passed by. */
int sm_pg_news_put(pg_store *s, const sm_change *changes, int n,
                   const unsigned char *in_row);
apr_status_t sm_pg_news_urls(sm_store *st, const char *base,
                             apr_time_t since, int max, sm_news_fn *fn,
                             void *baton);
apr_status_t sm_pg_llms_urls(sm_store *st, const char *base, int max,
                             sm_llms_fn *fn, void *baton);

#endif
