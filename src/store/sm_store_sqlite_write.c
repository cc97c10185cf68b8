/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_write.c: writing to the SQLite store (see
 * sm_store_sqlite.h): sites' rows, URLs recorded and forgotten.
 *
 * Every write goes through sm_sqlite_apply or sm_sqlite_expire
 * (sm_store_sqlite_expire.c), which keep
 * the page and site summaries (counts, bytes, lastmods, versions) in
 * memory for the transaction and write each touched summary row once
 * before COMMIT: per-row triggers cost more than half of a new URL's time
 * (schema 1 had them). */
#include "store/sm_store_sqlite.h"
#include "store/sm_store_sqlite_indexnow.h"

#include <apr_hash.h>
#include <apr_strings.h>
#include <sqlite3.h>
#include <string.h>

typedef sm_tx_row site_row;

static int keep_settings(sqlite_store *s, const sm_site_conf *site,
                         sqlite3_int64 id);

/* A site added by a schema-2 writer after the upgrade (see schema step 3)
 * has next_id 0: its next id is past its URLs, if any. */
static int next_id_repair(sqlite_store *s, site_row *row)
{
    sqlite3_stmt *q;
    int rc = sqlite3_prepare_v2(s->db, "SELECT max(id) FROM urls"
                                " WHERE id >= ?1 AND id < ?2", -1, &q, NULL);

    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, SITE_FIRST_ID(row->id));
        sqlite3_bind_int64(q, 2, SITE_FIRST_ID(row->id + 1));
        if ((rc = sqlite3_step(q)) == SQLITE_ROW) {
            row->next_id = sqlite3_column_type(q, 0) == SQLITE_NULL
                         ? SITE_FIRST_ID(row->id) + 1
                         : sqlite3_column_int64(q, 0) + 1;
            rc = SQLITE_OK;
        }
        sqlite3_finalize(q);
    }
    if (rc != SQLITE_OK)
        sm_sqlite_set_error(&s->base, "cannot read the site's ids", s->db);
    return rc;
}

/* The site's row, without adding it; SQLITE_DONE when there is none. */
static int site_find(sqlite_store *s, const char *base, site_row *row)
{
    sqlite3_stmt *q = sm_sqlite_stmt(s, STMT_SITE_GET);
    int rc;

    if (!q)
        return SQLITE_ERROR;
    sm_sqlite_text(q, 1, base);
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        row->id = sqlite3_column_int64(q, 0);
        row->last_page = sqlite3_column_int64(q, 1);
        row->url_count = sqlite3_column_int64(q, 2);
        row->next_id = sqlite3_column_int64(q, 3);
    }
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (rc == SQLITE_ROW)
        return row->next_id > SITE_FIRST_ID(row->id) ? SQLITE_OK
                                                     : next_id_repair(s, row);
    if (rc != SQLITE_DONE)
        sm_sqlite_set_error(&s->base, "cannot read the site", s->db);
    return rc;
}

static int site_get(sqlite_store *s, const sm_site_conf *site, site_row *row)
{
    sqlite3_stmt *q;
    int rc, attempt;

    for (attempt = 0; attempt < 2; attempt++) {
        if ((rc = site_find(s, site->base, row)) == SQLITE_OK)
            return site->settings ? keep_settings(s, site, row->id)
                                  : SQLITE_OK;
        if (rc != SQLITE_DONE)
            return rc;
        if (!(q = sm_sqlite_stmt(s, STMT_SITE_ADD)))
            return SQLITE_ERROR;
        sm_sqlite_text(q, 1, site->base);
        sqlite3_bind_int(q, 2, site->page_size);
        sqlite3_bind_int64(q, 3, SITE_ID_MAX);
        if ((rc = sm_sqlite_run(s, q, "cannot add the site")) != SQLITE_OK)
            return rc;
        if (sqlite3_changes(s->db) == 0) {
            apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                         "cannot add the site: the store has used all "
                         "%" APR_INT64_T_FMT " site ids",
                         (apr_int64_t)SITE_ID_MAX);
            return SQLITE_FULL;
        }
    }
    return SQLITE_ERROR;
}

/* Keep site->settings (and the page size it goes with) in the site's row,
 * so that sitemapctl can reproduce the site's sitemap.  Runs inside the
 * caller's write transaction; the comparison with the row is made once per
 * connection and site (and again after a rollback). */
