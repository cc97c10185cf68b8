/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_pg_copies.c: a file's own URL added (sm_change.file_url): the
 * URLs stored under it with its ETag leave, as on SQLite
 * (sm_store_sqlite_copies.c). */
#include "store/sm_store_pg.h"

#include <apr_strings.h>
#include <string.h>

/* url COLLATE "C": byte order, whatever the database's collation, so
 * that "url/" to "url0" is exactly what starts with "url/" (no index
 * serves it: it runs only when such a URL is added, which is rare). */
int sm_pg_copies_leave(pg_store *s, sm_pg_new_rows *nr, const sm_change *c,
                       sm_tx_site *ts, sm_apply_stats *stats)
{
    const char *want;
    params ps = { .n = 0 };
    PGresult *res;
    sm_change gone;
    int i, n, rc = 0;

    if (c->op != SM_CHANGE_RECORD || !c->file_url || !c->etag
        || strchr(c->url, '?'))
        return 0;
    /* The copies this transaction added before are written first. */
    if (sm_pg_write_new(s, nr) != 0)
        return -1;
    p_i64(&ps, ts->row.id);
    p_str(&ps, apr_pstrcat(nr->p, c->url, "/", NULL));
    p_str(&ps, apr_pstrcat(nr->p, c->url, "0", NULL));
    if (!(res = sm_pg_q(s, "cannot read the URLs under a URL", "SELECT url,"
                        " etag FROM sitemap_urls WHERE site_id = $1"
                        " AND url COLLATE \"C\" >= $2"
                        " AND url COLLATE \"C\" < $3 AND etag IS NOT NULL",
                        &ps)))
        return -1;
    want = sm_etag_opaque(c->etag);
    memset(&gone, 0, sizeof(gone));
    gone.op = SM_CHANGE_FORGET;
    gone.site = c->site;
    gone.seen = c->seen;
    gone.status = c->status;
    gone.why = "path info";
    gone.detail = c->url;
    n = PQntuples(res);
    for (i = 0; i < n && rc == 0; i++) {
        if (strcmp(sm_etag_opaque(PQgetvalue(res, i, 1)), want) != 0)
            continue;
        gone.url = apr_pstrdup(nr->p, PQgetvalue(res, i, 0));
        rc = sm_pg_forget(s, &gone, ts, stats);
    }
    PQclear(res);
    return rc;
}
