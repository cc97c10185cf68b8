/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store.c: the backend-independent half of the store interface. */
#include "store/sm_store_backend.h"
#include "util/sm_hash.h"
#include "store/sm_store_sqlite.h"

#include <apr_strings.h>
#include <string.h>

const char *sm_etag_opaque(const char *e)
{
    return e && e[0] == 'W' && e[1] == '/' ? e + 2 : e;
}

apr_status_t sm_store_apply(sm_store *st, const sm_change *changes, int n,
                            sm_apply_stats *stats)
{
    return sm_store_apply_held(st, changes, n, stats, NULL);
}

apr_status_t sm_store_apply_held(sm_store *st, const sm_change *changes,
                                 int n, sm_apply_stats *stats,
                                 unsigned char *held_v)
{
    return sm_store_apply_marks(st, changes, n, stats, held_v, NULL);
}

apr_status_t sm_store_apply_marks(sm_store *st, const sm_change *changes,
                                  int n, sm_apply_stats *stats,
                                  unsigned char *held_v,
                                  unsigned char *removed_v)
{
    apr_status_t rv;

    if (held_v && n > 0)
        memset(held_v, 0, (apr_size_t)n);
    if (removed_v && n > 0)
        memset(removed_v, 0, (apr_size_t)n);
    st->held_v = held_v;
    st->removed_v = removed_v;
    rv = st->ops->apply(st, changes, n, stats);
    st->held_v = NULL;
    st->removed_v = NULL;
    if (rv != APR_SUCCESS && held_v && n > 0)
        memset(held_v, 0, (apr_size_t)n);
    if (rv != APR_SUCCESS && removed_v && n > 0)
        memset(removed_v, 0, (apr_size_t)n);
    return rv;
}

apr_status_t sm_store_expire(sm_store *st, const sm_site_conf *site,
                             apr_time_t now, apr_interval_time_t every,
                             int *removed)
{
    return st->ops->expire(st, site, now, every, removed);
}

apr_status_t sm_store_prune_sites(sm_store *st, sm_base_test_fn *test,
                                  void *baton, int *pruned)
{
    *pruned = 0;
    return st->ops->prune_sites(st, test, baton, pruned);
}

apr_status_t sm_store_sync_sites(sm_store *st,
                                 const sm_site_conf *const *sites, int n)
{
    return st->ops->sync_sites(st, sites, n);
}

static int stop_all;

void sm_store_stop_all(void)
{
    __atomic_store_n(&stop_all, 1, __ATOMIC_RELAXED);
}

