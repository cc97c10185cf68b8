/* sm_store_pg.c: the store in a PostgreSQL database, shared by a farm of
 * servers (SitemapDatabase postgresql://...).
 *
 * The model and the page assignment are the SQLite backend's (see
 * sm_store.h and "The store" in the README): a URL's id is its site's id
 * times 2^40 plus a number the site hands out in order (sites.next_id),
 * and a page is the range of ids from its first_id to the next page's.
 * What makes it safe for several servers at once:
 *
 *  - Every write transaction first locks the rows of the sites it touches
 *    (SELECT ... FOR UPDATE, in base order so that two batches never wait
 *    for each other).  Writers of one site are so serialised: ids and pages
 *    are handed out once, the page summaries are read and written by one
 *    transaction at a time, and a URL two servers record at the same
 *    moment is inserted by the first and found by the second
 *    (INSERT ... ON CONFLICT DO NOTHING).
 *  - The store id, the page versions and every time the sitemap's ETag and
 *    Last-Modified derive from are rows of the database (times are the
 *    database's clock), so every server answers the same headers.
 *  - The expiry claim is a conditional UPDATE of the site's row: row locks
 *    let one server a period win it.
 *
 * libpq, not apr_dbd: see "PostgreSQL" in the README.  Only unnamed
 * statements, transaction-scoped settings (SET LOCAL) and transaction-
 * scoped advisory locks are used, so a pooler in transaction mode
 * (pgbouncer) works.  One connection is used by one thread at a time. */
#include "sm_store.h"
#include "sm_store_tx.h"

#include <apr_hash.h>
#include <apr_strings.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SITE_ID_SHIFT_SQL "40"
#define SITE_FIRST_ID(site) (((apr_int64_t)(site)) << 40)
/* What a statement may take, locks aside (lock_timeout is the caller's
 * busy timeout): long enough to stream a 50,000-URL page to a slow client,
 * short enough that a stuck database never holds a thread for long. */
#define STATEMENT_TIMEOUT "30s"
/* A transaction-scoped advisory lock key ("SMAP") for schema creation. */
#define SCHEMA_LOCK_KEY "1397571920"

/* Schema steps: entry i upgrades schema_version i to i + 1. */
static const char *const schema_steps[SM_PG_SCHEMA_VERSION] = {
    /* 0 -> 1 */
    "CREATE TABLE sitemap_meta("
    "  key text PRIMARY KEY, value text NOT NULL);"
    "INSERT INTO sitemap_meta(key, value) VALUES"
    "  ('store_id', substr(md5(random()::text || clock_timestamp()::text),"
    "               1, 16)),"
    "  ('created', floor(extract(epoch FROM now()))::bigint::text),"
    "  ('schema_version', '0');"
    /* 2^22 sites: a URL id is site << 40 + n in a bigint. */
    "CREATE SEQUENCE sitemap_site_ids MAXVALUE 4194303;"
    "CREATE TABLE sitemap_sites("
    "  id bigint PRIMARY KEY,"
    "  base text NOT NULL UNIQUE,"
    "  page_size integer NOT NULL DEFAULT 50000,"
    "  last_page bigint NOT NULL DEFAULT 1,"
    "  url_count bigint NOT NULL DEFAULT 0,"
    "  next_id bigint NOT NULL,"
    "  settings text NOT NULL DEFAULT '',"
    "  index_changed bigint NOT NULL DEFAULT 0,"
    "  settings_changed bigint NOT NULL DEFAULT 0,"
    "  expiry_claimed bigint NOT NULL DEFAULT 0);"
    "CREATE TABLE sitemap_urls("
    "  id bigint PRIMARY KEY,"
    "  site_id bigint NOT NULL,"
    "  url text NOT NULL,"
    "  page bigint NOT NULL,"
    "  lastmod bigint NOT NULL,"
    "  etag text,"
    "  first_seen bigint NOT NULL,"
    "  last_seen bigint NOT NULL,"
    "  xml_len integer NOT NULL,"
    "  UNIQUE(site_id, url));"
    "CREATE TABLE sitemap_pages("
    "  site_id bigint NOT NULL,"
    "  page bigint NOT NULL,"
    "  url_count bigint NOT NULL DEFAULT 0,"
    "  xml_bytes bigint NOT NULL DEFAULT 0,"
    "  lastmod bigint NOT NULL DEFAULT 0,"
    "  changed bigint NOT NULL DEFAULT 0,"
    "  version bigint NOT NULL DEFAULT 0,"
    "  first_id bigint NOT NULL,"
    "  PRIMARY KEY(site_id, page));",
};

typedef struct {
    sm_store base;
    PGconn *conn;
    const char *uri;
    int lock_timeout_ms;
    int readonly;
    /* base -> the settings text known to be in the site's row (checked
     * once per connection and site; forgotten when a write rolls back) */
    apr_hash_t *settings_kept;
    sm_tx tx;       /* the write transaction's summaries (now: the
                       database's clock) */
} pg_store;

/* ---- statements -------------------------------------------------------- */

#define MAX_PARAMS 8

typedef struct {
    const char *v[MAX_PARAMS];
    char buf[MAX_PARAMS][24];
    int n;
} params;

static void p_i64(params *ps, apr_int64_t x)
{
    apr_snprintf(ps->buf[ps->n], sizeof(ps->buf[0]), "%" APR_INT64_T_FMT, x);
    ps->v[ps->n] = ps->buf[ps->n];
    ps->n++;
}

static void p_str(params *ps, const char *x)
{
    ps->v[ps->n++] = x;
}

static void set_error(pg_store *s, const char *what, const PGresult *res)
{
    const char *msg = res ? PQresultErrorMessage(res) : "";
    apr_size_t len;

    if (!msg || !*msg)
        msg = s->conn ? PQerrorMessage(s->conn) : "out of memory";
    apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg), "%s: %s", what,
                 msg && *msg ? msg : "unknown error");
    /* The first line: PostgreSQL's LINE/HINT lines quote the statement. */
    s->base.errmsg[strcspn(s->base.errmsg, "\n")] = '\0';
    len = strlen(s->base.errmsg);
    while (len && (s->base.errmsg[len - 1] == '\n'
                   || s->base.errmsg[len - 1] == ' '))
        s->base.errmsg[--len] = '\0';
}

/* Run sql with ps; the result on success (PQclear it), NULL (errmsg set)
 * otherwise. */
static PGresult *q(pg_store *s, const char *what, const char *sql,
                   const params *ps)
{
    PGresult *res = PQexecParams(s->conn, sql, ps ? ps->n : 0, NULL,
                                 ps ? ps->v : NULL, NULL, NULL, 0);
    ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
        return res;
    set_error(s, what, res);
    PQclear(res);
    return NULL;
}