static int keep_settings(sqlite_store *s, const sm_site_conf *site,
                         sqlite3_int64 id)
{
    const char *kept;
    sqlite3_stmt *q;
    int rc, same;

    if (!s->settings_kept)
        s->settings_kept = apr_hash_make(s->base.pool);
    kept = apr_hash_get(s->settings_kept, site->base, APR_HASH_KEY_STRING);
    if (kept && strcmp(kept, site->settings) == 0)
        return SQLITE_OK;
    if (!(q = sm_sqlite_stmt(s, STMT_SITE_SETTINGS)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, id);
    rc = sqlite3_step(q);
    same = rc == SQLITE_ROW
           && sqlite3_column_int64(q, 1) == site->page_size
           && sqlite3_column_text(q, 0)
           && strcmp((const char *)sqlite3_column_text(q, 0),
                     site->settings) == 0;
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        sm_sqlite_set_error(&s->base,
                            "cannot read the site's settings", s->db);
        return rc;
    }
    if (!same) {
        if (!(q = sm_sqlite_stmt(s, STMT_SITE_SET_SETTINGS)))
            return SQLITE_ERROR;
        sqlite3_bind_int64(q, 1, id);
        sm_sqlite_text(q, 2, site->settings);
        sqlite3_bind_int(q, 3, site->page_size);
        if ((rc = sm_sqlite_run(s, q, "cannot keep the site's settings")) != SQLITE_OK)
            return rc;
    }
    apr_hash_set(s->settings_kept, apr_pstrdup(s->base.pool, site->base),
                 APR_HASH_KEY_STRING, apr_pstrdup(s->base.pool,
                                                  site->settings));
    return SQLITE_OK;
}

/* ---- the transaction's summaries ------------------------------------------
 *
 * What a write transaction does to its sites and pages is added up in
 * s->tx (sm_store_tx.h) and written by tx_write_summaries just before
 * COMMIT: one row per touched page and site, however many URLs the
 * transaction changed. */

typedef struct {
    sqlite3_int64 url_count, xml_bytes, lastmod;
} page_row;

/* The site's row, read (or added) once per transaction. */
static int tx_site_get(sqlite_store *s, const sm_site_conf *site,
                       sm_tx_site **out)
{
    site_row row;
    int rc;

    *out = sm_tx_site_find(&s->tx, site->base);
    if (*out)
        return SQLITE_OK;
    if ((rc = site_get(s, site, &row)) != SQLITE_OK)
        return rc;
    *out = sm_tx_site_add(&s->tx, site->base, &row);
    (*out)->conf = site;
    (*out)->in_pending = -1;
    return SQLITE_OK;
}

/* The page's committed summary; a page without a row is empty. */
static int read_page(sqlite_store *s, sqlite3_int64 site_id,
                     sqlite3_int64 page, page_row *out)
{
    sqlite3_stmt *q = sm_sqlite_stmt(s, STMT_PAGE_GET);
    int rc;

    memset(out, 0, sizeof(*out));
    if (!q)
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, site_id);
    sqlite3_bind_int64(q, 2, page);
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        out->url_count = sqlite3_column_int64(q, 0);
        out->xml_bytes = sqlite3_column_int64(q, 1);
        out->lastmod = sqlite3_column_int64(q, 2);
    }
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        sm_sqlite_set_error(&s->base, "cannot read the page summary", s->db);
        return rc;
    }
    return SQLITE_OK;
}

/* The transaction's removals added to today's count (the status page's
 * chart), days older than SM_REMOVED_DAYS dropped. */
static int count_removed(sqlite_store *s, const sm_tx_site *ts)
{
    apr_int64_t today = s->tx.now / 86400;
    sqlite3_stmt *q;
    int rc;

    if (!(q = sm_sqlite_stmt(s, STMT_REMOVED_ADD)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, ts->row.id);
    sqlite3_bind_int64(q, 2, today);
    sqlite3_bind_int64(q, 3, ts->removed);
    if ((rc = sm_sqlite_run(s, q, "cannot count removed URLs")) != SQLITE_OK
        || !(q = sm_sqlite_stmt(s, STMT_REMOVED_PRUNE)))
        return rc != SQLITE_OK ? rc : SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, ts->row.id);
    sqlite3_bind_int64(q, 2, today - SM_REMOVED_DAYS);
    return sm_sqlite_run(s, q, "cannot count removed URLs");
}