int sm_store_stop_asked(const sm_store *st)
{
    return __atomic_load_n(&stop_all, __ATOMIC_RELAXED)
           || (st->stopping
               && __atomic_load_n(st->stopping, __ATOMIC_RELAXED));
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

void sm_store_close_idle(sm_store *st)
{
    if (st) {
        st->close_lightly = 1;
        st->ops->close(st);
    }
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

apr_status_t sm_store_page_titles(sm_store *st, const char *base,
                                  apr_int64_t page, sm_title_fn *fn,
                                  void *baton)
{
    if (!st->ops->page_titles)
        return APR_ENOTIMPL;
    return st->ops->page_titles(st, base, page, fn, baton);
}

apr_status_t sm_store_page_images(sm_store *st, const char *base,
                                  apr_int64_t page, sm_image_fn *fn,
                                  void *baton)
{
    if (!st->ops->page_images)
        return APR_SUCCESS;
    return st->ops->page_images(st, base, page, fn, baton);
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

apr_status_t sm_store_site_list(sm_store *st, apr_pool_t *p,
                                apr_array_header_t **out)
{
    return st->ops->site_list(st, p, out);
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

apr_status_t sm_store_why(sm_store *st, apr_pool_t *p, const char *base,
                          const char *url, sm_why_info *out)
{
    memset(out, 0, sizeof(*out));
    if (!st->ops->why)
        return APR_ENOTIMPL;
    return st->ops->why(st, p, base, url, out);
}

apr_status_t sm_store_coverage(sm_store *st, const char *base,
                               const char *crawler, apr_time_t now,
                               sm_coverage *out)
{
    memset(out, 0, sizeof(*out));
    out->crawler = crawler;
    if (!st->ops->coverage)
        return APR_ENOTIMPL;
    return st->ops->coverage(st, base, crawler, now, out);
}

apr_status_t sm_store_coverage_urls(sm_store *st, const char *base,
                                    const char *crawler,
                                    sm_coverage_which which,
                                    sm_coverage_fn *fn, void *baton)
{
    if (!st->ops->coverage_urls)
        return APR_ENOTIMPL;
    return st->ops->coverage_urls(st, base, crawler, which, fn, baton);
}

apr_status_t sm_store_crawl_days_note(sm_store *st, const char *base,
                                      apr_time_t now, int *taken)
{
    apr_int64_t now_s = apr_time_sec(now);

    *taken = 0;
    if (!st->ops->crawl_days_note)
        return APR_ENOTIMPL;
    return st->ops->crawl_days_note(st, base, now_s / 86400 - 1, now_s,
                                    taken);
}

apr_status_t sm_store_crawl_days(sm_store *st, apr_pool_t *p,
                                 const char *base, const char *crawler,
                                 apr_int64_t since, apr_array_header_t **out)
{
    *out = apr_array_make(p, SM_CRAWL_DAYS, sizeof(sm_crawl_day));
    if (!st->ops->crawl_days)
        return APR_ENOTIMPL;
    return st->ops->crawl_days(st, p, base, crawler, since, out);
}

apr_status_t sm_store_indexnow_stale(sm_store *st, const char *base,
                                     apr_time_t now, int *queued)
{
    *queued = 0;
    if (!st->ops->indexnow_stale)
        return APR_ENOTIMPL;
    return st->ops->indexnow_stale(st, base, now, queued);
}

apr_status_t sm_store_left_out(sm_store *st, apr_pool_t *p, const char *base,
                               int n, apr_array_header_t **out)
{
    *out = apr_array_make(p, n > 0 ? n : 1, sizeof(sm_verdict_row));
    if (!st->ops->left_out)
        return APR_SUCCESS;
    return st->ops->left_out(st, p, base, n, out);
}

apr_status_t sm_store_robots_list(sm_store *st, apr_pool_t *p,
                                  apr_array_header_t **out)
{
    *out = apr_array_make(p, 4, sizeof(sm_robots_row));
    if (!st->ops->robots_list)
        return APR_SUCCESS;
    return st->ops->robots_list(st, p, out);
}

apr_status_t sm_store_robots_body(sm_store *st, apr_pool_t *p,
                                  const char *base, sm_robots_row *out)
{
    memset(out, 0, sizeof(*out));
    out->base = base;
    if (!st->ops->robots_body)
        return APR_SUCCESS;
    return st->ops->robots_body(st, p, base, out);
}

apr_status_t sm_store_robots_urls(sm_store *st, apr_pool_t *p,
                                  const char *base, const char *after,
                                  int n, apr_array_header_t **out)
{
    *out = apr_array_make(p, n > 0 ? n : 1, sizeof(const char *));
    if (!st->ops->robots_urls)
        return APR_SUCCESS;
    return st->ops->robots_urls(st, p, base, after ? after : "", n, out);
}

apr_status_t sm_store_robots_swept(sm_store *st, const char *base,
                                   apr_int64_t hash, const char *upto)
{
    if (!st->ops->robots_swept)
        return APR_SUCCESS;
    return st->ops->robots_swept(st, base, hash, upto);
}

apr_int64_t sm_robots_hash(const char *body)
{
    /* Never 0, which says "none". */
    apr_int64_t h = (apr_int64_t)(sm_hash_str(SM_HASH_SEED, body)
                                  & APR_UINT64_C(0x7fffffffffffffff));

    return h ? h : 1;
}

const char *sm_store_error(const sm_store *st)
{
    return st->errmsg;
}

apr_size_t sm_xml_escaped_len(const char *s)
{
    static const char special[] = "&<>'\"";
    apr_size_t n = strlen(s);

    /* most URLs have none of the five: two library scans, not a switch a
     * byte */
    for (s = strpbrk(s, special); s; s = strpbrk(s + 1, special))
        n += *s == '&' ? 4 : *s == '<' || *s == '>' ? 3 : 5;
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

/* ---- the backends ------------------------------------------------------ */

int sm_store_is_pg(const char *where)
{
    return where && (strncmp(where, "postgresql://", 13) == 0
                     || strncmp(where, "postgres://", 11) == 0);
}

static int any_location(const char *where)
{
    (void)where;
    return 1;
}

#ifdef SM_WITHOUT_POSTGRESQL
/* Built without libpq (configure --without-postgresql): the URI is still
 * known, so that it is refused with the reason, not taken for a file. */
static const char *pg_missing(apr_pool_t *p, const char *where)
{
    (void)p;
    (void)where;
    return "this mod_sitemap was built without PostgreSQL (configure "
           "--without-postgresql); use an SQLite file";
}

static apr_status_t pg_open_missing(sm_store **out, apr_pool_t *p,
                                    const char *where, int flags,
                                    int busy_timeout_ms,
                                    const sm_logger *log,
                                    const volatile int *stopping,
                                    char *errmsg, apr_size_t errlen)
{
    (void)flags; (void)busy_timeout_ms; (void)log; (void)stopping;
    *out = NULL;
    if (errmsg && errlen)
        apr_cpystrn(errmsg, pg_missing(p, where), errlen);
    return APR_ENOTIMPL;
}

static apr_status_t pg_check_missing(apr_pool_t *p, const char *where,
                                     int busy_timeout_ms,
                                     apr_array_header_t *problems,
                                     sm_store_about *about, char *errmsg,
                                     apr_size_t errlen)
{
    sm_store *none;

    (void)problems; (void)about;
    return pg_open_missing(&none, p, where, 0, busy_timeout_ms, NULL, NULL,
                           errmsg, errlen);
}
#endif

/* SQLite's waits are the busy timeout's already: stopping is only kept
 * for the store's later use. */
static apr_status_t sqlite_open(sm_store **out, apr_pool_t *p,
                                const char *where, int flags,
                                int busy_timeout_ms, const sm_logger *log,
                                const volatile int *stopping, char *errmsg,
                                apr_size_t errlen)
{
    apr_status_t rv = sm_store_open_sqlite(out, p, where, flags,
                                           busy_timeout_ms, log, errmsg,
                                           errlen);
    if (rv == APR_SUCCESS)
        (*out)->stopping = stopping;
    return rv;
}

/* In the order they are asked; the last takes every location. */
static const sm_store_backend backends[] = {
#ifndef SM_WITHOUT_POSTGRESQL
    { "postgresql", 0, sm_store_is_pg, sm_store_pg_uri_check,
      sm_store_open_pg, sm_store_check_pg, NULL },
#else
    { "postgresql", 0, sm_store_is_pg, pg_missing, pg_open_missing,
      pg_check_missing, NULL },
#endif
    { "sqlite", 1, any_location, NULL, sqlite_open,
      sm_store_check_sqlite, sm_store_sqlite_init },
};
#define N_BACKENDS (sizeof(backends) / sizeof(backends[0]))

const sm_store_backend *sm_store_backend_of(const char *where)
{
    apr_size_t i;

    for (i = 0; i + 1 < N_BACKENDS; i++)
        if (backends[i].names(where))
            return &backends[i];
    return &backends[N_BACKENDS - 1];
}

void sm_store_init(void)
{
    apr_size_t i;

    for (i = 0; i < N_BACKENDS; i++)
        if (backends[i].init)
            backends[i].init();
}

int sm_store_is_file(const char *where)
{
    return sm_store_backend_of(where)->is_file;
}

int sm_store_make_new(apr_pool_t *p, const char *const *where, int n,
                      char *made)
{
    const char **files = apr_palloc(p, sizeof(*files) * (n > 0 ? n : 1));
    char *file_made = apr_palloc(p, n > 0 ? (apr_size_t)n : 1);
    int i, k = 0, count;

    for (i = 0; i < n; i++)
        if (sm_store_is_file(where[i]) && !sm_store_is_pg(where[i]))
            files[k++] = where[i];
    count = sm_sqlite_make_files(p, files, k, file_made);
    for (i = 0, k = 0; i < n; i++)
        made[i] = sm_store_is_file(where[i]) && !sm_store_is_pg(where[i])
                  ? file_made[k++] : 0;
    return count;
}

const char *sm_store_location_problem(apr_pool_t *p, const char *where)
{
    const sm_store_backend *b = sm_store_backend_of(where);

    return b->location_problem ? b->location_problem(p, where) : NULL;
}

const char *sm_store_backends(void)
{
#ifndef SM_WITHOUT_POSTGRESQL
    return "sqlite postgresql";
#else
    return "sqlite";
#endif
}

apr_status_t sm_store_open(sm_store **out, apr_pool_t *p, const char *where,
                           int flags, int busy_timeout_ms,
                           const sm_logger *log, char *errmsg,
                           apr_size_t errlen)
{
    return sm_store_open_stoppable(out, p, where, flags, busy_timeout_ms,
                                   log, NULL, errmsg, errlen);
}

apr_status_t sm_store_open_stoppable(sm_store **out, apr_pool_t *p,
                                     const char *where, int flags,
                                     int busy_timeout_ms,
                                     const sm_logger *log,
                                     const volatile int *stopping,
                                     char *errmsg, apr_size_t errlen)
{
    return sm_store_backend_of(where)->open(out, p, where, flags,
                                            busy_timeout_ms, log, stopping,
                                            errmsg, errlen);
}

apr_status_t sm_store_check(apr_pool_t *p, const char *where,
                            int busy_timeout_ms, apr_array_header_t *problems,
                            sm_store_about *about, char *errmsg,
                            apr_size_t errlen)
{
    return sm_store_backend_of(where)->check(p, where, busy_timeout_ms,
                                             problems, about, errmsg,
                                             errlen);
}

static int secret_param(const char *name, apr_size_t len)
{
    return (len == 8 && strncasecmp(name, "password", 8) == 0)
           || (len == 11 && strncasecmp(name, "sslpassword", 11) == 0);
}

/* By hand: libpq's PQconninfoParse gives the parts of a URI, but not the
 * URI back with one part replaced, and a URI it rejects must be shown
 * masked too. */
const char *sm_uri_mask(apr_pool_t *p, const char *where)
{
    const char *auth, *end, *at = NULL, *colon = NULL, *c, *query, *stop;
    char *out;

    if (!sm_store_is_pg(where))
        return where;
    auth = strstr(where, "://") + 3;
    end = auth + strcspn(auth, "/?");
    for (c = auth; c < end; c++)
        if (*c == '@')
            at = c;             /* the last one ends the user info */
    if (at)
        colon = memchr(auth, ':', (apr_size_t)(at - auth));
    query = strchr(where, '?');
    stop = query ? query : where + strlen(where);
    out = colon ? apr_pstrcat(p, apr_pstrmemdup(p, where, (apr_size_t)
                                                (colon + 1 - where)),
                              "***", apr_pstrmemdup(p, at, (apr_size_t)
                                                    (stop - at)), NULL)
                : apr_pstrmemdup(p, where, (apr_size_t)(stop - where));
    /* password=, sslpassword= (any case) among the query parameters */
    while (query) {
        const char *name = query + 1, *next = strchr(name, '&');
        const char *eq = strchr(name, '=');
        apr_size_t plen = next ? (apr_size_t)(next - query) : strlen(query);

        if (eq && (!next || eq < next)
            && secret_param(name, (apr_size_t)(eq - name)))
            out = apr_pstrcat(p, out, apr_pstrmemdup(p, query, (apr_size_t)
                                                     (eq + 1 - query)),
                              "***", NULL);
        else
            out = apr_pstrcat(p, out, apr_pstrmemdup(p, query, plen), NULL);
        query = next;
    }
    return out;
}

void sm_day_removed(apr_array_header_t *days, apr_int64_t day, apr_int64_t n)
{
    sm_day_count *d;
    int i;

    for (i = 0; i < days->nelts; i++) {
        d = &APR_ARRAY_IDX(days, i, sm_day_count);
        if (d->day == day) {
            d->removed = n;
            return;
        }
    }
    d = apr_array_push(days);
    d->day = day;
    d->added = 0;
    d->removed = n;
}

apr_status_t sm_store_news_urls(sm_store *st, const char *base,
                                apr_time_t since, int max, sm_news_fn *fn,
                                void *baton)
{
    if (!st->ops->news_urls)
        return APR_ENOTIMPL;
    return st->ops->news_urls(st, base, since, max, fn, baton);
}

apr_status_t sm_store_llms_urls(sm_store *st, const char *base, int max,
                                sm_llms_fn *fn, void *baton)
{
    if (!st->ops->llms_urls)
        return APR_ENOTIMPL;
    return st->ops->llms_urls(st, base, max, fn, baton);
}