/* A statement without a result worth keeping. */
static int run(pg_store *s, const char *what, const char *sql,
               const params *ps, apr_int64_t *changed)
{
    PGresult *res = q(s, what, sql, ps);

    if (!res)
        return -1;
    if (changed)
        *changed = apr_atoi64(PQcmdTuples(res));
    PQclear(res);
    return 0;
}

static apr_int64_t i64(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? 0
           : apr_atoi64(PQgetvalue(res, row, col));
}

/* Simple-protocol text (several statements, no parameters). */
static PGresult *exec(pg_store *s, const char *what, const char *sql)
{
    PGresult *res = PQexec(s->conn, sql);
    ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
        return res;
    set_error(s, what, res);
    PQclear(res);
    return NULL;
}

/* Start a transaction with bounded waits; *now (when not NULL) gets the
 * database's time in seconds. */
static int begin(pg_store *s, const char *mode, apr_int64_t *now)
{
    char sql[256];
    PGresult *res;

    apr_snprintf(sql, sizeof(sql), "BEGIN %s; SET LOCAL lock_timeout = %d;"
                 " SET LOCAL statement_timeout = '" STATEMENT_TIMEOUT "';"
                 " SELECT floor(extract(epoch FROM now()))::bigint", mode,
                 s->lock_timeout_ms);
    if (!(res = exec(s, "cannot start a transaction", sql)))
        return -1;
    if (now)
        *now = i64(res, 0, 0);
    PQclear(res);
    return 0;
}

static void rollback(pg_store *s)
{
    if (s->conn && PQtransactionStatus(s->conn) != PQTRANS_IDLE)
        PQclear(PQexec(s->conn, "ROLLBACK"));
}

/* The connection, made again when it broke (a restarted or unreachable
 * database: connect_timeout bounds the wait). */
static int connection(pg_store *s)
{
    if (PQstatus(s->conn) != CONNECTION_OK) {
        PQreset(s->conn);
        if (PQstatus(s->conn) != CONNECTION_OK) {
            set_error(s, "cannot connect", NULL);
            return -1;
        }
    }
    rollback(s);        /* a transaction a failure left open */
    return 0;
}

/* ---- sites and their settings ------------------------------------------ */

typedef sm_tx_row site_row;

static int site_find(pg_store *s, const char *base, int lock, site_row *row,
                     int *found)
{
    params ps = { .n = 0 };
    PGresult *res;

    p_str(&ps, base);
    res = q(s, "cannot read the site", lock
            ? "SELECT id, last_page, url_count, next_id FROM sitemap_sites"
              " WHERE base = $1 FOR UPDATE"
            : "SELECT id, last_page, url_count, next_id FROM sitemap_sites"
              " WHERE base = $1", &ps);
    if (!res)
        return -1;
    *found = PQntuples(res) == 1;
    if (*found) {
        row->id = i64(res, 0, 0);
        row->last_page = i64(res, 0, 1);
        row->url_count = i64(res, 0, 2);
        row->next_id = i64(res, 0, 3);
    }
    PQclear(res);
    return 0;
}

/* Keep site->settings (and the page size it goes with) in the site's row.
 * Servers of a farm should agree: when the stored text differs, the
 * writer that comes last wins, and says so. */
static int keep_settings(pg_store *s, const sm_site_conf *site,
                         apr_int64_t id)
{
    const char *kept;
    params ps = { .n = 0 };
    PGresult *res;
    int same;

    if (!s->settings_kept)
        s->settings_kept = apr_hash_make(s->base.pool);
    kept = apr_hash_get(s->settings_kept, site->base, APR_HASH_KEY_STRING);
    if (kept && strcmp(kept, site->settings) == 0)
        return 0;
    p_i64(&ps, id);
    if (!(res = q(s, "cannot read the site's settings", "SELECT settings,"
                  " page_size FROM sitemap_sites WHERE id = $1", &ps)))
        return -1;
    same = PQntuples(res) == 1 && i64(res, 0, 1) == site->page_size
           && strcmp(PQgetvalue(res, 0, 0), site->settings) == 0;
    if (!same && PQntuples(res) == 1 && *PQgetvalue(res, 0, 0))
        sm_log(s->base.log, SM_LOG_WARN, 0, "site %s: this server's sitemap "
               "settings (%s; page size %d) differ from those another "
               "server stored (%s; page size %s): this server's replace "
               "them (the last server to write wins, and each server "
               "shapes its own XML with its own settings): give every "
               "server of the farm the same SitemapPath, SitemapPageSize, "
               "SitemapChangefreq and SitemapPriority", site->base,
               site->settings, site->page_size, PQgetvalue(res, 0, 0),
               PQgetvalue(res, 0, 1));
    PQclear(res);
    if (!same) {
        params up = { .n = 0 };
        p_i64(&up, id);
        p_str(&up, site->settings);
        p_i64(&up, site->page_size);
        if (run(s, "cannot keep the site's settings", "UPDATE sitemap_sites"
                " SET settings = $2, page_size = $3, settings_changed ="
                " CASE WHEN settings = $2 THEN settings_changed ELSE"
                " floor(extract(epoch FROM now()))::bigint END"
                " WHERE id = $1", &up, NULL) != 0)
            return -1;
    }
    apr_hash_set(s->settings_kept, apr_pstrdup(s->base.pool, site->base),
                 APR_HASH_KEY_STRING, apr_pstrdup(s->base.pool,
                                                  site->settings));
    return 0;
}

/* Lock the site's row for this transaction, adding it when missing. */
static int site_lock(pg_store *s, const sm_site_conf *site, site_row *row)
{
    int found = 0, attempt;

    for (attempt = 0; attempt < 2; attempt++) {
        params ps = { .n = 0 };
        apr_int64_t added = 0;

        if (site_find(s, site->base, 1, row, &found) != 0)
            return -1;
        if (found)
            return site->settings ? keep_settings(s, site, row->id) : 0;
        /* Two servers adding the site at once: the second waits for the
         * first's row and adds nothing (a sequence number is lost). */
        p_str(&ps, site->base);
        p_i64(&ps, site->page_size);
        if (run(s, "cannot add the site",
                "INSERT INTO sitemap_sites(id, base, page_size, next_id)"
                " SELECT n, $1, $2, (n << " SITE_ID_SHIFT_SQL ") + 1 FROM"
                " (SELECT nextval('sitemap_site_ids') AS n) i"
                " ON CONFLICT (base) DO NOTHING", &ps, &added) != 0)
            return -1;
    }
    apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                 "cannot add the site %s", site->base);
    return -1;
}

