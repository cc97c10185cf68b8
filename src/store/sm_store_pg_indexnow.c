/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_pg_indexnow.c: IndexNow's pending list and per-site state in
 * the PostgreSQL store, as sm_store_sqlite_indexnow.c keeps them in SQLite
 * (same tables, same rules; see sm_store.h and sm_indexnow.h).
 *
 * sm_pg_indexnow_note is the writers' side: called by the apply and expiry
 * transactions of sm_store_pg.c for every URL added, whose lastmod moved,
 * or removed, so that a change and its submission commit together.  The
 * rest is the sender's side (claim a site's batch under a lease, finish
 * it) and what sitemapctl reads or queues.  Every server of a farm shares
 * the list: the claim is an UPDATE ... WHERE claimed_until <= now, which
 * PostgreSQL re-checks after waiting for a concurrent claim's row lock, so
 * exactly one sender wins a batch.  Times are microseconds of the
 * senders' clocks, as in SQLite. */
#include "store/sm_store_pg.h"

#include <string.h>

static int commit(pg_store *s, const char *what)
{
    PGresult *res = sm_pg_exec(s, what, "COMMIT");

    if (!res)
        return -1;
    PQclear(res);
    return 0;
}

static apr_status_t rollback(pg_store *s)
{
    sm_pg_rollback(s);
    return APR_EGENERAL;
}

/* ---- the writers' side -------------------------------------------------- */

int sm_pg_indexnow_vouch(pg_store *s, const sm_change *c, sm_tx_site *ts,
                         apr_int64_t id, apr_int64_t *held)
{
    params ps = { .n = 0 };

    if (!sm_tx_corroborates(c, *held)) {
        s->tx.held = c->op == SM_CHANGE_RECORD;
        return 0;
    }
    p_i64(&ps, id);
    if (sm_pg_run(s, "cannot mark a URL corroborated", "UPDATE sitemap_urls"
                  " SET held = 0 WHERE id = $1", &ps, NULL) != 0)
        return -1;
    *held = 0;
    return sm_pg_indexnow_note(s, ts, c->url);
}

int sm_pg_indexnow_note(pg_store *s, sm_tx_site *ts, const char *url)
{
    params ps = { .n = 0 };
    apr_int64_t changed = 0;
    PGresult *res;

    if (!ts->conf || !ts->conf->indexnow)
        return 0;
    p_str(&ps, ts->conf->base);
    p_str(&ps, url);
    p_i64(&ps, apr_time_now());
    /* A URL pending already is pending once, as of its latest change. */
    if (sm_pg_run(s, "cannot queue a URL for IndexNow",
                  "UPDATE sitemap_indexnow_pending SET queued = $3"
                  " WHERE site = $1 AND url = $2", &ps, &changed) != 0)
        return -1;
    if (changed > 0)
        return 0;
    if (ts->in_pending < 0) {
        params cs = { .n = 0 };
        p_str(&cs, ts->conf->base);
        if (!(res = sm_pg_q(s, "cannot count IndexNow's pending URLs",
                            "SELECT count(*) FROM sitemap_indexnow_pending"
                            " WHERE site = $1", &cs)))
            return -1;
        ts->in_pending = i64(res, 0, 0);
        PQclear(res);
    }
    if (ts->in_pending >= SM_INDEXNOW_BACKLOG_MAX) {
        /* Counted, and logged by the sender (never per URL here). */
        params os = { .n = 0 };
        p_str(&os, ts->conf->base);
        return sm_pg_run(s, "cannot count IndexNow's overflow",
                         "INSERT INTO sitemap_indexnow_state(site, overflow)"
                         " VALUES ($1, 1) ON CONFLICT (site) DO UPDATE"
                         " SET overflow = sitemap_indexnow_state.overflow + 1",
                         &os, NULL);
    }
    if (sm_pg_run(s, "cannot queue a URL for IndexNow",
                  "INSERT INTO sitemap_indexnow_pending(site, url, queued)"
                  " VALUES ($1, $2, $3) ON CONFLICT (site, url) DO UPDATE"
                  " SET queued = excluded.queued", &ps, NULL) != 0)
        return -1;
    ts->in_pending++;
    return 0;
}

/* ---- the sender's side --------------------------------------------------- */

/* items' URLs and queued times as array literals. */
static const char *url_array(apr_pool_t *p, const apr_array_header_t *items)
{
    const char **v = apr_palloc(p, sizeof(char *) * (apr_size_t)
                                   (items->nelts + 1));
    int i;

    for (i = 0; i < items->nelts; i++)
        v[i] = APR_ARRAY_IDX(items, i, sm_indexnow_item).url;
    return sm_pg_text_array(p, v, items->nelts);
}

static const char *queued_array(apr_pool_t *p, const apr_array_header_t *items)
{
    apr_int64_t *v = apr_palloc(p, sizeof(*v) * (apr_size_t)
                                   (items->nelts + 1));
    int i;

    for (i = 0; i < items->nelts; i++)
        v[i] = APR_ARRAY_IDX(items, i, sm_indexnow_item).queued;
    return sm_pg_int_array(p, v, items->nelts);
}

