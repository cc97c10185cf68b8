/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_tx.c: the write transaction's summaries (see sm_store_tx.h). */
#include "store/sm_store_tx.h"
#include "head/sm_fingerprint.h"
#include "util/sm_hash.h"

#include <apr_strings.h>
#include <string.h>

void sm_tx_begin(sm_tx *tx, apr_int64_t now)
{
    apr_pool_clear(tx->pool);
    tx->sites = apr_hash_make(tx->pool);
    tx->pages = apr_hash_make(tx->pool);
    tx->now = now;
    tx->last_page = NULL;
}

void sm_tx_end(sm_tx *tx)
{
    apr_pool_clear(tx->pool);
    tx->sites = tx->pages = NULL;
    tx->last_page = NULL;
}

sm_tx_site *sm_tx_site_find(sm_tx *tx, const char *base)
{
    return apr_hash_get(tx->sites, base, APR_HASH_KEY_STRING);
}

sm_tx_site *sm_tx_site_add(sm_tx *tx, const char *base, const sm_tx_row *row)
{
    sm_tx_site *ts = apr_pcalloc(tx->pool, sizeof(*ts));

    ts->row = *row;
    apr_hash_set(tx->sites, apr_pstrdup(tx->pool, base), APR_HASH_KEY_STRING,
                 ts);
    return ts;
}

sm_tx_page *sm_tx_page_find(sm_tx *tx, apr_int64_t site_id, apr_int64_t page)
{
    apr_int64_t key[2];

    /* new URLs go to their site's last page: most finds are the page
     * counted in last, without the hash (about 200 instructions) */
    if (tx->last_page && tx->last_page->key[0] == site_id
        && tx->last_page->key[1] == page)
        return tx->last_page;
    key[0] = site_id;
    key[1] = page;
    return apr_hash_get(tx->pages, key, sizeof(key));
}

sm_tx_page *sm_tx_count(sm_tx *tx, sm_tx_site *ts, apr_int64_t page,
                        int delta, apr_int64_t bytes, apr_int64_t lastmod)
{
    sm_tx_page *tp = sm_tx_page_find(tx, ts->row.id, page);

    if (!tp) {
        tp = apr_pcalloc(tx->pool, sizeof(*tp));
        tp->key[0] = ts->row.id;
        tp->key[1] = page;
        tp->site = ts;
        apr_hash_set(tx->pages, tp->key, sizeof(tp->key), tp);
    }
    tx->last_page = tp;
    tp->url_delta += delta;
    tp->bytes_delta += delta * bytes;
    if (lastmod > tp->lastmod)
        tp->lastmod = lastmod;
    ts->row.url_count += delta;
    ts->url_delta += delta;
    if (delta < 0)
        ts->removed -= delta;
    if (ts->last_known && page == ts->row.last_page) {
        ts->last_count += delta;
        ts->last_bytes += delta * bytes;
    }
    return tp;
}

apr_int64_t sm_tx_entry_bytes(const sm_change *c)
{
    return (apr_int64_t)strlen(c->site->base)
           + (apr_int64_t)sm_xml_escaped_len(c->url) + SM_ENTRY_OVERHEAD;
}

void sm_tx_last_page(sm_tx *tx, sm_tx_site *ts, apr_int64_t url_count,
                     apr_int64_t xml_bytes)
{
    sm_tx_page *tp = sm_tx_page_find(tx, ts->row.id, ts->row.last_page);

    ts->last_count = url_count + (tp ? tp->url_delta : 0);
    ts->last_bytes = xml_bytes + (tp ? tp->bytes_delta : 0);
    ts->last_known = 1;
}

apr_int64_t sm_tx_choose_page(const sm_site_conf *site, const sm_tx_site *ts,
                              apr_int64_t entry_bytes)
{
    int page_size = site->page_size;

    if (page_size < 1 || page_size > SM_PAGE_MAX_URLS)
        page_size = SM_PAGE_MAX_URLS;
    if (ts->last_count < page_size
        && SM_PAGE_OVERHEAD + ts->last_bytes + entry_bytes
           <= SM_PAGE_MAX_BYTES)
        return ts->row.last_page;
    return ts->row.last_page + 1;
}

void sm_tx_added(sm_tx *tx, sm_tx_site *ts, apr_int64_t page, apr_int64_t id,
                 apr_int64_t entry_bytes, apr_int64_t lastmod)
{
    sm_tx_page *tp;

    ts->row.next_id = id + 1;
    ts->ids_used = 1;
    if (page > ts->row.last_page) {
        ts->row.last_page = page;
        ts->last_count = ts->last_bytes = 0;
        ts->page_opened = 1;
    }
    tp = sm_tx_count(tx, ts, page, 1, entry_bytes, lastmod);
    if (!tp->first_id)
        tp->first_id = id;
}

void sm_tx_seen(sm_tx *tx, sm_tx_site *ts, apr_int64_t page,
                apr_int64_t seen)
{
    sm_tx_page *tp = tx->last_page;

    /* the page sm_tx_added just counted the URL in, as a rule */
    if (!tp || tp->key[0] != ts->row.id || tp->key[1] != page)
        tp = sm_tx_page_find(tx, ts->row.id, page);
    if (tp && (!tp->oldest_seen || seen < tp->oldest_seen))
        tp->oldest_seen = seen;
}