/* ---- the transaction's summaries (sm_store_tx.h) ---------------------- */

static int compare_sites(const void *a, const void *b)
{
    return strcmp((*(const sm_site_conf *const *)a)->base,
                  (*(const sm_site_conf *const *)b)->base);
}

/* Begin a write transaction: tx_lock_sites, then tx_commit or
 * tx_rollback. */
static int tx_start(pg_store *s)
{
    apr_int64_t now;

    if (connection(s) != 0 || begin(s, "", &now) != 0)
        return -1;
    sm_tx_begin(&s->tx, now);
    return 0;
}

/* Lock the rows of the sites of n changes (or of n sites: stride is the
 * size of an element, whose first member points to the site), in base
 * order: two writers never hold one each and wait for the other's. */
static int tx_lock_sites(pg_store *s, const void *elts, apr_size_t stride,
                         int n)
{
    const sm_site_conf **sites = apr_palloc(s->tx.pool, sizeof(*sites)
                                            * (n ? (apr_size_t)n : 1));
    int i;

    for (i = 0; i < n; i++)
        sites[i] = *(const sm_site_conf *const *)
                   ((const char *)elts + stride * (apr_size_t)i);
    qsort(sites, (size_t)n, sizeof(*sites), compare_sites);
    for (i = 0; i < n; i++) {
        site_row row;
        if (sm_tx_site_find(&s->tx, sites[i]->base))
            continue;
        if (site_lock(s, sites[i], &row) != 0)
            return -1;
        sm_tx_site_add(&s->tx, sites[i]->base, &row);
    }
    return 0;
}

static void tx_rollback(pg_store *s)
{
    rollback(s);
    sm_tx_end(&s->tx);
    if (s->settings_kept)
        apr_hash_clear(s->settings_kept);
}

typedef struct {
    apr_int64_t url_count, xml_bytes, lastmod;
} page_row;

static int read_page(pg_store *s, apr_int64_t site_id, apr_int64_t page,
                     page_row *out)
{
    params ps = { .n = 0 };
    PGresult *res;

    memset(out, 0, sizeof(*out));
    p_i64(&ps, site_id);
    p_i64(&ps, page);
    if (!(res = q(s, "cannot read the page summary", "SELECT url_count,"
                  " xml_bytes, lastmod FROM sitemap_pages WHERE site_id = $1"
                  " AND page = $2", &ps)))
        return -1;
    if (PQntuples(res) == 1) {
        out->url_count = i64(res, 0, 0);
        out->xml_bytes = i64(res, 0, 1);
        out->lastmod = i64(res, 0, 2);
    }
    PQclear(res);
    return 0;
}

static int tx_commit(pg_store *s)
{
    apr_hash_index_t *hi;
    PGresult *res;

    for (hi = apr_hash_first(s->tx.pool, s->tx.pages); hi;
         hi = apr_hash_next(hi)) {
        sm_tx_page *tp = apr_hash_this_val(hi);
        params ps = { .n = 0 };
        page_row old;
        apr_int64_t count, lastmod;

        if (read_page(s, tp->key[0], tp->key[1], &old) != 0)
            return -1;
        sm_tx_page_summary(tp, old.url_count, old.lastmod, &count, &lastmod);
        p_i64(&ps, tp->key[0]);
        p_i64(&ps, tp->key[1]);
        p_i64(&ps, count);
        p_i64(&ps, old.xml_bytes + tp->bytes_delta);
        p_i64(&ps, lastmod);
        p_i64(&ps, s->tx.now);
        p_i64(&ps, tp->first_id ? tp->first_id : tp->site->row.next_id);
        if (run(s, "cannot write a page summary",
                "INSERT INTO sitemap_pages(site_id, page, url_count,"
                " xml_bytes, lastmod, changed, version, first_id)"
                " VALUES ($1, $2, $3, $4, $5, $6, 1, $7)"
                " ON CONFLICT (site_id, page) DO UPDATE SET"
                " url_count = excluded.url_count,"
                " xml_bytes = excluded.xml_bytes,"
                " lastmod = excluded.lastmod, changed = excluded.changed,"
                " version = sitemap_pages.version + 1", &ps, NULL) != 0)
            return -1;
    }
    for (hi = apr_hash_first(s->tx.pool, s->tx.sites); hi;
         hi = apr_hash_next(hi)) {
        sm_tx_site *ts = apr_hash_this_val(hi);
        params ps = { .n = 0 };

        if (!sm_tx_site_changed(ts))
            continue;
        p_i64(&ps, ts->row.id);
        p_i64(&ps, ts->url_delta);
        p_i64(&ps, ts->index_changed ? s->tx.now : -1);
        p_i64(&ps, ts->row.last_page);
        p_i64(&ps, ts->row.next_id);
        if (run(s, "cannot write the site summary", "UPDATE sitemap_sites"
                " SET url_count = url_count + $2, last_page = $4,"
                " next_id = $5, index_changed = CASE WHEN $3 >= 0 THEN $3"
                " ELSE index_changed END WHERE id = $1", &ps, NULL) != 0)
            return -1;
    }
    if (!(res = exec(s, "cannot commit", "COMMIT")))
        return -1;
    PQclear(res);
    sm_tx_end(&s->tx);
    return 0;
}

/* ---- writing -------------------------------------------------------------- */

static int add_url(pg_store *s, const sm_change *c, sm_tx_site *ts,
                   apr_int64_t lastmod, apr_int64_t seen, int *added)
{
    apr_int64_t entry = sm_tx_entry_bytes(c), page, id = ts->row.next_id;
    apr_int64_t n = 0;
    params ps = { .n = 0 };

    *added = 0;
    if (c->site->max_urls > 0 && ts->row.url_count >= c->site->max_urls)
        return 0;
    if (id >= SITE_FIRST_ID(ts->row.id + 1))
        return 0;
    if (!ts->last_known) {
        page_row pr;
        if (read_page(s, ts->row.id, ts->row.last_page, &pr) != 0)
            return -1;
        sm_tx_last_page(&s->tx, ts, pr.url_count, pr.xml_bytes);
    }
    page = sm_tx_choose_page(c->site, ts, entry);
    p_i64(&ps, ts->row.id);
    p_str(&ps, c->url);
    p_i64(&ps, page);
    p_i64(&ps, lastmod);
    p_str(&ps, c->etag);
    p_i64(&ps, seen);
    p_i64(&ps, entry);
    p_i64(&ps, id);
    if (run(s, "cannot add a URL", "INSERT INTO sitemap_urls(id, site_id,"
            " url, page, lastmod, etag, first_seen, last_seen, xml_len)"
            " VALUES ($8, $1, $2, $3, $4, $5, $6, $6, $7)"
            " ON CONFLICT (site_id, url) DO NOTHING", &ps, &n) != 0)
        return -1;
    if (n == 0)
        return 0;
    sm_tx_added(&s->tx, ts, page, id, entry, lastmod);
    *added = 1;
    return 0;
}

