/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_tx.h: what a write transaction does to the summaries of its
 * sites and pages, added up in memory and written once before COMMIT (one
 * row per touched page and site, however many URLs changed), and the page
 * and lastmod rules of a new or changed URL.  Shared by the backends
 * (sm_store_sqlite.c, sm_store_pg.c), which read and write the rows. */
#ifndef SM_STORE_TX_H
#define SM_STORE_TX_H

#include <apr_hash.h>

#include "store/sm_store.h"

/* A site's row as writers need it. */
typedef struct {
    apr_int64_t id, last_page, url_count;
    apr_int64_t next_id;        /* the id the site's next URL gets */
} sm_tx_row;

typedef struct {
    const sm_site_conf *conf;   /* the writer's settings for the site */
    sm_tx_row row;              /* url_count includes this transaction's */
    /* IndexNow (SQLite): the site's pending URLs, this transaction's
     * included (-1: not counted yet) */
    apr_int64_t in_pending;
    apr_int64_t url_delta;
    apr_int64_t removed;        /* URLs this transaction removed */
    int index_changed;
    int page_opened;            /* row.last_page moved on */
    int ids_used;               /* row.next_id moved on */
    /* The last page's URLs and bytes (this transaction's included), once
     * sm_tx_last_page has been given them. */
    int last_known;
    apr_int64_t last_count, last_bytes;
} sm_tx_site;

typedef struct {
    apr_int64_t key[2];         /* site id, page */
    sm_tx_site *site;
    apr_int64_t url_delta, bytes_delta;
    apr_int64_t lastmod;        /* the page shows at least this lastmod */
    apr_int64_t first_id;       /* of the first URL added to it, 0: none */
    /* the oldest last_seen of the URLs added to it, 0: none added (expiry
     * reads the page's oldest: sm_tx_seen) */
    apr_int64_t oldest_seen;
} sm_tx_page;

typedef struct {
    apr_pool_t *pool;           /* cleared by sm_tx_begin and sm_tx_end */
    apr_hash_t *sites;          /* base -> sm_tx_site */
    apr_hash_t *pages;          /* (site id, page) -> sm_tx_page */
    apr_int64_t now;            /* seconds */
    int held;                   /* the change just written left its URL
                                   held (sm_tx_held_new); the backend sets
                                   and clears it */
    sm_tx_page *last_page;      /* the page sm_tx_count last counted in
                                   (sm_tx_seen finds it without a lookup) */
} sm_tx;

void sm_tx_begin(sm_tx *tx, apr_int64_t now);
void sm_tx_end(sm_tx *tx);
sm_tx_site *sm_tx_site_find(sm_tx *tx, const char *base);
sm_tx_site *sm_tx_site_add(sm_tx *tx, const char *base, const sm_tx_row *row);
sm_tx_page *sm_tx_page_find(sm_tx *tx, apr_int64_t site_id,
                            apr_int64_t page);
/* delta URLs of bytes each joined (1) or left (-1) page; the page must
 * show at least lastmod (0: no constraint).  delta 0 marks a URL's lastmod
 * change: the page's bytes change, so does its version. */
sm_tx_page *sm_tx_count(sm_tx *tx, sm_tx_site *ts, apr_int64_t page,
                        int delta, apr_int64_t bytes, apr_int64_t lastmod);

/* The bytes c's URL takes in a page. */
apr_int64_t sm_tx_entry_bytes(const sm_change *c);
/* Give ts the committed summary of its last page (once per transaction,
 * before sm_tx_choose_page). */
void sm_tx_last_page(sm_tx *tx, sm_tx_site *ts, apr_int64_t url_count,
                     apr_int64_t xml_bytes);
/* The page a new URL of entry_bytes goes on: the last one, or the next. */
apr_int64_t sm_tx_choose_page(const sm_site_conf *site, const sm_tx_site *ts,
                              apr_int64_t entry_bytes);
