/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_expire.c: expiry of the SQLite store (sm_store_expire).
 *
 * The store keeps no index on last_seen (every insert and refresh would
 * pay for it): each page keeps the oldest last_seen of its URLs instead
 * (pages.oldest_seen, schema step 12), no later than the truth: the
 * writer lowers it as it adds URLs, and a refresh, which only raises a
 * URL's last_seen, leaves it.  Expiry reads the site's page rows and walks
 * only the pages whose figure is past the limit, each in transactions of
 * at most EXPIRE_CHUNK ids, and sets the figure again from what is left.
 * A check where nothing expires reads one row a page (10,000 for 10 million
 * URLs in pages of 1,000), not every URL.  A stop asked for ends the walk
 * between two transactions; the pages not walked keep their figure and are
 * walked at the next run, which the claim, given back, lets come soon. */
#include "store/sm_store_sqlite.h"

#include <sqlite3.h>

/* Ids looked at per expiry transaction: a few milliseconds each, so
 * writers never wait long and a stop waits for one at most. */
#define EXPIRE_CHUNK 20000
/* No URL seen: later than any last_seen. */
#define NONE_SEEN ((sqlite3_int64)0x7fffffffffffffffLL)

typedef struct {
    sqlite_store *s;
    const sm_site_conf *site;
    sqlite3_int64 before;       /* last_seen older than this expires */
    sqlite3_int64 site_end;     /* the first id past the site's range */
    sqlite3_stmt *next_page, *oldest, *set_oldest;
    int *removed;
} expiry;

static const char next_page_sql[] =
    "SELECT p.page, p.first_id, (SELECT n.first_id FROM pages n"
    "  WHERE n.site_id = ?1 AND n.page > p.page ORDER BY n.page LIMIT 1)"
    " FROM pages p WHERE p.site_id = ?1 AND p.page > ?2"
    " AND p.oldest_seen < ?3 ORDER BY p.page LIMIT 1";
static const char oldest_sql[] =
    "SELECT min(last_seen) FROM urls WHERE id >= ?1 AND id < ?2";
static const char set_oldest_sql[] =
    "UPDATE pages SET oldest_seen = ?3 WHERE site_id = ?1 AND page = ?2";

/* The oldest last_seen of ids [lo, hi) into *oldest (unchanged when there
 * are none). */
static int oldest_of(expiry *e, sqlite3_int64 lo, sqlite3_int64 hi,
                     sqlite3_int64 *oldest)
{
    sqlite3_stmt *q = e->oldest;
    int rc;

    sqlite3_bind_int64(q, 1, lo);
    sqlite3_bind_int64(q, 2, hi);
    if ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (sqlite3_column_type(q, 0) != SQLITE_NULL
            && sqlite3_column_int64(q, 0) < *oldest)
            *oldest = sqlite3_column_int64(q, 0);
        rc = sqlite3_step(q);
    }
    return sm_sqlite_finish(e->s, q, rc, "cannot read a page's oldest URL");
}

/* One transaction of the walk of a page: ids [lo, hi) expired and their
 * oldest last_seen kept in *oldest; last: the page's figure written, the
 * URLs added past the walk's end (end to page_end) counted too. */
static int expire_chunk(expiry *e, sqlite3_int64 page, sqlite3_int64 lo,
                        sqlite3_int64 hi, sqlite3_int64 page_end, int last,
                        sqlite3_int64 *oldest)
{
    sqlite_store *s = e->s;
    sqlite3_stmt *q;
    sm_tx_site *ts;
    int rc;

    if ((rc = sm_sqlite_tx_start(s)) != SQLITE_OK)
        return rc;
    /* The site's row is read again inside each transaction: another
     * process may have added URLs or opened a page meanwhile. */
    if ((rc = sm_sqlite_tx_site(s, e->site, &ts)) != SQLITE_OK)
        goto fail;
    if (lo < hi) {
        if (!(q = sm_sqlite_stmt(s, STMT_EXPIRE))) {
            rc = SQLITE_ERROR;
            goto fail;
        }
        sqlite3_bind_int64(q, 1, lo);
        sqlite3_bind_int64(q, 2, hi);
        sqlite3_bind_int64(q, 3, e->before);
        if ((rc = sm_sqlite_delete_rows(s, q, ts, "cannot expire old URLs",
                                        e->removed)) != SQLITE_OK
            || (rc = oldest_of(e, lo, hi, oldest)) != SQLITE_OK)
            goto fail;
    }
    if (last) {
        if (hi < page_end
            && (rc = oldest_of(e, hi, page_end, oldest)) != SQLITE_OK)
            goto fail;
        q = e->set_oldest;
        sqlite3_bind_int64(q, 1, ts->row.id);
        sqlite3_bind_int64(q, 2, page);
        /* a page left empty: no URL on it was seen before now */
        sqlite3_bind_int64(q, 3, *oldest != NONE_SEEN ? *oldest : s->tx.now);
        if ((rc = sm_sqlite_run(s, q, "cannot keep a page's oldest URL"))
            != SQLITE_OK)
            goto fail;
    }
    if ((rc = sm_sqlite_tx_commit(s)) != SQLITE_OK)
        goto fail;
    return SQLITE_OK;

fail:
    sm_sqlite_tx_rollback(s);
    return rc;
}

/* Walk the page of ids [first, page_end), the ids below end (the site's
 * when the walk began) in chunks; *stopped when a stop cut it short. */