apr_int64_t sm_tx_page_oldest(const sm_tx *tx, const sm_tx_page *tp)
{
    return tp->oldest_seen ? tp->oldest_seen : tx->now;
}

void sm_tx_page_summary(sm_tx_page *tp, apr_int64_t old_count,
                        apr_int64_t old_lastmod, apr_int64_t *count,
                        apr_int64_t *lastmod)
{
    *count = old_count + tp->url_delta;
    *lastmod = tp->lastmod > old_lastmod ? tp->lastmod : old_lastmod;
    if (*lastmod != old_lastmod || (*count > 0) != (old_count > 0))
        tp->site->index_changed = 1;
}

int sm_tx_site_changed(const sm_tx_site *ts)
{
    return ts->url_delta || ts->index_changed || ts->page_opened
           || ts->ids_used;
}

/* ETags compared as RFC 9110's weak comparison: httpd marks a file changed
 * within the last second W/ and the same file later strong. */
static int same_etag(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(sm_etag_opaque(a), sm_etag_opaque(b)) == 0;
}

int sm_tx_url_changes(const sm_change *c, apr_int64_t old_lastmod,
                      const char *old_etag, apr_int64_t *lastmod)
{
    apr_int64_t seen = apr_time_sec(c->seen);
    int etag_same = same_etag(c->etag, old_etag);

    /* A page fingerprinted by the module (no ETag of its own): the same
     * content keeps its lastmod, whatever Last-Modified it sent. */
    if (c->last_modified && !(etag_same && sm_fingerprint_is_tag(c->etag)))
        *lastmod = apr_time_sec(c->last_modified);
    else
        *lastmod = etag_same ? old_lastmod
                             : (seen > old_lastmod ? seen : old_lastmod);
    return !(*lastmod == old_lastmod && etag_same);
}

int sm_tx_title_changes(const sm_change *c, const char *old)
{
    return c->title && strcmp(c->title, old ? old : "") != 0;
}

int sm_tx_alternates_change(const sm_change *c, const char *old)
{
    return c->alternates && strcmp(c->alternates, old ? old : "") != 0;
}

/* ---- IndexNow's corroboration ---------------------------------------------
 * held = day << 16 | client tag; days since the epoch (UTC). */
#define HELD_CLIENT(h) ((unsigned)((h) & 0xffff))
#define HELD_DAY(h) ((h) >> 16)

static apr_int64_t utc_day(apr_time_t t)
{
    return apr_time_sec(t) / 86400;
}

apr_int64_t sm_tx_held_new(const sm_change *c)
{
    if (c->op != SM_CHANGE_RECORD || !c->site->indexnow)
        return 0;
    /* Day 0 is 1970-01-01: no traffic comes from it, held stays > 0. */
    return (utc_day(c->seen) << 16) | (apr_int64_t)(c->client & 0xffff);
}

int sm_tx_corroborates(const sm_change *c, apr_int64_t held)
{
    unsigned first = HELD_CLIENT(held), now = c->client & 0xffff;

    if (c->op != SM_CHANGE_RECORD)
        return 0;
    if (utc_day(c->seen) > HELD_DAY(held))
        return 1;
    /* An unknown client (0) is nobody's second. */
    return first && now && first != now;
}

void sm_tx_held_count(sm_tx *tx, sm_store *st, sm_apply_stats *stats,
                      int i)
{
    if (!tx->held)
        return;
    stats->held++;
    if (st->held_v)
        st->held_v[i] = 1;
    tx->held = 0;
}

void sm_tx_removed_mark(sm_store *st, const sm_apply_stats *stats,
                        int before, int i)
{
    if (st->removed_v && stats->removed > before)
        st->removed_v[i] = 1;
}

unsigned sm_client_tag(const char *addr)
{
    apr_uint64_t h;

    if (!addr || !*addr)
        return 0;
    h = sm_hash_str(SM_HASH_SEED, addr);
    return (unsigned)((h ^ (h >> 16) ^ (h >> 32) ^ (h >> 48)) % 0xffff) + 1;
}

/* ---- crawl coverage --------------------------------------------------- */

int sm_coverage_kind(apr_int64_t lastmod, apr_int64_t fetched)
{
    if (fetched <= 0)
        return 1;
    return lastmod > fetched ? 2 : 0;
}

void sm_coverage_count(sm_coverage *out, apr_int64_t lastmod,
                       apr_int64_t fetched, apr_int64_t now)
{
    out->listed_urls++;
    switch (sm_coverage_kind(lastmod, fetched)) {
    case 1:
        out->never_crawled++;
        return;
    case 2:
        out->stale++;
        break;
    default:
        break;
    }
    if (fetched >= now - 86400)
        out->crawled_1d++;
    if (fetched >= now - 7 * 86400)
        out->crawled_7d++;
    if (fetched >= now - 30 * 86400)
        out->crawled_30d++;
}
