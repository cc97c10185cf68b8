/* sm_store.c: the backend-independent half of the store interface. */
#include "sm_store.h"

const char *sm_etag_opaque(const char *e)
{
    return e && e[0] == 'W' && e[1] == '/' ? e + 2 : e;
}

apr_status_t sm_store_apply(sm_store *st, const sm_change *changes, int n,
                            sm_apply_stats *stats)
{
    return st->ops->apply(st, changes, n, stats);
}

apr_status_t sm_store_expire(sm_store *st, const sm_site_conf *site,
                             apr_time_t now, apr_interval_time_t every,
                             int *removed)
{
    return st->ops->expire(st, site, now, every, removed);
}

apr_status_t sm_store_sync_sites(sm_store *st,
                                 const sm_site_conf *const *sites, int n)
{
    return st->ops->sync_sites(st, sites, n);
}

int sm_store_is_current(sm_store *st)
{
    return st->ops->is_current(st);
}

void sm_store_close(sm_store *st)
{
    if (st)
        st->ops->close(st);
}

apr_status_t sm_store_read_begin(sm_store *st)
{
    return st->ops->read_begin(st);
}

void sm_store_read_end(sm_store *st)
{
    st->ops->read_end(st);
}

apr_status_t sm_store_site_info(sm_store *st, apr_pool_t *p,
                                const char *base, apr_int64_t page,
                                sm_site_info *out)
{
    return st->ops->site_info(st, p, base, page, out);
}

apr_status_t sm_store_page_urls(sm_store *st, const char *base,
                                apr_int64_t page, sm_url_fn *fn, void *baton)
{
    return st->ops->page_urls(st, base, page, fn, baton);
}

apr_status_t sm_store_site_row(sm_store *st, apr_pool_t *p, const char *base,
                               sm_site_row *out)
{
    return st->ops->site_row(st, p, base, out);
}

apr_status_t sm_store_site_stats(sm_store *st, apr_pool_t *p,
                                 const char *base, apr_array_header_t **out)
{
    return st->ops->site_stats(st, p, base, out);
}

apr_status_t sm_store_url_rows(sm_store *st, const char *base,
                               apr_int64_t page, sm_url_row_fn *fn,
                               void *baton)
{
    return st->ops->url_rows(st, base, page, fn, baton);
}

apr_status_t sm_store_about_file(sm_store *st, apr_pool_t *p,
                                 sm_store_about *out)
{
    return st->ops->about(st, p, out);
}

apr_status_t sm_store_recent(sm_store *st, apr_pool_t *p, const char *base,
                             int n, apr_time_t since,
                             apr_array_header_t **urls,
                             apr_array_header_t **days)
{
    return st->ops->recent(st, p, base, n, since, urls, days);
}

const char *sm_store_error(const sm_store *st)
{
    return st->errmsg;
}

apr_size_t sm_xml_escaped_len(const char *s)
{
    apr_size_t n = 0;

    for (; *s; s++) {
        switch (*s) {
        case '&':  n += 5; break;   /* &amp;  */
        case '<':
        case '>':  n += 4; break;   /* &lt; &gt; */
        case '\'':
        case '"':  n += 6; break;   /* &apos; &quot; */
        default:   n += 1;
        }
    }
    return n;
}

/* IndexNow: a backend without it (none today) leaves the entries NULL. */
apr_status_t sm_store_indexnow_claim(sm_store *st, apr_pool_t *p,
                                     const char *base, apr_time_t now,
                                     apr_interval_time_t lease,
                                     sm_indexnow_batch *out)
{
    if (!st->ops->indexnow_claim)
        return APR_ENOTIMPL;
    return st->ops->indexnow_claim(st, p, base, now, lease, out);
}

apr_status_t sm_store_indexnow_finish(sm_store *st, const char *base,
                                      const sm_indexnow_batch *batch,
                                      const sm_indexnow_result *result)
{
    if (!st->ops->indexnow_finish)
        return APR_ENOTIMPL;
    return st->ops->indexnow_finish(st, base, batch, result);
}

apr_status_t sm_store_indexnow_queue(sm_store *st, const char *base,
                                     const char *const *urls, int n,
                                     int *queued)
{
    if (!st->ops->indexnow_queue)
        return APR_ENOTIMPL;
    return st->ops->indexnow_queue(st, base, urls, n, queued);
}

apr_status_t sm_store_indexnow_stats(sm_store *st, apr_pool_t *p,
                                     const char *base,
                                     apr_array_header_t **out)
{
    if (!st->ops->indexnow_stats)
        return APR_ENOTIMPL;
    return st->ops->indexnow_stats(st, p, base, out);
}
