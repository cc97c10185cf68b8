/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_sitecache.c: a connection's last site summaries
 * (sm_sqlite_site_info), kept while the store has not changed.
 *
 * A cached sitemap page or index read the site's summary (its row, its
 * pages' versions, when its settings changed) from the store on every
 * request: three statements stepped, most of what such a request cost.
 * The summary depends on the store's content only, so it is kept with
 * the connection's data version (SQLITE_FCNTL_DATA_VERSION: it moves
 * whenever a read transaction of this connection starts on content that
 * another connection changed, and when this connection commits) and used
 * again while the version is the same (the store id with it: it is in the
 * same file): the answer is the one the store
 * would give in that snapshot, so a page is never staler than before.
 * Only read transactions use it (inside a write transaction the
 * summary may hold what a rollback undoes), and only a summary read in
 * one snapshot (the version the same before and after) is kept.
 *
 * Bounded: SITE_CACHE_SLOTS summaries a connection, each of at most
 * SITE_CACHE_MAX_PAGES pages (an index of more is read every time). */
#include "store/sm_store_sqlite.h"

#include <apr_strings.h>
#include <stdlib.h>
#include <string.h>

static void slot_free(sm_sqlite_site_slot *c)
{
    free(c->base);
    free(c->store_id);
    free(c->settings);
    free(c->pages);
    memset(c, 0, sizeof(*c));
}

static apr_status_t cache_cleanup(void *data)
{
    sqlite_store *s = data;
    int i;

    for (i = 0; i < SITE_CACHE_SLOTS; i++)
        slot_free(&s->site_cache[i]);
    return APR_SUCCESS;
}

void sm_sqlite_site_cache_init(sqlite_store *s)
{
    apr_pool_cleanup_register(s->base.pool, s, cache_cleanup,
                              apr_pool_cleanup_null);
}

int sm_sqlite_data_version(sqlite_store *s, unsigned *version)
{
    return sqlite3_txn_state(s->db, "main") == SQLITE_TXN_READ
           && sqlite3_file_control(s->db, "main", SQLITE_FCNTL_DATA_VERSION,
                                   version) == SQLITE_OK;
}

static char *dup_or_null(const char *v)
{
    return v ? strdup(v) : NULL;
}

int sm_sqlite_site_cache_get(sqlite_store *s, apr_pool_t *p,
                             const char *base, apr_int64_t page,
                             unsigned version, sm_site_info *out)
{
    int i;

    for (i = 0; i < SITE_CACHE_SLOTS; i++) {
        const sm_sqlite_site_slot *c = &s->site_cache[i];

        if (!c->base || c->version != version || c->page != page
            || strcmp(c->base, base) != 0)
            continue;
        out->store_id = apr_pstrdup(p, c->store_id);
        out->known = c->known;
        out->index_changed = c->index_changed;
        out->settings_changed = c->settings_changed;
        out->settings = c->settings ? apr_pstrdup(p, c->settings) : NULL;
        out->pages = apr_array_make(p, c->npages ? c->npages : 1,
                                    sizeof(sm_page_info));
        if (c->npages)
            memcpy(out->pages->elts, c->pages,
                   (size_t)c->npages * sizeof(sm_page_info));
        out->pages->nelts = c->npages;
        return 1;
    }
    return 0;
}

void sm_sqlite_site_cache_put(sqlite_store *s, const char *base,
                              apr_int64_t page, unsigned version,
                              const sm_site_info *in)
{
    sm_sqlite_site_slot *c = &s->site_cache[s->site_cache_next];
    int n = in->pages->nelts;

    if (n > SITE_CACHE_MAX_PAGES || !in->store_id)
        return;
    s->site_cache_next = (s->site_cache_next + 1) % SITE_CACHE_SLOTS;
    slot_free(c);
    c->base = strdup(base);
    c->store_id = strdup(in->store_id);
    c->settings = dup_or_null(in->settings);
    c->pages = n ? malloc((size_t)n * sizeof(sm_page_info)) : NULL;
    if (!c->base || !c->store_id || (in->settings && !c->settings)
        || (n && !c->pages)) {
        slot_free(c);               /* out of memory: not kept */
        return;
    }
    if (n)
        memcpy(c->pages, in->pages->elts, (size_t)n * sizeof(sm_page_info));
    c->npages = n;
    c->page = page;
    c->version = version;
    c->known = in->known;
    c->index_changed = in->index_changed;
    c->settings_changed = in->settings_changed;
}
