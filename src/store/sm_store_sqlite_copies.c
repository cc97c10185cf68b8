/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_copies.c: a file's own URL stored (sm_change.file_url):
 * the URLs stored under it ("/index.php/anything") with its ETag are the
 * file again under path info, recorded before the file's own URL was;
 * they leave (the other order is sm_change.same_as, in the writer). */
#include "store/sm_store_sqlite.h"

#include <apr_strings.h>
#include <string.h>

/* The URLs under c->url ("url/" up to, not including, "url0": '0' follows
 * '/' in ASCII, and urls' index is in byte order) with c's ETag, into
 * found (a pool's array of const char *). */
static int copies_find(sqlite_store *s, const sm_change *c,
                       sqlite3_int64 site_id, apr_array_header_t *found)
{
    sqlite3_stmt *q;
    const char *want = sm_etag_opaque(c->etag);
    int rc;

    if (!(q = sm_sqlite_stmt(s, STMT_URL_UNDER)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, site_id);
    sm_sqlite_text(q, 2, apr_pstrcat(found->pool, c->url, "/", NULL));
    sm_sqlite_text(q, 3, apr_pstrcat(found->pool, c->url, "0", NULL));
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *etag = (const char *)sqlite3_column_text(q, 1);

        if (etag && strcmp(sm_etag_opaque(etag), want) == 0)
            APR_ARRAY_PUSH(found, const char *) = apr_pstrdup(
                found->pool, (const char *)sqlite3_column_text(q, 0));
    }
    return sm_sqlite_finish(s, q, rc, "cannot read the URLs under a URL");
}

int sm_sqlite_copies_find(sqlite_store *s, const sm_change *c,
                          sqlite3_int64 site_id, apr_array_header_t **found)
{
    *found = NULL;
    if (c->op != SM_CHANGE_RECORD || !c->file_url || !c->etag
        || strchr(c->url, '?'))
        return SQLITE_OK;
    *found = apr_array_make(s->tx.pool, 4, sizeof(const char *));
    return copies_find(s, c, site_id, *found);
}

int sm_sqlite_copies_forget(sqlite_store *s, const sm_change *c,
                            const apr_array_header_t *found,
                            sm_apply_stats *stats)
{
    sm_change gone;
    int i, rc;

    if (!found || !found->nelts)
        return SQLITE_OK;
    memset(&gone, 0, sizeof(gone));
    gone.op = SM_CHANGE_FORGET;
    gone.site = c->site;
    gone.seen = c->seen;
    gone.status = c->status;
    gone.why = "path info";
    gone.detail = c->url;
    for (i = 0; i < found->nelts; i++) {
        gone.url = APR_ARRAY_IDX(found, i, const char *);
        if ((rc = sm_sqlite_forget(s, &gone, stats)) != SQLITE_OK)
            return rc;
    }
    return SQLITE_OK;
}

int sm_sqlite_copies_leave(sqlite_store *s, const sm_change *c,
                           sqlite3_int64 site_id, sm_apply_stats *stats)
{
    apr_array_header_t *found;
    int rc = sm_sqlite_copies_find(s, c, site_id, &found);

    return rc != SQLITE_OK ? rc : sm_sqlite_copies_forget(s, c, found, stats);
}