static int touch(pg_store *s, apr_int64_t id, apr_int64_t seen,
                 sm_apply_stats *stats)
{
    params ps = { .n = 0 };

    p_i64(&ps, id);
    p_i64(&ps, seen);
    stats->touched++;
    return run(s, "cannot refresh a URL", "UPDATE sitemap_urls SET"
               " last_seen = $2 WHERE id = $1 AND last_seen < $2", &ps,
               NULL);
}

/* As in sm_store_sqlite.c: inserted first, read only when stored. */
static int record(pg_store *s, const sm_change *c, sm_tx_site *ts,
                  sm_apply_stats *stats)
{
    apr_int64_t seen = apr_time_sec(c->seen);
    apr_int64_t lastmod = c->last_modified ? apr_time_sec(c->last_modified)
                                           : seen;
    params ps = { .n = 0 };
    PGresult *res;
    int added = 0;

    if (c->op == SM_CHANGE_RECORD) {
        if (add_url(s, c, ts, lastmod, seen, &added) != 0)
            return -1;
        if (added) {
            stats->added++;
            return 0;
        }
    }
    p_i64(&ps, ts->row.id);
    p_str(&ps, c->url);
    if (!(res = q(s, "cannot read a URL", "SELECT id, lastmod, etag, page"
                  " FROM sitemap_urls WHERE site_id = $1 AND url = $2",
                  &ps)))
        return -1;
    if (PQntuples(res) == 1) {
        apr_int64_t id = i64(res, 0, 0), old_lastmod = i64(res, 0, 1);
        apr_int64_t page = i64(res, 0, 3), new_lastmod;
        int changes = sm_tx_url_changes(c, old_lastmod, PQgetisnull(res, 0, 2)
                                        ? NULL : PQgetvalue(res, 0, 2),
                                        &new_lastmod);
        params up = { .n = 0 };

        PQclear(res);
        if (c->op == SM_CHANGE_SEED || !changes)
            return touch(s, id, seen, stats);
        p_i64(&up, id);
        p_i64(&up, new_lastmod);
        p_str(&up, c->etag);
        p_i64(&up, seen);
        stats->updated++;
        if (run(s, "cannot update a URL", "UPDATE sitemap_urls SET"
                " lastmod = $2, etag = $3, last_seen = greatest(last_seen,"
                " $4) WHERE id = $1", &up, NULL) != 0)
            return -1;
        if (new_lastmod != old_lastmod)
            sm_tx_count(&s->tx, ts, page, 0, 0, new_lastmod);
        return 0;
    }
    PQclear(res);
    if (c->op == SM_CHANGE_SEED
        && add_url(s, c, ts, lastmod, seen, &added) != 0)
        return -1;
    if (added)
        stats->added++;
    else
        stats->refused_full++;
    return 0;
}

/* Count what a DELETE ... RETURNING page, xml_len removed. */
static int delete_rows(pg_store *s, sm_tx_site *ts, const char *what,
                       const char *sql, const params *ps, int *removed)
{
    PGresult *res = q(s, what, sql, ps);
    int i;

    if (!res)
        return -1;
    for (i = 0; i < PQntuples(res); i++) {
        sm_tx_count(&s->tx, ts, i64(res, i, 0), -1, i64(res, i, 1),
                    s->tx.now);
        (*removed)++;
    }
    PQclear(res);
    return 0;
}

static int forget(pg_store *s, const sm_change *c, sm_tx_site *ts,
                  sm_apply_stats *stats)
{
    params ps = { .n = 0 };

    p_i64(&ps, ts->row.id);
    p_str(&ps, c->url);
    return delete_rows(s, ts, "cannot remove a URL", "DELETE FROM"
                       " sitemap_urls WHERE site_id = $1 AND url = $2"
                       " RETURNING page, xml_len", &ps, &stats->removed);
}

static apr_status_t pg_apply(sm_store *st, const sm_change *changes, int n,
                             sm_apply_stats *stats)
{
    pg_store *s = (pg_store *)st;
    int i;

    memset(stats, 0, sizeof(*stats));
    if (s->readonly) {
        apr_cpystrn(st->errmsg, "the store is open read-only",
                    sizeof(st->errmsg));
        return APR_EGENERAL;
    }
    if (tx_start(s) != 0
        || tx_lock_sites(s, &changes->site, sizeof(*changes), n) != 0)
        goto fail;
    for (i = 0; i < n; i++) {
        const sm_change *c = &changes[i];
        sm_tx_site *ts = sm_tx_site_find(&s->tx, c->site->base);
        if ((c->op == SM_CHANGE_FORGET ? forget(s, c, ts, stats)
                                       : record(s, c, ts, stats)) != 0)
            goto fail;
    }
    if (tx_commit(s) != 0)
        goto fail;
    return APR_SUCCESS;

fail:
    tx_rollback(s);
    memset(stats, 0, sizeof(*stats));
    return APR_EGENERAL;
}

#define EXPIRE_CHUNK 20000

static apr_status_t pg_expire(sm_store *st, const sm_site_conf *site,
                              apr_time_t now, apr_interval_time_t every,
                              int *removed)
{
    pg_store *s = (pg_store *)st;
    apr_int64_t now_s = apr_time_sec(now);
    apr_int64_t before = now_s - apr_time_sec(site->expire);
    apr_int64_t lo, end;
    site_row row;
    int found = 0;

    *removed = 0;
    if (site->expire <= 0)
        return APR_SUCCESS;
    if (connection(s) != 0 || site_find(s, site->base, 0, &row, &found) != 0)
        return APR_EGENERAL;
    if (!found)
        return APR_SUCCESS;
    /* One server a period walks the site: concurrent claims wait for each
     * other's row lock, and only the first finds the old time. */
    if (every > 0) {
        params ps = { .n = 0 };
        apr_int64_t claimed = 0;
        PGresult *res;
        p_i64(&ps, row.id);
        p_i64(&ps, now_s);
        p_i64(&ps, now_s - apr_time_sec(every));
        if (begin(s, "", NULL) != 0
            || run(s, "cannot claim the expiry run", "UPDATE sitemap_sites"
                   " SET expiry_claimed = $2 WHERE id = $1"
                   " AND expiry_claimed <= $3", &ps, &claimed) != 0
            || !(res = exec(s, "cannot claim the expiry run", "COMMIT"))) {
            rollback(s);
            return APR_EGENERAL;
        }
        PQclear(res);
        if (claimed == 0)
            return APR_SUCCESS;
    }
    end = row.next_id;
    for (lo = SITE_FIRST_ID(row.id); lo < end; lo += EXPIRE_CHUNK) {
        params ps = { .n = 0 };
        sm_tx_site *ts;

        if (tx_start(s) != 0 || tx_lock_sites(s, &site, sizeof(site), 1) != 0)
            goto fail;
        ts = sm_tx_site_find(&s->tx, site->base);
        p_i64(&ps, lo);
        p_i64(&ps, lo + EXPIRE_CHUNK < end ? lo + EXPIRE_CHUNK : end);
        p_i64(&ps, before);
        if (delete_rows(s, ts, "cannot expire old URLs", "DELETE FROM"
                        " sitemap_urls WHERE id >= $1 AND id < $2"
                        " AND last_seen < $3 RETURNING page, xml_len", &ps,
                        removed) != 0
            || tx_commit(s) != 0)
            goto fail;
    }
    return APR_SUCCESS;

fail:
    tx_rollback(s);
    return APR_EGENERAL;
}

