/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the store's unit tests: a SQLite store opened (made) or the
 * test failed, and the news sitemap's and llms.txt's readers' rows
 * collected as text. */
#ifndef UNIT_STORE_H
#define UNIT_STORE_H

#include "unit.h"

#include "store/sm_store_backend.h"

static inline sm_store *unit_sqlite_open(unit_ctx *u, const char *path)
{
    sm_store *st;
    char err[512];

    if (sm_store_open_sqlite(&st, u->pool, path, SM_STORE_CREATE, 1000,
                             NULL, err, sizeof(err)) != APR_SUCCESS)
        fail_msg("open: %s", err);
    return st;
}

/* Rows read, as "url=title@seconds after base " (news) or
 * "url=title/description " (llms.txt), appended to got. */
typedef struct {
    apr_pool_t *p;
    const char *got;
    apr_time_t base;
} seen_urls;

static inline apr_status_t unit_news_row(void *baton, const char *url,
                                         const char *title,
                                         apr_time_t published)
{
    seen_urls *s = baton;
    s->got = apr_psprintf(s->p, "%s%s=%s@%" APR_INT64_T_FMT " ", s->got, url,
                          title ? title : "-",
                          (apr_int64_t)apr_time_sec(published - s->base));
    return APR_SUCCESS;
}

static inline apr_status_t unit_llms_row(void *baton, const char *url,
                                         const char *title,
                                         const char *description,
                                         apr_time_t lastmod)
{
    seen_urls *s = baton;
    (void)lastmod;
    s->got = apr_psprintf(s->p, "%s%s=%s/%s ", s->got, url,
                          title ? title : "-",
                          description ? description : "-");
    return APR_SUCCESS;
}

#endif