static int tx_write_summaries(sqlite_store *s)
{
    apr_hash_index_t *hi;
    sqlite3_stmt *q;
    int rc;

    for (hi = apr_hash_first(s->tx.pool, s->tx.pages); hi;
         hi = apr_hash_next(hi)) {
        sm_tx_page *tp = apr_hash_this_val(hi);
        page_row old;
        apr_int64_t count, lastmod;

        if ((rc = read_page(s, tp->key[0], tp->key[1], &old)) != SQLITE_OK)
            return rc;
        sm_tx_page_summary(tp, old.url_count, old.lastmod, &count, &lastmod);
        if (!(q = sm_sqlite_stmt(s, STMT_PAGE_PUT)))
            return SQLITE_ERROR;
        sqlite3_bind_int64(q, 1, tp->key[0]);
        sqlite3_bind_int64(q, 2, tp->key[1]);
        sqlite3_bind_int64(q, 3, count);
        sqlite3_bind_int64(q, 4, old.xml_bytes + tp->bytes_delta);
        sqlite3_bind_int64(q, 5, lastmod);
        sqlite3_bind_int64(q, 6, s->tx.now);
        /* Used only by a page's first row: the id of its first URL (or,
         * for a page without URLs, where the site's next ones start). */
        sqlite3_bind_int64(q, 7, tp->first_id ? tp->first_id
                                              : tp->site->row.next_id);
        sqlite3_bind_int64(q, 8, sm_tx_page_oldest(&s->tx, tp));
        if ((rc = sm_sqlite_run(s, q, "cannot write a page summary")) != SQLITE_OK)
            return rc;
    }
    for (hi = apr_hash_first(s->tx.pool, s->tx.sites); hi;
         hi = apr_hash_next(hi)) {
        sm_tx_site *ts = apr_hash_this_val(hi);

        if (!sm_tx_site_changed(ts))
            continue;
        if (!(q = sm_sqlite_stmt(s, STMT_SITE_SUMMARY)))
            return SQLITE_ERROR;
        sqlite3_bind_int64(q, 1, ts->row.id);
        sqlite3_bind_int64(q, 2, ts->url_delta);
        sqlite3_bind_int(q, 3, ts->index_changed);
        sqlite3_bind_int64(q, 4, s->tx.now);
        sqlite3_bind_int64(q, 5, ts->row.last_page);
        sqlite3_bind_int64(q, 6, ts->row.next_id);
        if ((rc = sm_sqlite_run(s, q, "cannot write the site summary")) != SQLITE_OK)
            return rc;
        if (ts->removed && (rc = count_removed(s, ts)) != SQLITE_OK)
            return rc;
    }
    return SQLITE_OK;
}

/* Start a write transaction; tx_commit or tx_rollback ends it. */
static int tx_start(sqlite_store *s)
{
    sm_tx_begin(&s->tx, apr_time_sec(apr_time_now()));
    return sm_sqlite_exec(s, "cannot start a transaction", "BEGIN IMMEDIATE");
}

static int tx_commit(sqlite_store *s)
{
    int rc;

    if ((rc = tx_write_summaries(s)) == SQLITE_OK)
        rc = sm_sqlite_exec(s, "cannot commit", "COMMIT");
    sm_tx_end(&s->tx);
    return rc;
}

static void tx_rollback(sqlite_store *s)
{
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    sm_tx_end(&s->tx);
    /* What keep_settings wrote is gone with the transaction. */
    if (s->settings_kept)
        apr_hash_clear(s->settings_kept);
}

/* ---- writing -------------------------------------------------------------- */

static int touch(sqlite_store *s, sqlite3_int64 id, sqlite3_int64 seen,
                 sm_apply_stats *stats)
{
    sqlite3_stmt *q = sm_sqlite_stmt(s, STMT_URL_TOUCH);

    if (!q)
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, id);
    sqlite3_bind_int64(q, 2, seen);
    stats->touched++;
    return sm_sqlite_run(s, q, "cannot refresh a URL");
}

/* The site's last page's count and bytes known to the transaction
 * (ts->last_known), read once. */