/* Is the site worth a write transaction: something pending, no lease
 * held, next_try passed?  One read, without a transaction. */
static int claim_worthwhile(pg_store *s, const char *base, apr_time_t now)
{
    params ps = { .n = 0 };
    PGresult *res;
    int yes;

    p_str(&ps, base);
    p_i64(&ps, now);
    if (!(res = sm_pg_q(s, "cannot read IndexNow's state",
                        "SELECT EXISTS(SELECT 1 FROM sitemap_indexnow_pending"
                        " WHERE site = $1) AND coalesce((SELECT"
                        " claimed_until <= $2 AND next_try <= $2"
                        " FROM sitemap_indexnow_state WHERE site = $1), true)",
                        &ps)))
        return -1;
    yes = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    return yes;
}

apr_status_t sm_pg_indexnow_claim(sm_store *st, apr_pool_t *p,
                                  const char *base, apr_time_t now,
                                  apr_interval_time_t lease,
                                  sm_indexnow_batch *out)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    PGresult *res;
    int worth, i;

    memset(out, 0, sizeof(*out));
    out->items = apr_array_make(p, 16, sizeof(sm_indexnow_item));
    if (sm_pg_connection(s) != 0)
        return APR_EGENERAL;
    if ((worth = claim_worthwhile(s, base, now)) <= 0)
        return worth < 0 ? APR_EGENERAL : APR_SUCCESS;
    if (sm_pg_start(s, "", NULL) != 0)
        return APR_EGENERAL;
    p_str(&ps, base);
    if (sm_pg_run(s, "cannot add IndexNow's state",
                  "INSERT INTO sitemap_indexnow_state(site) VALUES ($1)"
                  " ON CONFLICT (site) DO NOTHING", &ps, NULL) != 0)
        return rollback(s);
    p_i64(&ps, now + lease);
    p_i64(&ps, now);
    if (!(res = sm_pg_q(s, "cannot claim IndexNow's pending URLs",
                        "UPDATE sitemap_indexnow_state SET claimed_until = $2"
                        " WHERE site = $1 AND claimed_until <= $3"
                        " AND next_try <= $3"
                        " RETURNING backoff, overflow, overflow_logged", &ps)))
        return rollback(s);
    if (PQntuples(res) == 0) {          /* someone else's */
        PQclear(res);
        return commit(s, "cannot end an IndexNow claim") == 0
               ? APR_SUCCESS : rollback(s);
    }
    out->backoff = i64(res, 0, 0);
    out->overflow = i64(res, 0, 1);
    out->overflow_logged = i64(res, 0, 2);
    PQclear(res);
    ps.n = 1;
    p_i64(&ps, SM_INDEXNOW_BATCH_MAX);
    if (!(res = sm_pg_q(s, "cannot read IndexNow's pending URLs",
                        "SELECT url, queued FROM sitemap_indexnow_pending"
                        " WHERE site = $1 ORDER BY queued LIMIT $2", &ps)))
        return rollback(s);
    for (i = 0; i < PQntuples(res); i++) {
        sm_indexnow_item *it = apr_array_push(out->items);
        it->url = apr_pstrdup(p, PQgetvalue(res, i, 0));
        it->queued = i64(res, i, 1);
    }
    PQclear(res);
    if (commit(s, "cannot commit an IndexNow claim") != 0) {
        apr_array_clear(out->items);
        return rollback(s);
    }
    return APR_SUCCESS;
}

apr_status_t sm_pg_indexnow_finish(sm_store *st, const char *base,
                                   const sm_indexnow_batch *batch,
                                   const sm_indexnow_result *result)
{
    pg_store *s = (pg_store *)st;
    int n = batch->items->nelts;
    params ps = { .n = 0 };
    apr_pool_t *tmp;
    int rc = 0;

    if (sm_pg_start(s, "", NULL) != 0)
        return APR_EGENERAL;
    if (result->outcome != SM_INDEXNOW_RETRY && n > 0) {
        /* One statement for the batch; a row whose queued moved was
         * changed again meanwhile: it stays pending. */
        apr_pool_create(&tmp, s->base.pool);
        p_str(&ps, base);
        p_str(&ps, url_array(tmp, batch->items));
        p_str(&ps, queued_array(tmp, batch->items));
        rc = sm_pg_run(s, "cannot remove sent IndexNow URLs",
                       "DELETE FROM sitemap_indexnow_pending p USING"
                       " unnest($2::text[], $3::bigint[]) AS d(url, queued)"
                       " WHERE p.site = $1 AND p.url = d.url"
                       " AND p.queued = d.queued", &ps, NULL);
        apr_pool_destroy(tmp);
        if (rc != 0)
            return rollback(s);
    }
    ps.n = 0;
    p_str(&ps, base);
    p_i64(&ps, result->next_try);
    p_i64(&ps, result->backoff);
    p_i64(&ps, result->outcome == SM_INDEXNOW_SENT ? n : 0);
    p_i64(&ps, result->outcome == SM_INDEXNOW_DROPPED ? n : 0);
    p_i64(&ps, result->overflow_logged);
    p_i64(&ps, result->status ? result->now : -1);
    p_i64(&ps, result->status);
    /* (eight parameters at most: the reason goes in a second statement) */
    if (sm_pg_run(s, "cannot update IndexNow's state",
                  "UPDATE sitemap_indexnow_state SET claimed_until = 0,"
                  " next_try = $2, backoff = $3, sent = sent + $4,"
                  " dropped = dropped + $5, overflow_logged = $6,"
                  " last_sent = CASE WHEN $7::bigint >= 0 THEN $7::bigint"
                  " ELSE last_sent END,"
                  " last_status = $8 WHERE site = $1", &ps, NULL) != 0)
        return rollback(s);
    ps.n = 1;
    p_str(&ps, result->reason ? result->reason : "");
    if (sm_pg_run(s, "cannot update IndexNow's state",
                  "UPDATE sitemap_indexnow_state SET last_reason = $2"
                  " WHERE site = $1", &ps, NULL) != 0
        || commit(s, "cannot commit an IndexNow update") != 0)
        return rollback(s);
    return APR_SUCCESS;
}