static apr_status_t pg_sync_sites(sm_store *st,
                                  const sm_site_conf *const *sites, int n)
{
    pg_store *s = (pg_store *)st;

    if (tx_start(s) != 0 || tx_lock_sites(s, sites, sizeof(*sites), n) != 0
        || tx_commit(s) != 0) {
        tx_rollback(s);
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

/* Broken connections are made again on use. */
static int pg_is_current(sm_store *st)
{
    (void)st;
    return 1;
}

static void pg_close(sm_store *st)
{
    pg_store *s = (pg_store *)st;

    if (s->conn) {
        PQfinish(s->conn);
        s->conn = NULL;
    }
}

static apr_status_t store_cleanup(void *data)
{
    pg_close(data);
    return APR_SUCCESS;
}

/* ---- reading ------------------------------------------------------------ */

static apr_status_t pg_read_begin(sm_store *st)
{
    pg_store *s = (pg_store *)st;

    if (connection(s) != 0
        || begin(s, "ISOLATION LEVEL REPEATABLE READ READ ONLY", NULL) != 0)
        return APR_EGENERAL;
    return APR_SUCCESS;
}

static void pg_read_end(sm_store *st)
{
    rollback((pg_store *)st);
}

static apr_status_t pg_site_info(sm_store *st, apr_pool_t *p,
                                 const char *base, apr_int64_t page,
                                 sm_site_info *out)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    PGresult *res;
    apr_int64_t site_id;
    int i;

    memset(out, 0, sizeof(*out));
    out->pages = apr_array_make(p, 4, sizeof(sm_page_info));
    p_str(&ps, base);
    if (!(res = q(s, "cannot read the site", "SELECT m.value, s.id,"
                  " s.index_changed, s.settings_changed, s.settings"
                  " FROM sitemap_meta m LEFT JOIN sitemap_sites s"
                  " ON s.base = $1 WHERE m.key = 'store_id'", &ps)))
        return APR_EGENERAL;
    if (PQntuples(res) != 1) {
        PQclear(res);
        apr_cpystrn(st->errmsg, "cannot read the store id",
                    sizeof(st->errmsg));
        return APR_EGENERAL;
    }
    out->store_id = apr_pstrdup(p, PQgetvalue(res, 0, 0));
    if (PQgetisnull(res, 0, 1)) {
        PQclear(res);
        return APR_SUCCESS;
    }
    out->known = 1;
    site_id = i64(res, 0, 1);
    out->index_changed = apr_time_from_sec(i64(res, 0, 2));
    out->settings_changed = apr_time_from_sec(i64(res, 0, 3));
    out->settings = apr_pstrdup(p, PQgetvalue(res, 0, 4));
    PQclear(res);

    ps.n = 0;
    p_i64(&ps, site_id);
    p_i64(&ps, page);
    if (!(res = q(s, "cannot read the pages", "SELECT page, url_count,"
                  " version, lastmod, changed FROM sitemap_pages"
                  " WHERE site_id = $1 AND url_count > 0"
                  " AND ($2 = 0 OR page = $2) ORDER BY page", &ps)))
        return APR_EGENERAL;
    for (i = 0; i < PQntuples(res); i++) {
        sm_page_info *pi = apr_array_push(out->pages);
        pi->page = i64(res, i, 0);
        pi->url_count = i64(res, i, 1);
        pi->version = i64(res, i, 2);
        pi->lastmod = apr_time_from_sec(i64(res, i, 3));
        pi->changed = apr_time_from_sec(i64(res, i, 4));
    }
    PQclear(res);
    return APR_SUCCESS;
}

typedef apr_status_t row_fn(void *baton, const PGresult *row);

/* Run a query row by row (libpq's single-row mode): memory stays that of
 * one row whatever the number of rows. */
static apr_status_t stream(pg_store *s, const char *what, const char *sql,
                           const params *ps, row_fn *fn, void *baton)
{
    apr_status_t rv = APR_SUCCESS;
    int failed = 0;
    PGresult *res;

    if (!PQsendQueryParams(s->conn, sql, ps->n, NULL, ps->v, NULL, NULL, 0)
        || !PQsetSingleRowMode(s->conn)) {
        set_error(s, what, NULL);
        return APR_EGENERAL;
    }
    /* Every result is read, also after fn stops the walk. */
    while ((res = PQgetResult(s->conn)) != NULL) {
        ExecStatusType st = PQresultStatus(res);
        if (st == PGRES_SINGLE_TUPLE) {
            if (rv == APR_SUCCESS)
                rv = fn(baton, res);
        }
        else if (st != PGRES_TUPLES_OK && !failed) {
            set_error(s, what, res);
            failed = 1;
        }
        PQclear(res);
    }
    if (failed && rv == APR_SUCCESS)
        rv = APR_EGENERAL;
    return rv;
}

/* The ids of page $2 of site $1 (by base), as in sm_store_sqlite.c. */
#define PAGE_IDS \
    "(SELECT p.first_id AS lo, coalesce((SELECT n.first_id FROM" \
    "   sitemap_pages n WHERE n.site_id = p.site_id AND n.page > p.page" \
    "   ORDER BY n.page LIMIT 1), (s.id + 1) << " SITE_ID_SHIFT_SQL ") AS hi" \
    " FROM sitemap_sites s JOIN sitemap_pages p ON p.site_id = s.id" \
    " WHERE s.base = $1 AND p.page = $2)"

typedef struct {
    sm_url_fn *url_fn;
    sm_url_row_fn *row_fn;
    void *baton;
} walk;

static apr_status_t page_url(void *baton, const PGresult *res)
{
    walk *w = baton;
    return w->url_fn(w->baton, PQgetvalue(res, 0, 0),
                     apr_time_from_sec(i64(res, 0, 1)));
}

static apr_status_t pg_page_urls(sm_store *st, const char *base,
                                 apr_int64_t page, sm_url_fn *fn,
                                 void *baton)
{
    params ps = { .n = 0 };
    walk w = { fn, NULL, baton };

    p_str(&ps, base);
    p_i64(&ps, page);
    return stream((pg_store *)st, "cannot read the page's URLs",
                  "SELECT u.url, u.lastmod FROM " PAGE_IDS " r,"
                  " sitemap_urls u WHERE u.id >= r.lo AND u.id < r.hi"
                  " ORDER BY u.id", &ps, page_url, &w);
}

/* ---- administration (sitemapctl) --------------------------------------- */

static apr_status_t pg_site_row(sm_store *st, apr_pool_t *p,
                                const char *base, sm_site_row *out)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    PGresult *res;

    memset(out, 0, sizeof(*out));
    out->settings = "";
    if (connection(s) != 0)
        return APR_EGENERAL;
    p_str(&ps, base);
    if (!(res = q(s, "cannot read the site", "SELECT url_count, last_page,"
                  " page_size, settings FROM sitemap_sites WHERE base = $1",
                  &ps)))
        return APR_EGENERAL;
    if (PQntuples(res) == 1) {
        out->known = 1;
        out->url_count = i64(res, 0, 0);
        out->last_page = i64(res, 0, 1);
        out->page_size = (int)i64(res, 0, 2);
        out->settings = apr_pstrdup(p, PQgetvalue(res, 0, 3));
    }
    PQclear(res);
    return APR_SUCCESS;
}