static int expire_page(expiry *e, sqlite3_int64 page, sqlite3_int64 first,
                       sqlite3_int64 page_end, sqlite3_int64 end,
                       int *stopped)
{
    sqlite3_int64 scan_end = page_end < end ? page_end : end;
    sqlite3_int64 lo = first, oldest = NONE_SEEN;
    int rc;

    do {
        sqlite3_int64 hi = lo + EXPIRE_CHUNK < scan_end ? lo + EXPIRE_CHUNK
                                                        : scan_end;
        if (sm_store_stop_asked(&e->s->base)) {
            *stopped = 1;
            return SQLITE_OK;
        }
        if (hi < lo)            /* an empty page past the walk's end */
            hi = lo;
        if ((rc = expire_chunk(e, page, lo, hi, page_end, hi >= scan_end,
                               &oldest)) != SQLITE_OK)
            return rc;
        lo = hi;
    } while (lo < scan_end);
    return SQLITE_OK;
}

/* The next page after page past the limit: 1 and its ids, 0: none. */
static int next_page(expiry *e, sqlite3_int64 site_id, sqlite3_int64 *page,
                     sqlite3_int64 *first, sqlite3_int64 *page_end, int *rc)
{
    sqlite3_stmt *q = e->next_page;
    int found = 0;

    sqlite3_bind_int64(q, 1, site_id);
    sqlite3_bind_int64(q, 2, *page);
    sqlite3_bind_int64(q, 3, e->before);
    if ((*rc = sqlite3_step(q)) == SQLITE_ROW) {
        found = 1;
        *page = sqlite3_column_int64(q, 0);
        *first = sqlite3_column_int64(q, 1);
        *page_end = sqlite3_column_type(q, 2) == SQLITE_NULL
                  ? e->site_end : sqlite3_column_int64(q, 2);
        *rc = sqlite3_step(q);
    }
    *rc = sm_sqlite_finish(e->s, q, *rc, "cannot read the pages to expire");
    return found && *rc == SQLITE_OK;
}

/* One process a period walks the site: claim the run (1: claimed). */
static int claim(sqlite_store *s, sqlite3_int64 site_id, sqlite3_int64 now_s,
                 apr_interval_time_t every, int *rc)
{
    sqlite3_stmt *q;

    if (!(q = sm_sqlite_stmt(s, STMT_EXPIRE_CLAIM))) {
        *rc = SQLITE_ERROR;
        return 0;
    }
    sqlite3_bind_int64(q, 1, site_id);
    sqlite3_bind_int64(q, 2, now_s);
    sqlite3_bind_int64(q, 3, now_s - apr_time_sec(every));
    if ((*rc = sm_sqlite_run(s, q, "cannot claim the expiry run"))
        != SQLITE_OK)
        return 0;
    return sqlite3_changes(s->db) > 0;
}

/* Give the claim back (best effort: the run is due again a period on). */
static void release(sqlite_store *s, sqlite3_int64 site_id)
{
    sqlite3_stmt *q;

    if (sqlite3_prepare_v2(s->db, "UPDATE sites SET expiry_claimed = 0"
                           " WHERE id = ?1", -1, &q, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_int64(q, 1, site_id);
    sqlite3_step(q);
    sqlite3_finalize(q);
}

static int prepare(sqlite_store *s, const char *sql, sqlite3_stmt **q)
{
    int rc = sqlite3_prepare_v2(s->db, sql, -1, q, NULL);

    if (rc != SQLITE_OK)
        sm_sqlite_set_error(&s->base, "cannot prepare the expiry", s->db);
    return rc;
}

static int walk(expiry *e, const sm_tx_row *row, int *stopped)
{
    sqlite3_int64 page = -1, first = 0, page_end = 0;
    int rc;

    if ((rc = prepare(e->s, next_page_sql, &e->next_page)) != SQLITE_OK
        || (rc = prepare(e->s, oldest_sql, &e->oldest)) != SQLITE_OK
        || (rc = prepare(e->s, set_oldest_sql, &e->set_oldest))
           != SQLITE_OK)
        return rc;
    /* URLs added after this point are new: the walk ends where the site's
     * ids ended when it began (the last page's figure counts the rest). */
    while (!*stopped
           && next_page(e, row->id, &page, &first, &page_end, &rc))
        if ((rc = expire_page(e, page, first, page_end, row->next_id,
                              stopped)) != SQLITE_OK)
            break;
    return rc;
}

apr_status_t sm_sqlite_expire(sm_store *st, const sm_site_conf *site,
                              apr_time_t now, apr_interval_time_t every,
                              int *removed)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_int64 now_s = apr_time_sec(now);
    expiry e = { 0 };
    sm_tx_row row;
    int rc, stopped = 0;

    *removed = 0;
    if (site->expire <= 0)
        return APR_SUCCESS;
    if ((rc = sm_sqlite_site_find(s, site->base, &row)) == SQLITE_DONE)
        return APR_SUCCESS;
    if (rc != SQLITE_OK)
        return APR_EGENERAL;
    if (every > 0 && !claim(s, row.id, now_s, every, &rc))
        return rc == SQLITE_OK ? APR_SUCCESS : APR_EGENERAL;
    e.s = s;
    e.site = site;
    e.before = now_s - apr_time_sec(site->expire);
    e.site_end = SITE_FIRST_ID(row.id + 1);
    e.removed = removed;
    rc = walk(&e, &row, &stopped);
    sqlite3_finalize(e.next_page);
    sqlite3_finalize(e.oldest);
    sqlite3_finalize(e.set_oldest);
    /* Cut short by a stop: the next process need not wait a period. */
    if (rc == SQLITE_OK && stopped && every > 0)
        release(s, row.id);
    return rc == SQLITE_OK ? APR_SUCCESS : APR_EGENERAL;
}