int sm_sqlite_last_page_known(sqlite_store *s, sm_tx_site *ts)
{
    page_row pr;
    int rc;

    if (ts->last_known)
        return SQLITE_OK;
    if ((rc = read_page(s, ts->row.id, ts->row.last_page, &pr)) != SQLITE_OK)
        return rc;
    sm_tx_last_page(&s->tx, ts, pr.url_count, pr.xml_bytes);
    return SQLITE_OK;
}

/* Add c's URL unless the site is full or the URL is stored: *added says
 * whether it went in. */
static int add_url(sqlite_store *s, const sm_change *c, sm_tx_site *ts,
                   sqlite3_int64 lastmod, sqlite3_int64 seen, int *added)
{
    apr_int64_t entry = sm_tx_entry_bytes(c), page, held;
    sqlite3_int64 id = ts->row.next_id;
    sqlite3_stmt *q;
    int rc;

    *added = 0;
    if (c->site->max_urls > 0 && ts->row.url_count >= c->site->max_urls)
        return SQLITE_OK;
    /* 2^40 ids a site: refused as full, never reached in practice. */
    if (id >= SITE_FIRST_ID(ts->row.id + 1))
        return SQLITE_OK;
    if ((rc = sm_sqlite_last_page_known(s, ts)) != SQLITE_OK)
        return rc;
    page = sm_tx_choose_page(c->site, ts, entry);
    if (!(q = sm_sqlite_stmt(s, STMT_URL_ADD)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, ts->row.id);
    sm_sqlite_text(q, 2, c->url);
    sqlite3_bind_int64(q, 3, page);
    sqlite3_bind_int64(q, 4, lastmod);
    sm_sqlite_text(q, 5, c->etag);
    sqlite3_bind_int64(q, 6, seen);
    sqlite3_bind_int64(q, 7, entry);
    sqlite3_bind_int64(q, 8, id);
    sm_sqlite_text(q, 9, SM_TX_TITLE(c));
    sm_sqlite_text(q, 10, SM_TX_ALTERNATES(c));
    sqlite3_bind_int64(q, 11, held = sm_tx_held_new(c));
    /* (the news sitemap's: written with the row, so that
     * sm_sqlite_news_put finds it unchanged and writes nothing) */
    sm_sqlite_text(q, 12, c->description && *c->description
                          ? c->description : NULL);
    sqlite3_bind_int64(q, 13, c->published > 0 ? apr_time_sec(c->published)
                                               : 0);
    if ((rc = sm_sqlite_run(s, q, "cannot add a URL")) != SQLITE_OK
        || sqlite3_changes(s->db) == 0)
        return rc;
    sm_tx_added(&s->tx, ts, page, id, entry, lastmod);
    sm_tx_seen(&s->tx, ts, page, seen);
    *added = 1;
    /* Held: submitted once corroborated (sm_store_tx.h). */
    if (held) {
        s->tx.held = 1;
        return SQLITE_OK;
    }
    return sm_sqlite_indexnow_note(s, ts, c->url);
}

/* A stored URL's title (STMT_URL_TITLE: the HTML site map shows it) or
 * alternates (STMT_URL_ALTERNATES: its <url> holds them) changed: its
 * page's version moves, as the page's validators follow it. */
static int set_shown(sqlite_store *s, sm_tx_site *ts, sqlite3_int64 id,
                     sqlite3_int64 page, int which, const char *value)
{
    sqlite3_stmt *q = sm_sqlite_stmt(s, which);

    if (!q)
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, id);
    sm_sqlite_text(q, 2, value);
    sm_tx_count(&s->tx, ts, page, 0, 0, 0);
    return sm_sqlite_run(s, q, which == STMT_URL_TITLE
                     ? "cannot update a URL's title"
                     : "cannot update a URL's alternates");
}

static int forget(sqlite_store *s, const sm_change *c, sm_apply_stats *stats);

/* A RECORD of a held URL (*held non-zero): corroborated, it is held no
 * more and goes on IndexNow's list now, once (*held 0); otherwise it
 * stays held (s->tx.held). */
