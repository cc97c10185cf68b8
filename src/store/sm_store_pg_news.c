/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_pg_news.c: a page's description and publication time in
 * PostgreSQL (see sm_store_sqlite_news.c): written once per batch, read
 * by the news sitemap and llms.txt. */
#include "store/sm_store_pg.h"

#include <string.h>

int sm_pg_news_put(pg_store *s, const sm_change *changes, int n,
                   const unsigned char *in_row)
{
    apr_array_header_t *site = apr_array_make(s->tx.pool, 16,
                                              sizeof(apr_int64_t));
    apr_array_header_t *url = apr_array_make(s->tx.pool, 16, sizeof(char *));
    apr_array_header_t *desc = apr_array_make(s->tx.pool, 16, sizeof(char *));
    apr_array_header_t *pub = apr_array_make(s->tx.pool, 16,
                                             sizeof(apr_int64_t));
    apr_array_header_t *at = apr_array_make(s->tx.pool, 16, sizeof(int));
    params ps = { .n = 0 };
    PGresult *res;
    int i;

    for (i = 0; i < n; i++) {
        const sm_change *c = &changes[i];
        sm_tx_site *ts;
        if (c->op != SM_CHANGE_RECORD || !c->description
            || (in_row && in_row[i])
            || !(ts = sm_tx_site_find(&s->tx, c->site->base)))
            continue;
        APR_ARRAY_PUSH(site, apr_int64_t) = ts->row.id;
        APR_ARRAY_PUSH(url, const char *) = c->url;
        APR_ARRAY_PUSH(desc, const char *) = *c->description
                                             ? c->description : NULL;
        APR_ARRAY_PUSH(pub, apr_int64_t) = c->published > 0
                                           ? apr_time_sec(c->published) : 0;
        APR_ARRAY_PUSH(at, int) = i;
    }
    if (!site->nelts)
        return 0;
    p_str(&ps, sm_pg_int_array(s->tx.pool, (apr_int64_t *)site->elts,
                               site->nelts));
    p_str(&ps, sm_pg_text_array(s->tx.pool, (const char **)url->elts,
                                url->nelts));
    p_str(&ps, sm_pg_text_array(s->tx.pool, (const char **)desc->elts,
                                desc->nelts));
    p_str(&ps, sm_pg_int_array(s->tx.pool, (apr_int64_t *)pub->elts,
                               pub->nelts));
    /* Only rows that differ; each moves its page's version, as a title's
     * change does (the documents' validators follow). */
    if (!(res = sm_pg_q(s, "cannot update the URLs' descriptions",
                        "UPDATE sitemap_urls u"
                        " SET description = v.d, published = v.p"
                        " FROM unnest($1::bigint[], $2::text[], $3::text[],"
                        "  $4::bigint[]) WITH ORDINALITY AS v(s, url, d, p, i)"
                        " WHERE u.site_id = v.s AND u.url = v.url"
                        " AND (u.description IS DISTINCT FROM v.d"
                        "  OR u.published <> v.p)"
                        " RETURNING v.i, u.page", &ps)))
        return -1;
    for (i = 0; i < PQntuples(res); i++) {
        apr_int64_t k = i64(res, i, 0) - 1;
        if (k >= 0 && k < at->nelts) {
            const sm_change *c = &changes[APR_ARRAY_IDX(at, k, int)];
            sm_tx_count(&s->tx, sm_tx_site_find(&s->tx, c->site->base),
                        i64(res, i, 1), 0, 0, 0);
        }
    }
    PQclear(res);
    return 0;
}

apr_status_t sm_pg_news_urls(sm_store *st, const char *base,
                             apr_time_t since, int max, sm_news_fn *fn,
                             void *baton)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    apr_status_t rv = APR_SUCCESS;
    PGresult *res;
    int i;

    p_str(&ps, base);
    p_i64(&ps, apr_time_sec(since));
    p_i64(&ps, max);
    /* published > 0 lets the partial index serve it */
    if (!(res = sm_pg_q(s, "cannot read the news sitemap's URLs",
                        "SELECT u.url, u.title, u.published"
                        " FROM sitemap_sites s JOIN sitemap_urls u"
                        " ON u.site_id = s.id"
                        " WHERE s.base = $1 AND u.published > 0"
                        " AND u.published >= $2"
                        " ORDER BY u.published DESC, u.id LIMIT $3", &ps)))
        return APR_EGENERAL;
    for (i = 0; i < PQntuples(res) && rv == APR_SUCCESS; i++)
        rv = fn(baton, PQgetvalue(res, i, 0),
                PQgetisnull(res, i, 1) ? NULL : PQgetvalue(res, i, 1),
                apr_time_from_sec(i64(res, i, 2)));
    PQclear(res);
    return rv;
}

apr_status_t sm_pg_llms_urls(sm_store *st, const char *base, int max,
                             sm_llms_fn *fn, void *baton)
{
    pg_store *s = (pg_store *)st;
    params ps = { .n = 0 };
    apr_status_t rv = APR_SUCCESS;
    PGresult *res;
    int i;

    p_str(&ps, base);
    p_i64(&ps, max);
    /* the order of sm_store_llms_urls; a top-N sort (LIMIT) */
    if (!(res = sm_pg_q(s, "cannot read llms.txt's URLs",
                        "SELECT u.url, u.title, u.description, u.lastmod"
                        " FROM sitemap_sites s JOIN sitemap_urls u"
                        " ON u.site_id = s.id WHERE s.base = $1"
                        " ORDER BY length(u.url)"
                        " - length(replace(u.url, '/', '')),"
                        " u.url <> '/', u.lastmod DESC, u.id LIMIT $2",
                        &ps)))
        return APR_EGENERAL;
    for (i = 0; i < PQntuples(res) && rv == APR_SUCCESS; i++)
        rv = fn(baton, PQgetvalue(res, i, 0),
                PQgetisnull(res, i, 1) ? NULL : PQgetvalue(res, i, 1),
                PQgetisnull(res, i, 2) ? NULL : PQgetvalue(res, i, 2),
                apr_time_from_sec(i64(res, i, 3)));
    PQclear(res);
    return rv;
}
