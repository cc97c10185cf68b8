/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_indexnow.c: IndexNow's pending list and per-site state in
 * the SQLite store.  The list is written by the store's own transactions
 * (sm_sqlite_indexnow_note, at this file's end, called by the writer in
 * sm_store_sqlite_write.c); the rest of this file is the sender's side:
 * claim a batch under a lease, finish it, and what sitemapctl reads or
 * queues.  These run a few times a minute, so their statements are
 * prepared per call. */
#include "store/sm_store_sqlite.h"
#include "store/sm_store_sqlite_indexnow.h"

#include <apr_strings.h>

const char sm_sqlite_indexnow_tables[] =
    /* queued: when the URL last changed (microseconds); it tells a row a
     * sender claimed from the same URL changed again meanwhile. */
    "CREATE TABLE IF NOT EXISTS indexnow_pending("
    " site TEXT NOT NULL, url TEXT NOT NULL, queued INTEGER NOT NULL,"
    " PRIMARY KEY(site, url)) WITHOUT ROWID;"
    /* Times in microseconds; claimed_until: the lease of the sender that
     * holds the site; next_try: no sending before it (the minimum
     * interval, or a retry's backoff). */
    "CREATE TABLE IF NOT EXISTS indexnow_state("
    " site TEXT PRIMARY KEY,"
    " claimed_until INTEGER NOT NULL DEFAULT 0,"
    " next_try INTEGER NOT NULL DEFAULT 0,"
    " backoff INTEGER NOT NULL DEFAULT 0,"
    " sent INTEGER NOT NULL DEFAULT 0,"
    " dropped INTEGER NOT NULL DEFAULT 0,"
    " overflow INTEGER NOT NULL DEFAULT 0,"
    " overflow_logged INTEGER NOT NULL DEFAULT 0,"
    " last_sent INTEGER NOT NULL DEFAULT 0,"
    " last_status INTEGER NOT NULL DEFAULT 0,"
    " last_reason TEXT NOT NULL DEFAULT '')";

static void fail(sm_store *st, const char *what)
{
    sqlite3 *db = sm_sqlite_handle(st);
    apr_snprintf(st->errmsg, sizeof(st->errmsg), "%s: %s (SQLite error %d)",
                 what, sqlite3_errmsg(db), sqlite3_extended_errcode(db));
}

static int prepare(sm_store *st, const char *sql, sqlite3_stmt **q)
{
    int rc = sqlite3_prepare_v2(sm_sqlite_handle(st), sql, -1, q, NULL);
    if (rc != SQLITE_OK)
        fail(st, "cannot prepare an IndexNow statement");
    return rc;
}