static int vouch(sqlite_store *s, const sm_change *c, sm_tx_site *ts,
                 sqlite3_int64 id, sqlite3_int64 *held)
{
    sqlite3_stmt *q;
    int rc;

    if (!sm_tx_corroborates(c, *held)) {
        s->tx.held = c->op == SM_CHANGE_RECORD;
        return SQLITE_OK;
    }
    if (!(q = sm_sqlite_stmt(s, STMT_URL_VOUCH)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, id);
    if ((rc = sm_sqlite_run(s, q, "cannot mark a URL corroborated"))
        != SQLITE_OK)
        return rc;
    *held = 0;
    return sm_sqlite_indexnow_note(s, ts, c->url);
}

/* Is c->same_as stored with c's ETag (the same content)?  Then c is that
 * page again under the script's path info (sm_change.same_as). */
static int same_page_stored(sqlite_store *s, const sm_change *c,
                            sm_tx_site *ts, int *same)
{
    sqlite3_stmt *q;
    int rc;

    *same = 0;
    if (!(q = sm_sqlite_stmt(s, STMT_URL_GET)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, ts->row.id);
    sm_sqlite_text(q, 2, c->same_as);
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        const char *etag = (const char *)sqlite3_column_text(q, 2);
        *same = etag && strcmp(sm_etag_opaque(etag),
                               sm_etag_opaque(c->etag)) == 0;
        sqlite3_reset(q);
        sqlite3_clear_bindings(q);
        return SQLITE_OK;
    }
    return sm_sqlite_finish(s, q, rc, "cannot read a URL");
}

/* A URL served (RECORD) or learned (SEED).  What the module records is
 * most often new: it is inserted first, and read only when already there. */
static int record(sqlite_store *s, const sm_change *c, sm_apply_stats *stats)
{
    sqlite3_int64 seen = apr_time_sec(c->seen);
    sqlite3_int64 lastmod = c->last_modified ? apr_time_sec(c->last_modified)
                                             : seen;
    sqlite3_stmt *q;
    sm_tx_site *ts;
    int rc, added = 0;

    if ((rc = tx_site_get(s, c->site, &ts)) != SQLITE_OK)
        return rc;
    if (c->op == SM_CHANGE_RECORD && c->same_as && c->etag) {
        int same;
        if ((rc = same_page_stored(s, c, ts, &same)) != SQLITE_OK)
            return rc;
        if (same)
            return forget(s, c, stats);
    }
    if (c->op == SM_CHANGE_RECORD) {
        if ((rc = add_url(s, c, ts, lastmod, seen, &added)) != SQLITE_OK)
            return rc;
        if (added) {
            stats->added++;
            return sm_sqlite_copies_leave(s, c, ts->row.id, stats);
        }
    }
    if (!(q = sm_sqlite_stmt(s, STMT_URL_GET)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, ts->row.id);
    sm_sqlite_text(q, 2, c->url);
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        sqlite3_int64 id = sqlite3_column_int64(q, 0);
        sqlite3_int64 old_lastmod = sqlite3_column_int64(q, 1);
        sqlite3_int64 page = sqlite3_column_int64(q, 3);
        apr_int64_t new_lastmod;
        int changes = sm_tx_url_changes(c, old_lastmod, (const char *)
                                        sqlite3_column_text(q, 2),
                                        &new_lastmod);
        int retitled = sm_tx_title_changes(c, (const char *)
                                           sqlite3_column_text(q, 4));
        int realternated = sm_tx_alternates_change(c, (const char *)
                                                   sqlite3_column_text(q, 5));
        sqlite3_int64 held = sqlite3_column_int64(q, 6);
        sqlite3_reset(q);
        sqlite3_clear_bindings(q);

        if (held && (rc = vouch(s, c, ts, id, &held)) != SQLITE_OK)
            return rc;

        if (retitled && (rc = set_shown(s, ts, id, page, STMT_URL_TITLE,
                                        SM_TX_TITLE(c))) != SQLITE_OK)
            return rc;
        if (realternated
            && (rc = set_shown(s, ts, id, page, STMT_URL_ALTERNATES,
                               SM_TX_ALTERNATES(c))) != SQLITE_OK)
            return rc;

        /* Learned from a log or an admin: what is stored stays, only
         * last_seen moves. */
        if (c->op == SM_CHANGE_SEED || !changes)
            return touch(s, id, seen, stats);
        if (!(q = sm_sqlite_stmt(s, STMT_URL_CHANGE)))
            return SQLITE_ERROR;
        sqlite3_bind_int64(q, 1, id);
        sqlite3_bind_int64(q, 2, new_lastmod);
        sm_sqlite_text(q, 3, c->etag);
        sqlite3_bind_int64(q, 4, seen);
        stats->updated++;
        if ((rc = sm_sqlite_run(s, q, "cannot update a URL")) == SQLITE_OK
            && new_lastmod != old_lastmod) {
            sm_tx_count(&s->tx, ts, page, 0, 0, new_lastmod);
            if (!held)
                rc = sm_sqlite_indexnow_note(s, ts, c->url);
        }
        return rc;
    }
    if ((rc = sm_sqlite_finish(s, q, rc, "cannot read a URL")) != SQLITE_OK)
        return rc;
    /* Not stored: a seed goes in now; a record was refused for room. */
    if (c->op == SM_CHANGE_SEED
        && (rc = add_url(s, c, ts, lastmod, seen, &added)) != SQLITE_OK)
        return rc;
    if (added)
        stats->added++;
    else
        stats->refused_full++;
    return SQLITE_OK;
}

/* Step a DELETE ... RETURNING page, xml_len to its end, counting what
 * left which page. */
static int delete_rows(sqlite_store *s, sqlite3_stmt *q, sm_tx_site *ts,
                       const char *what, int *removed)
{
    int rc;

    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int in_rc;
        sm_tx_count(&s->tx, ts, sqlite3_column_int64(q, 0), -1,
                    sqlite3_column_int64(q, 1), s->tx.now);
        (*removed)++;
        /* A held URL was never submitted: its removal is not either. */
        if (sqlite3_column_int64(q, 3) == 0
            && (in_rc = sm_sqlite_indexnow_note(s, ts, (const char *)
                                      sqlite3_column_text(q, 2)))
               != SQLITE_OK) {
            sqlite3_reset(q);
            sqlite3_clear_bindings(q);
            return in_rc;
        }
    }
    return sm_sqlite_finish(s, q, rc, what);
}

