/* SPDX-License-Identifier: Apache-2.0 */
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
#include "store/sm_store_pg.h"

#include <stdlib.h>
#include <string.h>

/* ---- sites and their settings ------------------------------------------ */

typedef sm_tx_row site_row;

int sm_pg_site_find(pg_store *s, const char *base, int lock, site_row *row,
                     int *found)
{
    params ps = { .n = 0 };
    PGresult *res;

    p_str(&ps, base);
    res = sm_pg_q(s, "cannot read the site", lock
                  ? "SELECT id, last_page, url_count, next_id"
                    " FROM sitemap_sites WHERE base = $1 FOR UPDATE"
                  : "SELECT id, last_page, url_count, next_id"
                    " FROM sitemap_sites WHERE base = $1", &ps);
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
    if (!(res = sm_pg_q(s, "cannot read the site's settings",
                        "SELECT settings,"
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
        if (sm_pg_run(s, "cannot keep the site's settings",
                      "UPDATE sitemap_sites"
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

        if (sm_pg_site_find(s, site->base, 1, row, &found) != 0)
            return -1;
        if (found)
            return site->settings ? keep_settings(s, site, row->id) : 0;
        /* Two servers adding the site at once: the second waits for the
         * first's row and adds nothing (a sequence number is lost). */
        p_str(&ps, site->base);
        p_i64(&ps, site->page_size);
        if (sm_pg_run(s, "cannot add the site",
                      "INSERT INTO sitemap_sites(id, base, page_size, next_id)"
                      " SELECT n, $1, $2, (n <<"
                      " " SITE_ID_SHIFT_SQL ") + 1 FROM"
                      " (SELECT nextval('sitemap_site_ids') AS n) i"
                      " ON CONFLICT (base) DO NOTHING", &ps, &added) != 0)
            return -1;
    }
    apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                 "cannot add the site %s", site->base);
    return -1;
}

/* ---- the transaction's summaries (sm_store_tx.h) ---------------------- */

/* The transaction's removals added to today's count (the status page's
 * chart), days older than SM_REMOVED_DAYS dropped. */
static int count_removed(pg_store *s, const sm_tx_site *ts)
{
    params ps = { .n = 0 };

    p_i64(&ps, ts->row.id);
    p_i64(&ps, s->tx.now / 86400);
    p_i64(&ps, ts->removed);
    if (sm_pg_run(s, "cannot count removed URLs",
                  "INSERT INTO sitemap_removed_days(site_id, day, n)"
                  " VALUES ($1, $2, $3) ON CONFLICT (site_id, day) DO UPDATE"
                  " SET n = sitemap_removed_days.n + excluded.n", &ps,
                  NULL) != 0)
        return -1;
    ps.n = 1;
    p_i64(&ps, s->tx.now / 86400 - SM_REMOVED_DAYS);
    return sm_pg_run(s, "cannot count removed URLs", "DELETE FROM"
                     " sitemap_removed_days WHERE site_id = $1 AND day < $2",
                     &ps, NULL);
}

static int compare_sites(const void *a, const void *b)
{
    return strcmp((*(const sm_site_conf *const *)a)->base,
                  (*(const sm_site_conf *const *)b)->base);
}

/* Begin a write transaction: tx_lock_sites, then tx_commit or
 * tx_rollback. */
int sm_pg_tx_start(pg_store *s)
{
    apr_int64_t now;

    if (sm_pg_start(s, "", &now) != 0)
        return -1;
    sm_tx_begin(&s->tx, now);
    return 0;
}

/* Lock the rows of the sites of n changes (or of n sites: stride is the
 * size of an element, whose first member points to the site), in base
 * order: two writers never hold one each and wait for the other's. */
int sm_pg_tx_lock_sites(pg_store *s, const void *elts, apr_size_t stride,
                         int n)
{
    const sm_site_conf **sites = apr_palloc(s->tx.pool, sizeof(*sites)
                                            * (n ? (apr_size_t)n : 1));
    sm_tx_site *ts;
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
        ts = sm_tx_site_add(&s->tx, sites[i]->base, &row);
        ts->conf = sites[i];
        ts->in_pending = -1;
    }
    return 0;
}

void sm_pg_tx_rollback(pg_store *s)
{
    sm_pg_rollback(s);
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
    if (!(res = sm_pg_q(s, "cannot read the page summary", "SELECT url_count,"
                        " xml_bytes, lastmod FROM sitemap_pages WHERE site_id"
                        " = $1"
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

int sm_pg_tx_commit(pg_store *s)
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
        p_i64(&ps, sm_tx_page_oldest(&s->tx, tp));
        if (sm_pg_run(s, "cannot write a page summary",
                      "INSERT INTO sitemap_pages(site_id, page, url_count,"
                      " xml_bytes, lastmod, changed, version, first_id,"
                      " oldest_seen)"
                      " VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8)"
                      " ON CONFLICT (site_id, page) DO UPDATE SET"
                      " url_count = excluded.url_count,"
                      " xml_bytes = excluded.xml_bytes,"
                      " lastmod = excluded.lastmod, changed ="
                      " excluded.changed,"
                      " version = sitemap_pages.version + 1,"
                      " oldest_seen = LEAST(sitemap_pages.oldest_seen,"
                      " excluded.oldest_seen)", &ps, NULL) != 0)
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
        if (sm_pg_run(s, "cannot write the site summary",
                      "UPDATE sitemap_sites"
                      " SET url_count = url_count + $2, last_page = $4,"
                      " next_id = $5, index_changed = CASE WHEN $3 >= 0 THEN"
                      " $3"
                      " ELSE index_changed END WHERE id = $1", &ps, NULL) != 0)
            return -1;
        if (ts->removed && count_removed(s, ts) != 0)
            return -1;
    }
    if (!(res = sm_pg_exec(s, "cannot commit", "COMMIT")))
        return -1;
    PQclear(res);
    sm_tx_end(&s->tx);
    return 0;
}

/* ---- writing --------------------------------------------------------- */

/* A URL's title (alternates 0) or alternates (1). */
static int set_shown(pg_store *s, apr_int64_t id, int alternates,
                     const char *value)
{
    params ps = { .n = 0 };

    p_i64(&ps, id);
    p_str(&ps, value);
    return alternates
           ? sm_pg_run(s, "cannot set a URL's alternates", "UPDATE"
                       " sitemap_urls SET alternates = $2 WHERE id = $1",
                       &ps, NULL)
           : sm_pg_run(s, "cannot set a URL's title", "UPDATE sitemap_urls"
                       " SET title = $2 WHERE id = $1", &ps, NULL);
}

int sm_pg_plan_url(pg_store *s, const sm_change *c, sm_tx_site *ts,
                   apr_int64_t *page, apr_int64_t *id, apr_int64_t *entry)
{
    *entry = sm_tx_entry_bytes(c);
    *id = ts->row.next_id;
    if (c->site->max_urls > 0 && ts->row.url_count >= c->site->max_urls)
        return 0;
    if (*id >= SITE_FIRST_ID(ts->row.id + 1))
        return 0;
    if (!ts->last_known) {
        page_row pr;
        if (read_page(s, ts->row.id, ts->row.last_page, &pr) != 0)
            return -1;
        sm_tx_last_page(&s->tx, ts, pr.url_count, pr.xml_bytes);
    }
    *page = sm_tx_choose_page(c->site, ts, *entry);
    return 1;
}

static int add_url(pg_store *s, const sm_change *c, sm_tx_site *ts,
                   apr_int64_t lastmod, apr_int64_t seen, int *added)
{
    apr_int64_t entry, page, id, held = sm_tx_held_new(c);
    apr_int64_t n = 0;
    params ps = { .n = 0 };
    int rc;

    *added = 0;
    if ((rc = sm_pg_plan_url(s, c, ts, &page, &id, &entry)) <= 0)
        return rc;
    p_i64(&ps, ts->row.id);
    p_str(&ps, c->url);
    p_i64(&ps, page);
    p_i64(&ps, lastmod);
    p_str(&ps, c->etag);
    p_i64(&ps, seen);
    p_i64(&ps, entry);
    p_i64(&ps, id);
    p_i64(&ps, held);
    /* (nine parameters at most: the title and the alternates are set by
     * more statements when there are some) */
    if (sm_pg_run(s, "cannot add a URL",
                  "INSERT INTO sitemap_urls(id, site_id, url, page, lastmod,"
                  " etag, first_seen, last_seen, xml_len, held)"
                  " VALUES ($8, $1, $2, $3, $4, $5, $6, $6, $7, $9)"
                  " ON CONFLICT (site_id, url) DO NOTHING", &ps, &n) != 0)
        return -1;
    if (n == 0)
        return 0;
    sm_tx_added(&s->tx, ts, page, id, entry, lastmod);
    sm_tx_seen(&s->tx, ts, page, seen);
    *added = 1;
    if (SM_TX_TITLE(c) && set_shown(s, id, 0, SM_TX_TITLE(c)) != 0)
        return -1;
    if (SM_TX_ALTERNATES(c)
        && set_shown(s, id, 1, SM_TX_ALTERNATES(c)) != 0)
        return -1;
    if (held) {
        s->tx.held = 1;
        return 0;
    }
    return sm_pg_indexnow_note(s, ts, c->url);
}

static int touch(pg_store *s, apr_int64_t id, apr_int64_t seen,
                 sm_apply_stats *stats)
{
    params ps = { .n = 0 };

    p_i64(&ps, id);
    p_i64(&ps, seen);
    stats->touched++;
    return sm_pg_run(s, "cannot refresh a URL", "UPDATE sitemap_urls SET"
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
    if (!(res = sm_pg_q(s, "cannot read a URL",
                        "SELECT id, lastmod, etag, page, title, alternates,"
                        " held FROM sitemap_urls"
                        " WHERE site_id = $1 AND url = $2",
                        &ps)))
        return -1;
    if (PQntuples(res) == 1) {
        apr_int64_t id = i64(res, 0, 0), old_lastmod = i64(res, 0, 1);
        apr_int64_t page = i64(res, 0, 3), new_lastmod;
        apr_int64_t held = i64(res, 0, 6);
        int changes = sm_tx_url_changes(c, old_lastmod, PQgetisnull(res, 0, 2)
                                        ? NULL : PQgetvalue(res, 0, 2),
                                        &new_lastmod);
        int retitled = sm_tx_title_changes(c, PQgetisnull(res, 0, 4) ? NULL
                                           : PQgetvalue(res, 0, 4));
        int realternated = sm_tx_alternates_change(c, PQgetisnull(res, 0, 5)
                                                   ? NULL
                                                   : PQgetvalue(res, 0, 5));
        params up = { .n = 0 };

        PQclear(res);
        if (held && sm_pg_indexnow_vouch(s, c, ts, id, &held) != 0)
            return -1;
        /* A title shown by the HTML site map moved: so does the page's
         * version, which its validators follow. */
        if (retitled) {
            if (set_shown(s, id, 0, SM_TX_TITLE(c)) != 0)
                return -1;
            sm_tx_count(&s->tx, ts, page, 0, 0, 0);
        }
        /* Alternates are in the page's document: likewise. */
        if (realternated) {
            if (set_shown(s, id, 1, SM_TX_ALTERNATES(c)) != 0)
                return -1;
            sm_tx_count(&s->tx, ts, page, 0, 0, 0);
        }
        if (c->op == SM_CHANGE_SEED || !changes)
            return touch(s, id, seen, stats);
        p_i64(&up, id);
        p_i64(&up, new_lastmod);
        p_str(&up, c->etag);
        p_i64(&up, seen);
        stats->updated++;
        if (sm_pg_run(s, "cannot update a URL", "UPDATE sitemap_urls SET"
                      " lastmod = $2, etag = $3, last_seen ="
                      " greatest(last_seen,"
                      " $4) WHERE id = $1", &up, NULL) != 0)
            return -1;
        if (new_lastmod == old_lastmod)
            return 0;
        sm_tx_count(&s->tx, ts, page, 0, 0, new_lastmod);
        return held ? 0 : sm_pg_indexnow_note(s, ts, c->url);
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

/* Count what a DELETE ... RETURNING page, xml_len, url removed. */
int sm_pg_delete_rows(pg_store *s, sm_tx_site *ts, const char *what,
                       const char *sql, const params *ps, int *removed)
{
    PGresult *res = sm_pg_q(s, what, sql, ps);
    int i;

    if (!res)
        return -1;
    for (i = 0; i < PQntuples(res); i++) {
        sm_tx_count(&s->tx, ts, i64(res, i, 0), -1, i64(res, i, 1),
                    s->tx.now);
        (*removed)++;
        /* A held URL was never submitted: its removal is not either. */
        if (i64(res, i, 3) == 0
            && sm_pg_indexnow_note(s, ts, PQgetvalue(res, i, 2)) != 0) {
            PQclear(res);
            return -1;
        }
    }
    PQclear(res);
    return 0;
}

/* Is c->same_as stored with c's ETag (the same content)?  1: yes, 0: no,
 * -1: the store failed (sm_change.same_as). */
static int same_page_stored(pg_store *s, const sm_change *c, sm_tx_site *ts)
{
    params ps = { .n = 0 };
    PGresult *res;
    int same = 0;

    p_i64(&ps, ts->row.id);
    p_str(&ps, c->same_as);
    if (!(res = sm_pg_q(s, "cannot read a URL", "SELECT etag FROM"
                        " sitemap_urls WHERE site_id = $1 AND url = $2",
                        &ps)))
        return -1;
    if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
        same = strcmp(sm_etag_opaque(PQgetvalue(res, 0, 0)),
                      sm_etag_opaque(c->etag)) == 0;
    PQclear(res);
    return same;
}

/* A forget with a why keeps its verdict: "removed" when it removed. */
static int forget(pg_store *s, const sm_change *c, sm_tx_site *ts,
                  sm_apply_stats *stats)
{
    params ps = { .n = 0 };
    int before = stats->removed;

    p_i64(&ps, ts->row.id);
    p_str(&ps, c->url);
    if (sm_pg_delete_rows(s, ts, "cannot remove a URL", "DELETE FROM"
                    " sitemap_urls WHERE site_id = $1 AND url = $2"
                    " RETURNING page, xml_len, url, held", &ps,
                    &stats->removed)
        != 0)
        return -1;
    return c->why ? sm_pg_verdict_put(s, ts->row.id, c,
                                      stats->removed > before) : 0;
}

/* One change of pg_apply's transaction. */
static int apply_one(pg_store *s, sm_pg_new_rows *nr, const sm_change *c,
                     sm_apply_stats *stats)
{
    sm_tx_site *ts = sm_tx_site_find(&s->tx, c->site->base);
    const char *key = sm_pg_row_key(nr->p, ts, c->url);
    int same = 0;

    if (c->op == SM_CHANGE_NOTE)
        return sm_pg_verdict_put(s, ts->row.id, c, 0);
    if (c->op == SM_CHANGE_ROBOTS)
        return sm_pg_robots_put(s, ts->row.id, c);
    /* After the new rows before it: a page's first fetch is listed. */
    if (c->op == SM_CHANGE_CRAWL)
        return sm_pg_write_new(s, nr) != 0 ? -1
               : sm_pg_crawl_put(s, ts->row.id, c);
    if (c->op >= SM_CHANGE_IMAGE)
        return sm_pg_write_new(s, nr) != 0 ? -1
               : sm_pg_images_put(s, ts, c);
    if (c->op == SM_CHANGE_RECORD && c->same_as && c->etag
        && (same = same_page_stored(s, c, ts)) < 0)
        return -1;
    if (same)
        return sm_pg_write_new(s, nr) != 0 || forget(s, c, ts, stats) != 0
               ? -1 : 0;
    if (c->op != SM_CHANGE_FORGET
        && !apr_hash_get(nr->stored, key, APR_HASH_KEY_STRING)
        && !apr_hash_get(nr->pending, key, APR_HASH_KEY_STRING))
        return sm_pg_queue_new(s, nr, c, ts, key, stats) != 0 ? -1
               : apr_hash_get(nr->pending, key, APR_HASH_KEY_STRING)
                 ? sm_pg_copies_leave(s, nr, c, ts, stats) : 0;
    /* One by one, after the new rows before it. */
    if (sm_pg_write_new(s, nr) != 0
        || (c->op == SM_CHANGE_FORGET ? forget(s, c, ts, stats)
                                      : record(s, c, ts, stats)) != 0)
        return -1;
    return 0;
}

static apr_status_t pg_apply(sm_store *st, const sm_change *changes, int n,
                             sm_apply_stats *stats)
{
    pg_store *s = (pg_store *)st;
    sm_pg_new_rows nr;
    int i;

    memset(stats, 0, sizeof(*stats));
    if (s->readonly) {
        apr_cpystrn(st->errmsg, "the store is open read-only",
                    sizeof(st->errmsg));
        return APR_EGENERAL;
    }
    if (sm_pg_tx_start(s) != 0
        || sm_pg_tx_lock_sites(s, &changes->site, sizeof(*changes), n) != 0)
        goto fail;
    sm_pg_new_rows_init(&nr, s->tx.pool, changes, n);
    if (sm_pg_find_stored(s, &nr, changes, n) != 0)
        goto fail;
    for (i = 0; i < n; i++) {
        int removed = stats->removed;

        if (apply_one(s, &nr, &changes[i], stats) != 0
            || sm_pg_images_after(s, &nr, &changes[i]) != 0)
            goto fail;
        sm_tx_held_count(&s->tx, st, stats, i);
        sm_tx_removed_mark(st, stats, removed, i);
    }
    if (sm_pg_write_new(s, &nr) != 0
        || sm_pg_news_put(s, changes, n, nr.in_row) != 0
        || sm_pg_tx_commit(s) != 0)
        goto fail;
    return APR_SUCCESS;

fail:
    sm_pg_tx_rollback(s);
    s->tx.held = 0;
    memset(stats, 0, sizeof(*stats));
    return APR_EGENERAL;
}

static apr_status_t pg_sync_sites(sm_store *st,
                                  const sm_site_conf *const *sites, int n)
{
    pg_store *s = (pg_store *)st;

    if (sm_pg_tx_start(s) != 0
        || sm_pg_tx_lock_sites(s, sites, sizeof(*sites), n) != 0
        || sm_pg_tx_commit(s) != 0) {
        sm_pg_tx_rollback(s);
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

void sm_pg_close(sm_store *st)
{
    pg_store *s = (pg_store *)st;

    if (s->conn) {
        PQfinish(s->conn);
        s->conn = NULL;
    }
}

static apr_status_t store_cleanup(void *data)
{
    sm_pg_close(data);
    return APR_SUCCESS;
}

static const sm_store_ops pg_ops = {
    "postgresql", pg_apply, sm_pg_expire, pg_is_current, sm_pg_close,
    sm_pg_read_begin, sm_pg_read_end, sm_pg_site_info, sm_pg_page_urls,
    sm_pg_page_titles,
    sm_pg_site_row, sm_pg_site_stats, sm_pg_url_rows, sm_pg_about,
    pg_sync_sites,
    sm_pg_recent,
    sm_pg_indexnow_claim, sm_pg_indexnow_finish, sm_pg_indexnow_queue,
    sm_pg_indexnow_stats, sm_pg_site_list, sm_pg_why, sm_pg_left_out,
    sm_pg_prune_sites, sm_pg_coverage, sm_pg_coverage_urls,
    sm_pg_page_images, sm_pg_crawl_days_note, sm_pg_crawl_days,
    sm_pg_indexnow_stale, sm_pg_news_urls, sm_pg_llms_urls,
    sm_pg_robots_list, sm_pg_robots_body, sm_pg_robots_urls,
    sm_pg_robots_swept
};

/* ---- opening --------------------------------------------------------- */

apr_status_t sm_store_open_pg(sm_store **out, apr_pool_t *p, const char *uri,
                              int flags, int busy_timeout_ms,
                              const sm_logger *log,
                              const volatile int *stopping, char *errmsg,
                              apr_size_t errlen)
{
    pg_store *s = apr_pcalloc(p, sizeof(*s));

    *out = NULL;
    s->base.ops = &pg_ops;
    s->base.path = sm_uri_mask(p, uri);
    s->base.pool = p;
    s->base.log = log;
    /* From the first wait on: connecting and the schema's statements end
     * within the busy timeout of a stop, as later statements do. */
    s->base.stopping = stopping;
    s->uri = apr_pstrdup(p, uri);
    s->readonly = (flags & SM_STORE_READONLY) != 0;
    s->lock_timeout_ms = busy_timeout_ms > 0 ? busy_timeout_ms : 1000;
    if (apr_pool_create(&s->tx.pool, p) != APR_SUCCESS)
        return APR_ENOMEM;
    apr_pool_cleanup_register(p, s, store_cleanup, apr_pool_cleanup_null);
    if (sm_pg_connect(s) != 0)
        goto fail;
    if (sm_pg_migrate(s, (flags & SM_STORE_CREATE) && !s->readonly) != 0)
        goto fail;
    *out = &s->base;
    return APR_SUCCESS;

fail:
    if (errmsg)
        apr_cpystrn(errmsg, s->base.errmsg, errlen);
    sm_pg_close(&s->base);
    return APR_EGENERAL;
}

int sm_pg_forget(pg_store *s, const sm_change *c, sm_tx_site *ts,
                 sm_apply_stats *stats)
{
    return forget(s, c, ts, stats);
}
