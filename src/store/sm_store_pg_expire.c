/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_pg_expire.c: expiry of the PostgreSQL store, as SQLite's
 * (sm_store_sqlite_expire.c): each page keeps the oldest last_seen of its
 * URLs (sitemap_pages.oldest_seen, no later than the truth), and only the
 * pages whose figure is past the limit are walked, each in transactions
 * of at most EXPIRE_CHUNK ids, the figure set again from what is left.  A
 * stop asked for ends the walk between two transactions and gives the
 * claim back; the pages not walked are walked at the next run. */
#include "store/sm_store_pg.h"

#include <apr_strings.h>

#define EXPIRE_CHUNK 20000
/* No URL seen: later than any last_seen. */
#define NONE_SEEN APR_INT64_MAX

typedef struct {
    pg_store *s;
    const sm_site_conf *site;
    apr_int64_t before;         /* last_seen older than this expires */
    apr_int64_t site_end;       /* the first id past the site's range */
    int *removed;
} expiry;

/* The oldest last_seen of ids [lo, hi) that stay (not older than
 * before) into *oldest, unchanged when there are none. */
static int oldest_of(expiry *e, apr_int64_t lo, apr_int64_t hi,
                     apr_int64_t *oldest)
{
    params ps = { .n = 0 };
    PGresult *res;

    p_i64(&ps, lo);
    p_i64(&ps, hi);
    p_i64(&ps, e->before);
    if (!(res = sm_pg_q(e->s, "cannot read a page's oldest URL",
                        "SELECT min(last_seen) FROM sitemap_urls"
                        " WHERE id >= $1 AND id < $2 AND last_seen >= $3",
                        &ps)))
        return -1;
    if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0)
        && i64(res, 0, 0) < *oldest)
        *oldest = i64(res, 0, 0);
    PQclear(res);
    return 0;
}

/* One transaction of a page's walk (see sm_store_sqlite_expire.c). */
static int expire_chunk(expiry *e, apr_int64_t page, apr_int64_t lo,
                        apr_int64_t hi, apr_int64_t page_end, int last,
                        apr_int64_t *oldest)
{
    pg_store *s = e->s;
    sm_tx_site *ts;

    if (sm_pg_tx_start(s) != 0
        || sm_pg_tx_lock_sites(s, &e->site, sizeof(e->site), 1) != 0)
        goto fail;
    ts = sm_tx_site_find(&s->tx, e->site->base);
    if (lo < hi) {
        params ps = { .n = 0 };
        p_i64(&ps, lo);
        p_i64(&ps, hi);
        p_i64(&ps, e->before);
        if (sm_pg_delete_rows(s, ts, "cannot expire old URLs", "DELETE FROM"
                              " sitemap_urls WHERE id >= $1 AND id < $2"
                              " AND last_seen < $3"
                              " RETURNING page, xml_len, url, held", &ps,
                              e->removed) != 0
            || oldest_of(e, lo, hi, oldest) != 0)
            goto fail;
    }
    if (last) {
        params ps = { .n = 0 };
        if (hi < page_end && oldest_of(e, hi, page_end, oldest) != 0)
            goto fail;
        p_i64(&ps, ts->row.id);
        p_i64(&ps, page);
        /* a page left empty: no URL on it was seen before now */
        p_i64(&ps, *oldest != NONE_SEEN ? *oldest : s->tx.now);
        if (sm_pg_run(s, "cannot keep a page's oldest URL",
                      "UPDATE sitemap_pages SET oldest_seen = $3"
                      " WHERE site_id = $1 AND page = $2", &ps, NULL) != 0)
            goto fail;
    }
    if (sm_pg_tx_commit(s) != 0)
        goto fail;
    return 0;

fail:
    sm_pg_tx_rollback(s);
    return -1;
}

static int expire_page(expiry *e, apr_int64_t page, apr_int64_t first,
                       apr_int64_t page_end, apr_int64_t end, int *stopped)
{
    apr_int64_t scan_end = page_end < end ? page_end : end;
    apr_int64_t lo = first, oldest = NONE_SEEN;

    do {
        apr_int64_t hi = lo + EXPIRE_CHUNK < scan_end ? lo + EXPIRE_CHUNK
                                                      : scan_end;
        if (sm_store_stop_asked(&e->s->base)) {
            *stopped = 1;
            return 0;
        }
        if (hi < lo)            /* an empty page past the walk's end */
            hi = lo;
        if (expire_chunk(e, page, lo, hi, page_end, hi >= scan_end,
                         &oldest) != 0)
            return -1;
        lo = hi;
    } while (lo < scan_end);
    return 0;
}