/* sitemapctl indexnow: urls put on the list in one statement, in the order
 * given (a URL given twice counts once), as many as the backlog has room
 * for. */
apr_status_t sm_pg_indexnow_queue(sm_store *st, const char *base,
                                  const char *const *urls, int n, int *queued)
{
    pg_store *s = (pg_store *)st;
    apr_array_header_t *items;
    apr_int64_t room, added = 0;
    params ps = { .n = 0 };
    PGresult *res;
    apr_pool_t *tmp;
    int i, rc;

    *queued = 0;
    if (sm_pg_start(s, "", NULL) != 0)
        return APR_EGENERAL;
    p_str(&ps, base);
    if (!(res = sm_pg_q(s, "cannot count IndexNow's pending URLs",
                        "SELECT count(*) FROM sitemap_indexnow_pending"
                        " WHERE site = $1", &ps)))
        return rollback(s);
    room = SM_INDEXNOW_BACKLOG_MAX - i64(res, 0, 0);
    PQclear(res);
    if (room > 0 && n > 0) {
        apr_pool_create(&tmp, s->base.pool);
        items = apr_array_make(tmp, n, sizeof(sm_indexnow_item));
        for (i = 0; i < n; i++)
            ((sm_indexnow_item *)apr_array_push(items))->url = urls[i];
        p_str(&ps, url_array(tmp, items));
        p_i64(&ps, apr_time_now());
        p_i64(&ps, room);
        rc = sm_pg_run(s, "cannot queue URLs for IndexNow",
                       "INSERT INTO sitemap_indexnow_pending(site, url, queued)"
                       " SELECT $1, u, $3::bigint + min(o) FROM"
                       " unnest($2::text[]) WITH ORDINALITY AS t(u, o)"
                       " GROUP BY u ORDER BY min(o) LIMIT $4"
                       " ON CONFLICT (site, url) DO UPDATE"
                       " SET queued = excluded.queued", &ps, &added);
        apr_pool_destroy(tmp);
        if (rc != 0)
            return rollback(s);
    }
    if (commit(s, "cannot commit") != 0)
        return rollback(s);
    *queued = (int)added;
    return APR_SUCCESS;
}

apr_status_t sm_pg_indexnow_stats(sm_store *st, apr_pool_t *p,
                                  const char *base, apr_array_header_t **out)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    PGresult *res;
    int i;

    *out = apr_array_make(p, 4, sizeof(sm_indexnow_stats));
    if (sm_pg_connection(s) != 0)
        return APR_EGENERAL;
    p_str(&ps, base);
    if (!(res = sm_pg_q(s, "cannot read IndexNow's state",
            "SELECT k.site, (SELECT count(*) FROM sitemap_indexnow_pending q"
            "  WHERE q.site = k.site), coalesce(s.sent, 0),"
            "  coalesce(s.dropped, 0), coalesce(s.overflow, 0),"
            "  coalesce(s.last_sent, 0), coalesce(s.last_status, 0),"
            "  coalesce(s.last_reason, ''), coalesce(s.next_try, 0)"
            " FROM (SELECT site FROM sitemap_indexnow_state UNION"
            "  SELECT site FROM sitemap_indexnow_pending) k"
            " LEFT JOIN sitemap_indexnow_state s ON s.site = k.site"
            " WHERE $1::text IS NULL OR k.site = $1 ORDER BY k.site", &ps)))
        return APR_EGENERAL;
    for (i = 0; i < PQntuples(res); i++) {
        sm_indexnow_stats *x = apr_array_push(*out);
        x->base = apr_pstrdup(p, PQgetvalue(res, i, 0));
        x->pending = i64(res, i, 1);
        x->sent = i64(res, i, 2);
        x->dropped = i64(res, i, 3);
        x->overflow = i64(res, i, 4);
        x->last_sent = i64(res, i, 5);
        x->last_status = (int)i64(res, i, 6);
        x->last_reason = apr_pstrdup(p, PQgetvalue(res, i, 7));
        x->next_try = i64(res, i, 8);
    }
    PQclear(res);
    return APR_SUCCESS;
}