/* A forget with a why keeps its verdict: "removed" when it removed. */
static int forget(sqlite_store *s, const sm_change *c, sm_apply_stats *stats)
{
    sqlite3_stmt *q;
    sm_tx_site *ts;
    int rc, before = stats->removed;

    if ((rc = tx_site_get(s, c->site, &ts)) != SQLITE_OK)
        return rc;
    if (!(q = sm_sqlite_stmt(s, STMT_URL_DEL)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, ts->row.id);
    sm_sqlite_text(q, 2, c->url);
    if ((rc = delete_rows(s, q, ts, "cannot remove a URL", &stats->removed))
        != SQLITE_OK || !c->why)
        return rc;
    return sm_sqlite_verdict_put(s, ts->row.id, c, stats->removed > before);
}

/* A response left out: only its verdict is kept. */
static int note(sqlite_store *s, const sm_change *c)
{
    sm_tx_site *ts;
    int rc;

    if ((rc = tx_site_get(s, c->site, &ts)) != SQLITE_OK)
        return rc;
    return sm_sqlite_verdict_put(s, ts->row.id, c, 0);
}

/* A crawler's verified fetch: only its coverage is counted. */
static int crawl(sqlite_store *s, const sm_change *c)
{
    sm_tx_site *ts;
    int rc;

    if ((rc = tx_site_get(s, c->site, &ts)) != SQLITE_OK)
        return rc;
    return sm_sqlite_crawl_put(s, ts->row.id, c);
}

/* A page's images (SitemapImages): a RECORD's head images, an image
 * fetched for a page or gone. */
static int images(sqlite_store *s, const sm_change *c)
{
    sm_tx_site *ts;
    int rc;

    if ((rc = tx_site_get(s, c->site, &ts)) != SQLITE_OK)
        return rc;
    return sm_sqlite_images_put(s, ts, c);
}

/* A record's description and publication time, once it is stored. */
static int news(sqlite_store *s, const sm_change *c)
{
    sm_tx_site *ts;
    int rc;

    if ((rc = tx_site_get(s, c->site, &ts)) != SQLITE_OK)
        return rc;
    return sm_sqlite_news_put(s, ts, c);
}

/* The site's robots.txt: kept when it differs (its row made first). */
static int robots(sqlite_store *s, const sm_change *c)
{
    sm_tx_site *ts;
    int rc;

    if ((rc = tx_site_get(s, c->site, &ts)) != SQLITE_OK)
        return rc;
    return sm_sqlite_robots_put(s, c);
}

/* One change and what follows it (a record's images and news), in the
 * order the changes came; i: its index in the write's list. */
int sm_sqlite_apply_one(sqlite_store *s, const sm_change *c, int i,
                        sm_apply_stats *stats)
{
    int added = stats->added, removed = stats->removed, rc;

    rc = c->op == SM_CHANGE_FORGET ? forget(s, c, stats)
       : c->op == SM_CHANGE_NOTE ? note(s, c)
       : c->op == SM_CHANGE_CRAWL ? crawl(s, c)
       : c->op == SM_CHANGE_ROBOTS ? robots(s, c)
       : c->op >= SM_CHANGE_IMAGE ? images(s, c)
       : record(s, c, stats);
    if (rc == SQLITE_OK && c->op == SM_CHANGE_RECORD && c->images)
        rc = images(s, c);
    /* (a URL just added has them from its INSERT) */
    if (rc == SQLITE_OK && c->op == SM_CHANGE_RECORD && c->description
        && stats->added == added)
        rc = news(s, c);
    if (rc == SQLITE_OK) {
        sm_tx_held_count(&s->tx, &s->base, stats, i);
        sm_tx_removed_mark(&s->base, stats, removed, i);
    }
    return rc;
}

apr_status_t sm_sqlite_apply(sm_store *st, const sm_change *changes, int n,
                             sm_apply_stats *stats)
{
    sqlite_store *s = (sqlite_store *)st;
    int i, rc, done;

    memset(stats, 0, sizeof(*stats));
    if ((rc = tx_start(s)) != SQLITE_OK) {
        sm_tx_end(&s->tx);
        return sm_sqlite_status(rc);
    }
    s->runs_from = 0;
    for (i = 0; i < n; i += done) {
        /* New URLs several to a statement (sm_store_sqlite_batch.c); done
         * 0 when changes[i] does not start such a run. */
        if ((rc = sm_sqlite_add_run(s, changes, n, i, stats, &done))
            != SQLITE_OK)
            goto fail;
        if (!done) {
            if ((rc = sm_sqlite_apply_one(s, &changes[i], i, stats))
                != SQLITE_OK)
                goto fail;
            done = 1;
        }
    }
    if ((rc = tx_commit(s)) != SQLITE_OK)
        goto fail;
    return APR_SUCCESS;

fail:
    tx_rollback(s);
    s->tx.held = 0;
    memset(stats, 0, sizeof(*stats));
    return APR_EGENERAL;
}

apr_status_t sm_sqlite_sync_sites(sm_store *st,
                                  const sm_site_conf *const *sites, int n)
{
    sqlite_store *s = (sqlite_store *)st;
    site_row row;
    int i, rc;

    /* IMMEDIATE: a deferred transaction that reads first gets SQLITE_BUSY
     * at once, without the busy timeout, when another process writes. */
    if ((rc = sm_sqlite_exec(s, "cannot start a transaction",
                             "BEGIN IMMEDIATE")) != SQLITE_OK)
        return APR_EGENERAL;
    for (i = 0; i < n; i++) {
        if ((rc = site_get(s, sites[i], &row)) != SQLITE_OK) {
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
            if (s->settings_kept)
                apr_hash_clear(s->settings_kept);
            return APR_EGENERAL;
        }
    }
    if (sm_sqlite_exec(s, "cannot commit", "COMMIT") != SQLITE_OK) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        if (s->settings_kept)
            apr_hash_clear(s->settings_kept);
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

int sm_sqlite_forget(sqlite_store *s, const sm_change *c,
                     sm_apply_stats *stats)
{
    return forget(s, c, stats);
}

/* For expiry (sm_store_sqlite_expire.c): the transaction and its
 * summaries as the writer keeps them. */
int sm_sqlite_tx_start(sqlite_store *s)
{
    return tx_start(s);
}

int sm_sqlite_tx_commit(sqlite_store *s)
{
    return tx_commit(s);
}

void sm_sqlite_tx_rollback(sqlite_store *s)
{
    tx_rollback(s);
}

int sm_sqlite_tx_site(sqlite_store *s, const sm_site_conf *site,
                      sm_tx_site **out)
{
    return tx_site_get(s, site, out);
}

int sm_sqlite_site_find(sqlite_store *s, const char *base, sm_tx_row *row)
{
    return site_find(s, base, row);
}

int sm_sqlite_delete_rows(sqlite_store *s, sqlite3_stmt *q, sm_tx_site *ts,
                          const char *what, int *removed)
{
    return delete_rows(s, q, ts, what, removed);
}