/* The next page after *page past the limit: 1 and its ids, 0: none or
 * an error (*failed). */
static int next_page(expiry *e, apr_int64_t site_id, apr_int64_t *page,
                     apr_int64_t *first, apr_int64_t *page_end, int *failed)
{
    params ps = { .n = 0 };
    PGresult *res;
    int found;

    p_i64(&ps, site_id);
    p_i64(&ps, *page);
    p_i64(&ps, e->before);
    if (!(res = sm_pg_q(e->s, "cannot read the pages to expire",
                        "SELECT p.page, p.first_id, (SELECT n.first_id"
                        " FROM sitemap_pages n WHERE n.site_id = $1"
                        " AND n.page > p.page ORDER BY n.page LIMIT 1)"
                        " FROM sitemap_pages p WHERE p.site_id = $1"
                        " AND p.page > $2 AND p.oldest_seen < $3"
                        " ORDER BY p.page LIMIT 1", &ps))) {
        *failed = 1;
        return 0;
    }
    if ((found = PQntuples(res) == 1)) {
        *page = i64(res, 0, 0);
        *first = i64(res, 0, 1);
        *page_end = PQgetisnull(res, 0, 2) ? e->site_end : i64(res, 0, 2);
    }
    PQclear(res);
    return found;
}

/* One server a period walks the site: concurrent claims wait for each
 * other's row lock, and only the first finds the old time.  1: claimed,
 * 0: not, -1: failed. */
static int claim(pg_store *s, apr_int64_t site_id, apr_int64_t now_s,
                 apr_int64_t since)
{
    params ps = { .n = 0 };
    apr_int64_t claimed = 0;
    PGresult *res;

    p_i64(&ps, site_id);
    p_i64(&ps, now_s);
    p_i64(&ps, since);
    if (sm_pg_begin(s, "", NULL) != 0
        || sm_pg_run(s, "cannot claim the expiry run",
                     "UPDATE sitemap_sites"
                     " SET expiry_claimed = $2 WHERE id = $1"
                     " AND expiry_claimed <= $3", &ps, &claimed) != 0
        || !(res = sm_pg_exec(s, "cannot claim the expiry run", "COMMIT"))) {
        sm_pg_rollback(s);
        return -1;
    }
    PQclear(res);
    return claimed > 0;
}

apr_status_t sm_pg_expire(sm_store *st, const sm_site_conf *site,
                          apr_time_t now, apr_interval_time_t every,
                          int *removed)
{
    pg_store *s = (pg_store *)st;
    apr_int64_t now_s = apr_time_sec(now);
    apr_int64_t page = -1, first = 0, page_end = 0;
    expiry e = { 0 };
    sm_tx_row row;
    int found = 0, failed = 0, stopped = 0;

    *removed = 0;
    if (site->expire <= 0)
        return APR_SUCCESS;
    if (sm_pg_connection(s) != 0
        || sm_pg_site_find(s, site->base, 0, &row, &found) != 0)
        return APR_EGENERAL;
    if (!found)
        return APR_SUCCESS;
    if (every > 0) {
        int c = claim(s, row.id, now_s, now_s - apr_time_sec(every));
        if (c <= 0)
            return c == 0 ? APR_SUCCESS : APR_EGENERAL;
    }
    e.s = s;
    e.site = site;
    e.before = now_s - apr_time_sec(site->expire);
    e.site_end = SITE_FIRST_ID(row.id + 1);
    e.removed = removed;
    /* URLs added after this point are new: the walk ends where the site's
     * ids ended when it began (the last page's figure counts the rest). */
    while (!stopped && next_page(&e, row.id, &page, &first, &page_end,
                                 &failed))
        if (expire_page(&e, page, first, page_end, row.next_id, &stopped)
            != 0)
            return APR_EGENERAL;
    if (failed)
        return APR_EGENERAL;
    /* Cut short by a stop: the next process need not wait a period. */
    if (stopped && every > 0) {
        apr_int64_t back = 0;
        params ps = { .n = 0 };
        p_i64(&ps, row.id);
        sm_pg_run(s, "cannot give the expiry run back", "UPDATE sitemap_sites"
                  " SET expiry_claimed = 0 WHERE id = $1", &ps, &back);
    }
    return APR_SUCCESS;
}