static apr_time_t opt_time(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? 0
           : apr_time_from_sec(i64(res, row, col));
}

static apr_status_t pg_site_stats(sm_store *st, apr_pool_t *p,
                                  const char *base, apr_array_header_t **out)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    PGresult *res;
    int i;

    *out = apr_array_make(p, 4, sizeof(sm_site_stats));
    if (connection(s) != 0)
        return APR_EGENERAL;
    p_str(&ps, base);
    if (!(res = q(s, "cannot read the sites", "SELECT s.base, s.url_count,"
                  " s.last_page, s.page_size, (SELECT count(*) FROM"
                  " sitemap_pages p WHERE p.site_id = s.id"
                  " AND p.url_count > 0), u.*"
                  " FROM sitemap_sites s, LATERAL (SELECT max(lastmod),"
                  " min(lastmod), max(last_seen), min(last_seen)"
                  " FROM sitemap_urls WHERE id >= s.id << "
                  SITE_ID_SHIFT_SQL " AND id < (s.id + 1) << "
                  SITE_ID_SHIFT_SQL ") u"
                  " WHERE $1::text IS NULL OR s.base = $1 ORDER BY s.base"
                  " COLLATE \"C\"", &ps)))
        return APR_EGENERAL;
    for (i = 0; i < PQntuples(res); i++) {
        sm_site_stats *ss = apr_array_push(*out);
        memset(ss, 0, sizeof(*ss));
        ss->base = apr_pstrdup(p, PQgetvalue(res, i, 0));
        ss->url_count = i64(res, i, 1);
        ss->last_page = i64(res, i, 2);
        ss->page_size = (int)i64(res, i, 3);
        ss->pages = i64(res, i, 4);
        ss->lastmod_newest = opt_time(res, i, 5);
        ss->lastmod_oldest = opt_time(res, i, 6);
        ss->seen_newest = opt_time(res, i, 7);
        ss->seen_oldest = opt_time(res, i, 8);
    }
    PQclear(res);
    return APR_SUCCESS;
}

static apr_status_t url_row(void *baton, const PGresult *res)
{
    walk *w = baton;
    return w->row_fn(w->baton, PQgetvalue(res, 0, 0), i64(res, 0, 1),
                     apr_time_from_sec(i64(res, 0, 2)),
                     apr_time_from_sec(i64(res, 0, 3)));
}

static apr_status_t pg_url_rows(sm_store *st, const char *base,
                                apr_int64_t page, sm_url_row_fn *fn,
                                void *baton)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    walk w = { NULL, fn, baton };

    if (PQtransactionStatus(s->conn) == PQTRANS_IDLE && connection(s) != 0)
        return APR_EGENERAL;
    p_str(&ps, base);
    if (page) {
        p_i64(&ps, page);
        return stream(s, "cannot read the site's URLs", "SELECT u.url,"
                      " u.page, u.lastmod, u.last_seen FROM " PAGE_IDS " r,"
                      " sitemap_urls u WHERE u.id >= r.lo AND u.id < r.hi"
                      " ORDER BY u.id", &ps, url_row, &w);
    }
    return stream(s, "cannot read the site's URLs", "SELECT u.url, u.page,"
                  " u.lastmod, u.last_seen FROM sitemap_sites s, sitemap_urls"
                  " u WHERE s.base = $1 AND u.id >= s.id << "
                  SITE_ID_SHIFT_SQL " AND u.id < (s.id + 1) << "
                  SITE_ID_SHIFT_SQL " ORDER BY u.id", &ps, url_row, &w);
}

static int read_about(pg_store *s, apr_pool_t *p, sm_store_about *out)
{
    PGresult *res;
    int i;

    memset(out, 0, sizeof(*out));
    if (!(res = q(s, "cannot read the store's meta data", "SELECT key, value"
                  " FROM sitemap_meta", NULL)))
        return -1;
    for (i = 0; i < PQntuples(res); i++) {
        const char *k = PQgetvalue(res, i, 0), *v = PQgetvalue(res, i, 1);
        if (strcmp(k, "store_id") == 0)
            out->store_id = apr_pstrdup(p, v);
        else if (strcmp(k, "created") == 0)
            out->created = apr_time_from_sec(apr_atoi64(v));
        else if (strcmp(k, "schema_version") == 0)
            out->schema_version = atoi(v);
    }
    PQclear(res);
    if (!(res = q(s, "cannot read the tables' sizes", "SELECT"
                  " sum(pg_total_relation_size(c))::bigint FROM"
                  " unnest(ARRAY['sitemap_meta', 'sitemap_sites',"
                  " 'sitemap_urls', 'sitemap_pages']::regclass[]) c", NULL)))
        return -1;
    out->db_bytes = i64(res, 0, 0);
    PQclear(res);
    return 0;
}

