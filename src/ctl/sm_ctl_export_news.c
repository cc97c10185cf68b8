/* SPDX-License-Identifier: Apache-2.0 */
/* sm_ctl_export_news.c: sitemapctl export's news sitemap and llms.txt,
 * the bytes the module serves (mod_sitemap_news.c): the same store
 * reads, in one read snapshot, and the same writers (sm_news.c). */
#include "ctl/sm_ctl.h"
#include "serve/sm_news.h"

#include <apr_strings.h>

#include <string.h>

typedef struct {
    apr_pool_t *p;
    const char *base;
    const sm_export_news *opt;
    apr_array_header_t *news;           /* sm_news_item */
    apr_array_header_t *llms;           /* sm_llms_item */
    sm_llms_item filler;                /* the empty news sitemap's page */
    const char *title;                  /* llms.txt's */
} news_export;

/* The site's scope: its base URL's path with a '/' at the end. */
static const char *scope_of(apr_pool_t *p, const char *base)
{
    const char *host = strstr(base, "://"), *path;

    path = host ? strchr(host + 3, '/') : NULL;
    if (!path || !path[1])
        return "/";
    return path[strlen(path) - 1] == '/' ? path
                                         : apr_pstrcat(p, path, "/", NULL);
}

/* As the module: --llms-title, the home page's title, or the host. */
static const char *llms_title(const news_export *x)
{
    return sm_llms_title(x->opt->llms_title, x->llms,
                         scope_of(x->p, x->base), x->base);
}

/* Both documents' rows, in one snapshot; *urls: the site has URLs. */
static sm_export_status read_rows(sm_store *st, news_export *x, int *urls,
                                  char *err, apr_size_t errlen)
{
    const sm_export_news *opt = x->opt;
    sm_site_info info;
    apr_status_t rv;

    *urls = 0;
    if (sm_store_read_begin(st) != APR_SUCCESS)
        goto failed;
    rv = sm_store_site_info(st, x->p, x->base, 0, &info);
    if (rv == APR_SUCCESS && !info.known) {
        sm_store_read_end(st);
        return SM_EXPORT_UNKNOWN_SITE;
    }
    *urls = rv == APR_SUCCESS && info.pages->nelts > 0;
    if (rv == APR_SUCCESS && *urls && opt->news_path)
        rv = sm_news_read(st, x->p, x->base, apr_time_now(), &x->news,
                          &x->filler);
    if (rv == APR_SUCCESS && *urls && opt->llms_path)
        rv = sm_llms_read(st, x->p, x->base, opt->llms_max, &x->llms);
    if (rv != APR_SUCCESS)
        goto failed;
    sm_store_read_end(st);
    return SM_EXPORT_OK;
failed:
    if (err)
        apr_snprintf(err, errlen, "%s", sm_store_error(st));
    sm_store_read_end(st);
    return SM_EXPORT_STORE;
}

static apr_status_t write_news(void *baton,
                               apr_status_t (*sink)(void *, const char *,
                                                    apr_size_t),
                               void *sink_baton)
{
    news_export *x = baton;

    return sm_news_write(x->p, sink, sink_baton, x->base, x->opt->news_name,
                         x->opt->news_lang, x->news,
                         x->filler.url ? &x->filler : NULL);
}

static apr_status_t write_llms(void *baton,
                               apr_status_t (*sink)(void *, const char *,
                                                    apr_size_t),
                               void *sink_baton)
{
    news_export *x = baton;

    return sm_llms_write(x->p, sink, sink_baton, x->base, x->title,
                         x->opt->llms_summary, x->llms);
}

sm_export_status sm_ctl_export_news(apr_pool_t *p, sm_store *st,
                                    const char *base,
                                    const sm_export_news *opt,
                                    const char *dir, sm_export_result *res,
                                    char *err, apr_size_t errlen)
{
    news_export x;
    sm_export_status es;
    int urls;

    if (!opt->news_path && !opt->llms_path)
        return SM_EXPORT_OK;
    memset(&x, 0, sizeof(x));
    x.p = p;
    x.base = base;
    x.opt = opt;
    x.news = apr_array_make(p, 1, sizeof(sm_news_item));
    x.llms = apr_array_make(p, 1, sizeof(sm_llms_item));
    if ((es = read_rows(st, &x, &urls, err, errlen)) != SM_EXPORT_OK
        || !urls)
        return es;
    if (opt->news_path
        && (es = sm_ctl_export_named(p, st, dir, opt->news_path, write_news,
                                     &x, res, err, errlen)) != SM_EXPORT_OK)
        return es;
    if (opt->llms_path) {
        x.title = llms_title(&x);
        es = sm_ctl_export_named(p, st, dir, opt->llms_path, write_llms, &x,
                                 res, err, errlen);
    }
    return es;
}