static int exec(sm_store *st, const char *what, const char *sql)
{
    int rc = sqlite3_exec(sm_sqlite_handle(st), sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        fail(st, what);
    return rc;
}

/* Step q to its end (no rows wanted), then finalize it. */
static int run_once(sm_store *st, sqlite3_stmt *q, const char *what)
{
    int rc = sqlite3_step(q);
    if (rc != SQLITE_DONE)
        fail(st, what);
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static apr_status_t rollback(sm_store *st)
{
    sqlite3_exec(sm_sqlite_handle(st), "ROLLBACK", NULL, NULL, NULL);
    return APR_EGENERAL;
}

/* Is the site worth a write transaction: something pending, no lease held,
 * next_try passed?  Read without a lock, so that idle senders in every
 * process never queue for the writers' lock. */
static int claim_worthwhile(sm_store *st, const char *base, apr_time_t now)
{
    sqlite3_stmt *q;
    int rc, yes = 0;

    if (prepare(st, "SELECT EXISTS(SELECT 1 FROM indexnow_pending"
                " WHERE site = ?1) AND coalesce((SELECT claimed_until <= ?2"
                " AND next_try <= ?2 FROM indexnow_state WHERE site = ?1), 1)",
                &q) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(q, 1, base, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 2, now);
    if ((rc = sqlite3_step(q)) == SQLITE_ROW)
        yes = sqlite3_column_int(q, 0);
    else
        fail(st, "cannot read IndexNow's state");
    sqlite3_finalize(q);
    return rc == SQLITE_ROW ? yes : -1;
}

apr_status_t sm_sqlite_indexnow_claim(sm_store *st, apr_pool_t *p,
                                      const char *base, apr_time_t now,
                                      apr_interval_time_t lease,
                                      sm_indexnow_batch *out)
{
    sqlite3_stmt *q;
    int rc, worth;

    memset(out, 0, sizeof(*out));
    out->items = apr_array_make(p, 16, sizeof(sm_indexnow_item));
    if ((worth = claim_worthwhile(st, base, now)) <= 0)
        return worth < 0 ? APR_EGENERAL : APR_SUCCESS;
    if (exec(st, "cannot start an IndexNow claim", "BEGIN IMMEDIATE")
        != SQLITE_OK)
        return APR_EGENERAL;
    if (prepare(st, "INSERT INTO indexnow_state(site) VALUES (?1)"
                " ON CONFLICT(site) DO NOTHING", &q) != SQLITE_OK)
        return rollback(st);
    sqlite3_bind_text(q, 1, base, -1, SQLITE_STATIC);
    if (run_once(st, q, "cannot add IndexNow's state") != SQLITE_OK)
        return rollback(st);
    /* The claim itself: exactly one sender wins it, in any process of any
     * server sharing the file. */
    if (prepare(st, "UPDATE indexnow_state SET claimed_until = ?2"
                " WHERE site = ?1 AND claimed_until <= ?3 AND next_try <= ?3"
                " RETURNING backoff, overflow, overflow_logged", &q)
        != SQLITE_OK)
        return rollback(st);
    sqlite3_bind_text(q, 1, base, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 2, now + lease);
    sqlite3_bind_int64(q, 3, now);
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        out->backoff = sqlite3_column_int64(q, 0);
        out->overflow = sqlite3_column_int64(q, 1);
        out->overflow_logged = sqlite3_column_int64(q, 2);
        rc = sqlite3_step(q);
    }
    else if (rc == SQLITE_DONE) {       /* someone else's */
        sqlite3_finalize(q);
        return exec(st, "cannot end an IndexNow claim", "COMMIT") == SQLITE_OK
               ? APR_SUCCESS : rollback(st);
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) {
        fail(st, "cannot claim IndexNow's pending URLs");
        return rollback(st);
    }
    if (prepare(st, "SELECT url, queued FROM indexnow_pending WHERE site = ?1"
                " ORDER BY queued LIMIT ?2", &q) != SQLITE_OK)
        return rollback(st);
    sqlite3_bind_text(q, 1, base, -1, SQLITE_STATIC);
    sqlite3_bind_int(q, 2, SM_INDEXNOW_BATCH_MAX);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        sm_indexnow_item *it = apr_array_push(out->items);
        it->url = apr_pstrdup(p, (const char *)sqlite3_column_text(q, 0));
        it->queued = sqlite3_column_int64(q, 1);
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) {
        fail(st, "cannot read IndexNow's pending URLs");
        apr_array_clear(out->items);
        return rollback(st);
    }
    if (exec(st, "cannot commit an IndexNow claim", "COMMIT") != SQLITE_OK) {
        apr_array_clear(out->items);
        return rollback(st);
    }
    return APR_SUCCESS;
}

apr_status_t sm_sqlite_indexnow_finish(sm_store *st, const char *base,
                                       const sm_indexnow_batch *batch,
                                       const sm_indexnow_result *result)
{
    int done = result->outcome != SM_INDEXNOW_RETRY;
    int n = batch->items->nelts, i;
    sqlite3_stmt *q;

    if (exec(st, "cannot start an IndexNow update", "BEGIN IMMEDIATE")
        != SQLITE_OK)
        return APR_EGENERAL;
    if (done) {
        /* A row whose queued moved was changed again: it stays pending. */
        if (prepare(st, "DELETE FROM indexnow_pending WHERE site = ?1"
                    " AND url = ?2 AND queued = ?3", &q) != SQLITE_OK)
            return rollback(st);
        for (i = 0; i < n; i++) {
            const sm_indexnow_item *it =
                &APR_ARRAY_IDX(batch->items, i, sm_indexnow_item);
            sqlite3_bind_text(q, 1, base, -1, SQLITE_STATIC);
            sqlite3_bind_text(q, 2, it->url, -1, SQLITE_STATIC);
            sqlite3_bind_int64(q, 3, it->queued);
            if (sqlite3_step(q) != SQLITE_DONE) {
                fail(st, "cannot remove sent IndexNow URLs");
                sqlite3_finalize(q);
                return rollback(st);
            }
            sqlite3_reset(q);
        }
        sqlite3_finalize(q);
    }
    if (prepare(st, "UPDATE indexnow_state SET claimed_until = 0,"
                " next_try = ?2, backoff = ?3, sent = sent + ?4,"
                " dropped = dropped + ?5, overflow_logged = ?6,"
                " last_sent = CASE WHEN ?7 THEN ?8 ELSE last_sent END,"
                " last_status = ?9, last_reason = ?10 WHERE site = ?1", &q)
        != SQLITE_OK)
        return rollback(st);
    sqlite3_bind_text(q, 1, base, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 2, result->next_try);
    sqlite3_bind_int64(q, 3, result->backoff);
    sqlite3_bind_int(q, 4, result->outcome == SM_INDEXNOW_SENT ? n : 0);
    sqlite3_bind_int(q, 5, result->outcome == SM_INDEXNOW_DROPPED ? n : 0);
    sqlite3_bind_int64(q, 6, result->overflow_logged);
    sqlite3_bind_int(q, 7, result->status != 0);
    sqlite3_bind_int64(q, 8, result->now);
    sqlite3_bind_int(q, 9, result->status);
    sqlite3_bind_text(q, 10, result->reason ? result->reason : "", -1,
                      SQLITE_STATIC);
    if (run_once(st, q, "cannot update IndexNow's state") != SQLITE_OK)
        return rollback(st);
    if (exec(st, "cannot commit an IndexNow update", "COMMIT") != SQLITE_OK)
        return rollback(st);
    return APR_SUCCESS;
}

apr_status_t sm_sqlite_indexnow_queue(sm_store *st, const char *base,
                                      const char *const *urls, int n,
                                      int *queued)
{
    sqlite3_stmt *count, *add;
    sqlite3_int64 pending = 0;
    apr_time_t now = apr_time_now();
    int i, rc;

    *queued = 0;
    if (exec(st, "cannot start a transaction", "BEGIN IMMEDIATE")
        != SQLITE_OK)
        return APR_EGENERAL;
    if (prepare(st, "SELECT count(*) FROM indexnow_pending WHERE site = ?1",
                &count) != SQLITE_OK)
        return rollback(st);
    sqlite3_bind_text(count, 1, base, -1, SQLITE_STATIC);
    if ((rc = sqlite3_step(count)) == SQLITE_ROW)
        pending = sqlite3_column_int64(count, 0);
    else
        fail(st, "cannot count IndexNow's pending URLs");
    sqlite3_finalize(count);
    if (rc != SQLITE_ROW)
        return rollback(st);
    if (prepare(st, "INSERT INTO indexnow_pending(site, url, queued)"
                " VALUES (?1, ?2, ?3) ON CONFLICT(site, url) DO UPDATE"
                " SET queued = excluded.queued", &add) != SQLITE_OK)
        return rollback(st);
    for (i = 0; i < n && pending < SM_INDEXNOW_BACKLOG_MAX; i++) {
        sqlite3_bind_text(add, 1, base, -1, SQLITE_STATIC);
        sqlite3_bind_text(add, 2, urls[i], -1, SQLITE_STATIC);
        /* Distinct times keep the order given. */
        sqlite3_bind_int64(add, 3, now + i);
        if (sqlite3_step(add) != SQLITE_DONE) {
            fail(st, "cannot queue a URL for IndexNow");
            sqlite3_finalize(add);
            return rollback(st);
        }
        sqlite3_reset(add);
        pending++;
        (*queued)++;
    }
    sqlite3_finalize(add);
    if (exec(st, "cannot commit", "COMMIT") != SQLITE_OK)
        return rollback(st);
    return APR_SUCCESS;
}

apr_status_t sm_sqlite_indexnow_stats(sm_store *st, apr_pool_t *p,
                                      const char *base,
                                      apr_array_header_t **out)
{
    sqlite3_stmt *q;
    int rc;

    *out = apr_array_make(p, 4, sizeof(sm_indexnow_stats));
    /* A store no writer opened since IndexNow came has no tables. */
    if (sqlite3_prepare_v2(sm_sqlite_handle(st),
            "SELECT k.site, (SELECT count(*) FROM indexnow_pending q"
            "  WHERE q.site = k.site), coalesce(s.sent, 0),"
            "  coalesce(s.dropped, 0), coalesce(s.overflow, 0),"
            "  coalesce(s.last_sent, 0), coalesce(s.last_status, 0),"
            "  coalesce(s.last_reason, ''), coalesce(s.next_try, 0)"
            " FROM (SELECT site FROM indexnow_state UNION"
            "  SELECT site FROM indexnow_pending) k"
            " LEFT JOIN indexnow_state s ON s.site = k.site"
            " WHERE ?1 IS NULL OR k.site = ?1 ORDER BY k.site", -1, &q, NULL)
        != SQLITE_OK)
        return APR_SUCCESS;
    if (base)
        sqlite3_bind_text(q, 1, base, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        sm_indexnow_stats *x = apr_array_push(*out);
        x->base = apr_pstrdup(p, (const char *)sqlite3_column_text(q, 0));
        x->pending = sqlite3_column_int64(q, 1);
        x->sent = sqlite3_column_int64(q, 2);
        x->dropped = sqlite3_column_int64(q, 3);
        x->overflow = sqlite3_column_int64(q, 4);
        x->last_sent = sqlite3_column_int64(q, 5);
        x->last_status = sqlite3_column_int(q, 6);
        x->last_reason = apr_pstrdup(p,
                                     (const char *)sqlite3_column_text(q, 7));
        x->next_try = sqlite3_column_int64(q, 8);
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) {
        fail(st, "cannot read IndexNow's state");
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

/* ---- IndexNow's pending list ----------------------------------------------
 *
 * The one place where the store tells IndexNow about a change: a URL added,
 * its lastmod moved, or removed (forgotten or expired).  Written in the
 * transaction that makes the change, so a change and its submission are
 * never apart.  The tables are created by every writer's open
 * (sm_sqlite_indexnow_tables); the backlog is bounded per site. */
int sm_sqlite_indexnow_note(sqlite_store *s, sm_tx_site *ts, const char *url)
{
    sqlite3_stmt *q;
    int rc;

    if (!ts->conf || !ts->conf->indexnow)
        return SQLITE_OK;
    if (!(q = sm_sqlite_stmt(s, STMT_IN_REQUEUE)))
        return SQLITE_ERROR;
    sm_sqlite_text(q, 1, ts->conf->base);
    sm_sqlite_text(q, 2, url);
    sqlite3_bind_int64(q, 3, apr_time_now());
    if ((rc = sm_sqlite_run(s, q, "cannot queue a URL for IndexNow")) != SQLITE_OK
        || sqlite3_changes(s->db) > 0)
        return rc;
    if (ts->in_pending < 0) {
        if (!(q = sm_sqlite_stmt(s, STMT_IN_COUNT)))
            return SQLITE_ERROR;
        sm_sqlite_text(q, 1, ts->conf->base);
        rc = sqlite3_step(q);
        ts->in_pending = rc == SQLITE_ROW ? sqlite3_column_int64(q, 0) : 0;
        sqlite3_reset(q);
        sqlite3_clear_bindings(q);
        if (rc != SQLITE_ROW) {
            sm_sqlite_set_error(&s->base,
                                "cannot count IndexNow's pending URLs", s->db);
            return rc;
        }
    }
    if (ts->in_pending >= SM_INDEXNOW_BACKLOG_MAX) {
        /* Counted, and logged by the sender (never per URL here). */
        if (!(q = sm_sqlite_stmt(s, STMT_IN_OVERFLOW)))
            return SQLITE_ERROR;
        sm_sqlite_text(q, 1, ts->conf->base);
        return sm_sqlite_run(s, q, "cannot count IndexNow's overflow");
    }
    if (!(q = sm_sqlite_stmt(s, STMT_IN_ADD)))
        return SQLITE_ERROR;
    sm_sqlite_text(q, 1, ts->conf->base);
    sm_sqlite_text(q, 2, url);
    sqlite3_bind_int64(q, 3, apr_time_now());
    if ((rc = sm_sqlite_run(s, q, "cannot queue a URL for IndexNow")) == SQLITE_OK)
        ts->in_pending++;
    return rc;
}