static apr_status_t pg_about(sm_store *st, apr_pool_t *p, sm_store_about *out)
{
    pg_store *s = (pg_store *)st;
    return connection(s) == 0 && read_about(s, p, out) == 0
           ? APR_SUCCESS : APR_EGENERAL;
}

static const sm_store_ops pg_ops = {
    "postgresql", pg_apply, pg_expire, pg_is_current, pg_close,
    pg_read_begin, pg_read_end, pg_site_info, pg_page_urls,
    pg_site_row, pg_site_stats, pg_url_rows, pg_about, pg_sync_sites
};

/* ---- opening ------------------------------------------------------------- */

/* The schema's version; 0 when its tables are not there. */
static int schema_version(pg_store *s, int *version)
{
    PGresult *res = q(s, "cannot read the schema version", "SELECT"
                      " to_regclass('sitemap_meta') IS NULL", NULL);
    int missing;

    /* (asked first: a query naming a missing table fails as a whole) */
    if (!res)
        return -1;
    missing = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    *version = 0;
    if (missing)
        return 0;
    if (!(res = q(s, "cannot read the schema version", "SELECT value FROM"
                  " sitemap_meta WHERE key = 'schema_version'", NULL)))
        return -1;
    if (PQntuples(res) == 1)
        *version = atoi(PQgetvalue(res, 0, 0));
    PQclear(res);
    return 0;
}

static int migrate(pg_store *s, int create)
{
    PGresult *res;
    int version;

    if (schema_version(s, &version) != 0)
        return -1;
    if (version == SM_PG_SCHEMA_VERSION)
        return 0;
    if (version > SM_PG_SCHEMA_VERSION) {
        apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg), "schema version "
                     "%d is newer than this mod_sitemap understands (%d)",
                     version, SM_PG_SCHEMA_VERSION);
        return -1;
    }
    if (!create) {
        apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg), version
                     ? "schema version %d needs an upgrade to %d; let the "
                       "module or a sitemapctl command that writes open it"
                     : "not a mod_sitemap store yet (no table sitemap_meta; "
                       "the module creates the tables on first use)",
                     version, SM_PG_SCHEMA_VERSION);
        return -1;
    }
    /* One server at a time: a lock for the transaction (pooler-safe). */
    if (begin(s, "", NULL) != 0)
        return -1;
    if (!(res = exec(s, "cannot lock the schema", "SELECT pg_advisory_xact_lock"
                     "(" SCHEMA_LOCK_KEY ")")))
        goto fail;
    PQclear(res);
    if (schema_version(s, &version) != 0)
        goto fail;
    for (; version < SM_PG_SCHEMA_VERSION; version++) {
        char sql[96];
        if (!(res = exec(s, "cannot create the schema",
                         schema_steps[version])))
            goto denied;
        PQclear(res);
        apr_snprintf(sql, sizeof(sql), "UPDATE sitemap_meta SET value = '%d'"
                     " WHERE key = 'schema_version'", version + 1);
        if (!(res = exec(s, "cannot set the schema version", sql)))
            goto fail;
        PQclear(res);
    }
    if (!(res = exec(s, "cannot commit the schema", "COMMIT")))
        goto fail;
    PQclear(res);
    return 0;

denied:
    /* Say what to do when the role may not create tables. */
    if (strstr(s->base.errmsg, "permission denied")) {
        apr_size_t len = strlen(s->base.errmsg);
        apr_snprintf(s->base.errmsg + len, sizeof(s->base.errmsg) - len,
                     " (the role needs CREATE on the schema once, or the "
                     "tables created by their owner: see the README, "
                     "\"PostgreSQL\")");
    }
fail:
    rollback(s);
    return -1;
}

int sm_store_is_pg(const char *where)
{
    return where && (strncmp(where, "postgresql://", 13) == 0
                     || strncmp(where, "postgres://", 11) == 0);
}

const char *sm_store_pg_uri_check(apr_pool_t *p, const char *uri)
{
    char *err = NULL;
    PQconninfoOption *opts = PQconninfoParse(uri, &err);
    const char *why;
    apr_size_t len;

    if (opts) {
        PQconninfoFree(opts);
        return NULL;
    }
    why = apr_pstrdup(p, err ? err : "out of memory");
    PQfreemem(err);
    len = strlen(why);
    while (len && why[len - 1] == '\n')
        len--;
    why = apr_pstrmemdup(p, why, len);
    /* libpq quotes the token it rejects, which may be the password. */
    if (strcmp(sm_uri_mask(p, uri), uri) != 0 && strchr(why, '"'))
        why = apr_pstrcat(p, apr_pstrmemdup(p, why, (apr_size_t)
                                            (strchr(why, '"') - why)),
                          "(the value is not shown: the URI holds a "
                          "password)", NULL);
    return why;
}

static PGconn *connect_to(const char *uri, int lock_timeout_ms)
{
    /* Defaults the URI may override (it is expanded last): bounded waits
     * for connecting and for a peer that vanished mid-query. */
    const char *keys[] = {
        "connect_timeout", "keepalives_idle", "keepalives_interval",
        "keepalives_count", "tcp_user_timeout", "fallback_application_name",
        "client_encoding", "dbname", NULL
    };
    const char *vals[] = {
        "5", "10", "5", "3", "30000", "mod_sitemap", "UTF8", uri, NULL
    };
    (void)lock_timeout_ms;
    return PQconnectdbParams(keys, vals, 1);
}

apr_status_t sm_store_open_pg(sm_store **out, apr_pool_t *p, const char *uri,
                              int flags, int busy_timeout_ms,
                              const sm_logger *log, char *errmsg,
                              apr_size_t errlen)
{
    pg_store *s = apr_pcalloc(p, sizeof(*s));

    *out = NULL;
    s->base.ops = &pg_ops;
    s->base.path = sm_uri_mask(p, uri);
    s->base.pool = p;
    s->base.log = log;
    s->uri = apr_pstrdup(p, uri);
    s->readonly = (flags & SM_STORE_READONLY) != 0;
    s->lock_timeout_ms = busy_timeout_ms > 0 ? busy_timeout_ms : 1000;
    if (apr_pool_create(&s->tx.pool, p) != APR_SUCCESS)
        return APR_ENOMEM;
    s->conn = connect_to(uri, s->lock_timeout_ms);
    apr_pool_cleanup_register(p, s, store_cleanup, apr_pool_cleanup_null);
    if (!s->conn || PQstatus(s->conn) != CONNECTION_OK) {
        set_error(s, "cannot connect", NULL);
        goto fail;
    }
    if (migrate(s, (flags & SM_STORE_CREATE) && !s->readonly) != 0)
        goto fail;
    *out = &s->base;
    return APR_SUCCESS;

fail:
    if (errmsg)
        apr_cpystrn(errmsg, s->base.errmsg, errlen);
    pg_close(&s->base);
    return APR_EGENERAL;
}

