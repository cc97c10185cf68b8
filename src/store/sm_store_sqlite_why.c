/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_why.c: the verdicts of URLs left out or removed, kept by
 * the writer in its batches (SM_CHANGE_NOTE, forgets with a why) and read
 * by sitemapctl why and the status page. */
#include "store/sm_store_sqlite.h"

#include <apr_strings.h>
#include <string.h>

int sm_sqlite_verdict_put(sqlite_store *s, sqlite3_int64 site_id,
                          const sm_change *c, int removed)
{
    sqlite3_stmt *q;
    int rc;

    if (!(q = sm_sqlite_stmt(s, STMT_VERDICT_PUT)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, site_id);
    sm_sqlite_text(q, 2, c->url);
    sm_sqlite_text(q, 3, removed ? "removed" : "left out");
    sm_sqlite_text(q, 4, c->why ? c->why : "");
    sm_sqlite_text(q, 5, c->detail);
    sqlite3_bind_int(q, 6, c->status);
    sqlite3_bind_int64(q, 7, apr_time_sec(c->seen));
    if ((rc = sm_sqlite_run(s, q, "cannot keep a verdict")) != SQLITE_OK)
        return rc;
    /* Only a new row can pass the bound; an update keeps the count. */
    if (!(q = sm_sqlite_stmt(s, STMT_VERDICT_TRIM)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, site_id);
    sqlite3_bind_int(q, 2, SM_VERDICTS_MAX);
    return sm_sqlite_run(s, q, "cannot drop old verdicts");
}

static const char *col_text(apr_pool_t *p, sqlite3_stmt *q, int i)
{
    const unsigned char *t = sqlite3_column_text(q, i);

    return t ? apr_pstrdup(p, (const char *)t) : NULL;
}

static void read_verdict(apr_pool_t *p, sqlite3_stmt *q, int i,
                         sm_verdict_row *v)
{
    v->verdict = col_text(p, q, i);
    v->reason = col_text(p, q, i + 1);
    v->detail = col_text(p, q, i + 2);
    v->status = sqlite3_column_int(q, i + 3);
    v->at = apr_time_from_sec(sqlite3_column_int64(q, i + 4));
}

/* The statement which, or NULL when the file predates verdicts (an older
 * schema opened read-only: sitemapctl's probe). */
static sqlite3_stmt *verdict_stmt(sqlite_store *s, int which)
{
    sqlite3_int64 version = 0;

    if (sm_sqlite_int_pragma(s, "PRAGMA user_version", &version)
        != SQLITE_OK || version < 6)
        return NULL;
    return sm_sqlite_stmt(s, which);
}

apr_status_t sm_sqlite_why(sm_store *st, apr_pool_t *p, const char *base,
                           const char *url, sm_why_info *out)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q;
    int rc;

    if (!(q = sm_sqlite_stmt(s, STMT_WHY_URL)))
        return APR_EGENERAL;
    sm_sqlite_text(q, 1, base);
    sm_sqlite_text(q, 2, url);
    if ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        out->listed = 1;
        out->lastmod = apr_time_from_sec(sqlite3_column_int64(q, 0));
        out->last_seen = apr_time_from_sec(sqlite3_column_int64(q, 1));
        rc = sqlite3_step(q);
    }
    if (sm_sqlite_finish(s, q, rc, "cannot read a URL") != SQLITE_OK)
        return APR_EGENERAL;
    if (!(q = verdict_stmt(s, STMT_WHY_VERDICT)))
        return APR_SUCCESS;
    sm_sqlite_text(q, 1, base);
    sm_sqlite_text(q, 2, url);
    if ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        out->has_verdict = 1;
        out->verdict.url = apr_pstrdup(p, url);
        read_verdict(p, q, 0, &out->verdict);
        rc = sqlite3_step(q);
    }
    if (sm_sqlite_finish(s, q, rc, "cannot read a verdict") != SQLITE_OK)
        return APR_EGENERAL;
    return APR_SUCCESS;
}

apr_status_t sm_sqlite_left_out(sm_store *st, apr_pool_t *p,
                                const char *base, int n,
                                apr_array_header_t **out)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q;
    int rc;

    if (!(q = verdict_stmt(s, STMT_LEFT_OUT)))
        return APR_SUCCESS;
    sm_sqlite_text(q, 1, base);
    sqlite3_bind_int(q, 2, n);
    sqlite3_bind_int(q, 3, SM_VERDICTS_SCAN);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        sm_verdict_row *v = apr_array_push(*out);
        v->url = col_text(p, q, 0);
        read_verdict(p, q, 1, v);
    }
    if (sm_sqlite_finish(s, q, rc, "cannot read verdicts") != SQLITE_OK)
        return APR_EGENERAL;
    return APR_SUCCESS;
}