/* The URL got id on page: count it. */
void sm_tx_added(sm_tx *tx, sm_tx_site *ts, apr_int64_t page, apr_int64_t id,
                 apr_int64_t entry_bytes, apr_int64_t lastmod);
/* A URL added to page (sm_tx_added) was last seen at seen: the page's
 * oldest_seen, which expiry reads to skip pages where nothing is old
 * enough, goes no later than that. */
void sm_tx_seen(sm_tx *tx, sm_tx_site *ts, apr_int64_t page,
                apr_int64_t seen);
/* The oldest_seen to write for a touched page: that of the URLs it got,
 * or now when it got none (the stored figure is then kept, as a page's
 * URLs were seen by now). */
apr_int64_t sm_tx_page_oldest(const sm_tx *tx, const sm_tx_page *tp);
/* A touched page's new URL count and lastmod from its committed summary
 * (a page's lastmod never goes back: a removal moves it to the time of the
 * removal); marks the site's index changed when the page's lastmod moves
 * or it turns empty or non-empty. */
void sm_tx_page_summary(sm_tx_page *tp, apr_int64_t old_count,
                        apr_int64_t old_lastmod, apr_int64_t *count,
                        apr_int64_t *lastmod);
/* Whether the site's row must be written. */
int sm_tx_site_changed(const sm_tx_site *ts);

/* Does c bring a title other than old (NULL: none stored)?  c->title NULL
 * says nothing (the head was not read); "" says the page has none. */
int sm_tx_title_changes(const sm_change *c, const char *old);
/* The title to store for c: NULL for none. */
#define SM_TX_TITLE(c) ((c)->title && *(c)->title ? (c)->title : NULL)
/* The same for alternates (c->alternates NULL: the head was not read; ""
 * it has none): do they differ from old (NULL: none stored)? */
int sm_tx_alternates_change(const sm_change *c, const char *old);
/* The alternates to store for c: NULL for none. */
#define SM_TX_ALTERNATES(c) \
    ((c)->alternates && *(c)->alternates ? (c)->alternates : NULL)

/* A RECORD of a stored URL (old_lastmod, old_etag): its new lastmod (the
 * response's Last-Modified; without one the first-seen time, moved forward
 * when the ETag changes; for a content fingerprint in the ETag's place
 * (sm_fingerprint_tag) that has not changed, the stored lastmod, whatever
 * Last-Modified came).  Returns 0 when only last_seen moves. */
int sm_tx_url_changes(const sm_change *c, apr_int64_t old_lastmod,
                      const char *old_etag, apr_int64_t *lastmod);

/* ---- IndexNow's corroboration -----------------------------------------
 * A URL new in the store is listed at once, but submitted to IndexNow only
 * once it is corroborated: served as a page to a second, different client
 * (by sm_change.client), or on a later UTC day than it was first seen.
 * Until then the URL's held value (a column of the URL's row, 0: not held)
 * keeps the day it was first seen and its first client's tag: a change of
 * its lastmod or its removal is not submitted either (nothing of it was).
 * So one visitor of a site that answers 200 for any path cannot push the
 * paths it invents. */

/* The held value a URL added by c gets: 0 (submitted as usual) unless c
 * is a RECORD of a site with IndexNow on. */
apr_int64_t sm_tx_held_new(const sm_change *c);
/* Does c corroborate a URL stored with held (non-zero)? */
int sm_tx_corroborates(const sm_change *c, apr_int64_t held);
/* After changes[i] of a write: if it left its URL held (tx->held), count
 * it in stats and mark it in st's held_v; tx->held cleared. */
void sm_tx_held_count(sm_tx *tx, sm_store *st, sm_apply_stats *stats,
                      int i);
/* After changes[i] of a write: if it removed rows (stats->removed grew
 * from before), mark it in st's removed_v. */
void sm_tx_removed_mark(sm_store *st, const sm_apply_stats *stats,
                        int before, int i);

#endif