/* ---- check ---------------------------------------------------------------- */

static const struct {
    const char *sql, *what;
} consistency[] = {
    { "SELECT count(*) FROM (SELECT site_id, page, count(*) AS n,"
      " sum(xml_len) AS b FROM sitemap_urls GROUP BY site_id, page) u"
      " LEFT JOIN sitemap_pages p ON p.site_id = u.site_id"
      " AND p.page = u.page WHERE p.url_count IS DISTINCT FROM u.n"
      " OR p.xml_bytes IS DISTINCT FROM u.b",
      "page summaries disagree with their URLs" },
    { "SELECT count(*) FROM sitemap_pages p LEFT JOIN"
      " (SELECT DISTINCT site_id, page FROM sitemap_urls) u"
      " ON u.site_id = p.site_id AND u.page = p.page"
      " WHERE p.url_count <> 0 AND u.page IS NULL",
      "page summaries count URLs that are not there" },
    { "WITH r AS (SELECT site_id, page, first_id AS lo, coalesce(lead(first_id)"
      "  OVER (PARTITION BY site_id ORDER BY page),"
      "  (SELECT next_id FROM sitemap_sites s WHERE s.id = p.site_id)) AS hi"
      "  FROM sitemap_pages p)"
      " SELECT count(*) FROM sitemap_urls u LEFT JOIN r"
      " ON r.site_id = u.site_id AND r.page = u.page"
      " WHERE r.lo IS NULL OR u.id < r.lo OR u.id >= r.hi"
      " OR (u.id >> " SITE_ID_SHIFT_SQL ") <> u.site_id",
      "URLs are outside their page's range of ids" },
    { "SELECT count(*) FROM sitemap_sites s WHERE s.next_id <= (SELECT"
      " coalesce(max(id), s.id << " SITE_ID_SHIFT_SQL ") FROM sitemap_urls"
      " WHERE id >= s.id << " SITE_ID_SHIFT_SQL
      " AND id < (s.id + 1) << " SITE_ID_SHIFT_SQL ")",
      "sites' next ids are not past their URLs" },
    { "SELECT count(*) FROM sitemap_sites s WHERE s.url_count <>"
      " (SELECT count(*) FROM sitemap_urls u WHERE u.site_id = s.id)",
      "sites' URL counts disagree with their URLs" },
    { "SELECT count(*) FROM sitemap_urls u JOIN sitemap_sites s"
      " ON s.id = u.site_id WHERE u.page < 1 OR u.page > s.last_page",
      "URLs are on pages outside their site's range" },
    /* What the module's role must be allowed to do. */
    { "SELECT count(*) FROM unnest(ARRAY['sitemap_meta', 'sitemap_sites',"
      " 'sitemap_urls', 'sitemap_pages']) t WHERE NOT has_table_privilege(t,"
      " 'SELECT, INSERT, UPDATE, DELETE')",
      "this role may not read and write all of the tables (see the README, "
      "\"PostgreSQL\", for the grants)" },
};

apr_status_t sm_store_check_pg(apr_pool_t *p, const char *uri,
                               int busy_timeout_ms,
                               apr_array_header_t *problems,
                               sm_store_about *about, char *errmsg,
                               apr_size_t errlen)
{
    pg_store *s = apr_pcalloc(p, sizeof(*s));
    sm_store_about local;
    PGresult *res;
    int version = 0;
    apr_size_t i;

    if (!about)
        about = &local;
    memset(about, 0, sizeof(*about));
    s->base.ops = &pg_ops;
    s->base.pool = p;
    s->lock_timeout_ms = busy_timeout_ms > 0 ? busy_timeout_ms : 1000;
    s->conn = connect_to(uri, s->lock_timeout_ms);
    if (!s->conn || PQstatus(s->conn) != CONNECTION_OK) {
        set_error(s, "cannot connect", NULL);
        if (errmsg)
            apr_cpystrn(errmsg, s->base.errmsg, errlen);
        pg_close(&s->base);
        return APR_EGENERAL;
    }
    if (begin(s, "ISOLATION LEVEL REPEATABLE READ READ ONLY", NULL) != 0
        || schema_version(s, &version) != 0) {
        APR_ARRAY_PUSH(problems, const char *) =
            apr_pstrdup(p, s->base.errmsg);
        goto out;
    }
    about->schema_version = version;
    if (version == 0) {
        res = q(s, "", "SELECT has_schema_privilege(current_schema(),"
                " 'CREATE')", NULL);
        APR_ARRAY_PUSH(problems, const char *) = res
            && strcmp(PQgetvalue(res, 0, 0), "t") == 0
            ? "not a mod_sitemap store yet: no table sitemap_meta (the "
              "module creates the tables on first use)"
            : "not a mod_sitemap store yet: no table sitemap_meta, and this "
              "role may not create tables (see the README, \"PostgreSQL\")";
        PQclear(res);
        goto out;
    }
    if (version != SM_PG_SCHEMA_VERSION) {
        APR_ARRAY_PUSH(problems, const char *) =
            apr_psprintf(p, "schema version %d: this sitemapctl knows %d",
                         version, SM_PG_SCHEMA_VERSION);
        goto out;
    }
    if (read_about(s, p, about) != 0) {
        APR_ARRAY_PUSH(problems, const char *) =
            apr_pstrdup(p, s->base.errmsg);
        goto out;
    }
    for (i = 0; i < sizeof(consistency) / sizeof(consistency[0]); i++) {
        apr_int64_t bad;
        if (!(res = q(s, "", consistency[i].sql, NULL))) {
            APR_ARRAY_PUSH(problems, const char *) =
                apr_psprintf(p, "cannot check whether %s%s",
                             consistency[i].what, s->base.errmsg);
            /* A failed statement ends the transaction: go on in another. */
            rollback(s);
            if (begin(s, "ISOLATION LEVEL REPEATABLE READ READ ONLY",
                      NULL) != 0)
                goto out;
            continue;
        }
        bad = i64(res, 0, 0);
        PQclear(res);
        if (bad > 0)
            APR_ARRAY_PUSH(problems, const char *) =
                apr_psprintf(p, "%s (%" APR_INT64_T_FMT " rows)",
                             consistency[i].what, bad);
    }

out:
    rollback(s);
    pg_close(&s->base);
    return APR_SUCCESS;
}
