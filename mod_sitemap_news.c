/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_news.c: the Google News sitemap (SitemapNewsPath,
 * SitemapNewsPublication) and llms.txt (SitemapLLMsPath, SitemapLLMsTitle,
 * SitemapLLMsSummary, SitemapLLMsMax).  Both are written by the core
 * (src/serve/sm_news.c) from one read snapshot of the store, and served
 * by the serving layer as the other documents are (ETag, 304, HEAD, from
 * a rendition, plain or gzip, when SitemapCache is on, the 503 of a store
 * fault); this file says which URLs they are, what their headers and
 * validators are, and checks their directives. */
#include "mod_sitemap.h"
#include "mod_sitemap_config.h"

#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"

#include <apr_strings.h>

#include "serve/sm_news.h"
#include "serve/sm_sitemap.h"
#include "util/sm_gzip.h"
#include "util/sm_hash.h"

APLOG_USE_MODULE(sitemap);

int sitemap_news_claim(const sitemap_server_conf *conf, const char *uri)
{
    return (conf->news_path && strcmp(uri, conf->news_path) == 0)
           || (conf->llms_path && strcmp(uri, conf->llms_path) == 0);
}

/* ---- directives --------------------------------------------------------- */

const char *sitemap_set_news_publication(cmd_parms *cmd, void *dconf,
                                         const char *name, const char *lang)
{
    sitemap_server_conf *conf = SITEMAP_CONF(cmd->server);
    const char *err = sitemap_in_server_only(cmd);
    char *lower;
    (void)dconf;

    if (err)
        return err;
    if ((err = sm_news_text_problem(name)) != NULL)
        return apr_pstrcat(cmd->pool, "SitemapNewsPublication: the name '",
                           name, "' is not allowed: one line of text: it "
                           "is ", err, NULL);
    lower = apr_pstrdup(cmd->pool, lang);
    ap_str_tolower(lower);
    if ((err = sm_news_language_problem(lower)) != NULL)
        return apr_pstrcat(cmd->pool, "SitemapNewsPublication: the "
                           "language '", lang, "' is not allowed: ", err,
                           "; Google News wants an ISO 639 code of 2 or 3 "
                           "letters (such as en, de, fil), or zh-cn or "
                           "zh-tw for Chinese", NULL);
    conf->news_name = name;
    conf->news_lang = lower;
    return NULL;
}

static const char *dir_of(apr_pool_t *p, const char *path)
{
    return apr_pstrndup(p, path, (apr_size_t)(strrchr(path, '/') - path)
                                 + 1);
}

const char *sitemap_news_conf_problem(apr_pool_t *p,
                                      const sitemap_server_conf *conf)
{
    const char *scope = conf->base_path ? conf->base_path : "/";
    const char *others[4];
    int i;

    if (!conf->news_path && !conf->llms_path)
        return NULL;
    if (conf->news_path && !conf->news_name)
        return apr_psprintf(p, "SitemapNewsPath '%s' needs "
                            "SitemapNewsPublication NAME LANGUAGE (the "
                            "publication Google News names), such as "
                            "SitemapNewsPublication \"The Example Times\" "
                            "en", conf->news_path);
    /* The sitemaps.org rule, as for SitemapTextPath: in the site's
     * directory or above it. */
    if (conf->news_path
        && strncmp(scope, dir_of(p, conf->news_path),
                   strlen(dir_of(p, conf->news_path))) != 0)
        return apr_psprintf(p, "SitemapNewsPath '%s' is not allowed: a "
                            "sitemap may list only URLs under its own "
                            "directory (sitemaps.org), and this site's URLs "
                            "are everything under '%s'; put it in that "
                            "directory or above it (such as "
                            "%snews-sitemap.xml)", conf->news_path, scope,
                            scope);
    others[0] = sitemap_effective_path(p, conf);
    others[1] = conf->text_path;
    others[2] = conf->html_path;
    others[3] = conf->news_path;
    for (i = 0; i < 4; i++) {
        if (others[i] && conf->news_path && i < 3
            && strcmp(others[i], conf->news_path) == 0)
            return apr_psprintf(p, "SitemapNewsPath '%s' is not allowed: "
                                "another of the site's documents has that "
                                "path", conf->news_path);
        if (others[i] && conf->llms_path
            && strcmp(others[i], conf->llms_path) == 0)
            return apr_psprintf(p, "SitemapLLMsPath '%s' is not allowed: "
                                "another of the site's documents has that "
                                "path", conf->llms_path);
    }
    return NULL;
}

/* ---- the documents --------------------------------------------------------- */

typedef struct {
    int llms;                       /* llms.txt, else the news sitemap */
    apr_array_header_t *items;      /* sm_news_item or sm_llms_item */
    sm_llms_item filler;            /* the news sitemap's page when it has
                                       no article (filler.url NULL: none) */
    const char *title;              /* llms.txt's */
} news_doc;

/* What the document holds, read in the snapshot: what its validators
 * hash (the news sitemap changes with the clock too: its ETag is its
 * content's). */
static apr_status_t read_rows(sitemap_reply *rp, news_doc *d)
{
    if (d->llms)
        return sm_llms_read(rp->st, rp->r->pool, rp->own->base,
                            rp->conf->llms_max, &d->items);
    return sm_news_read(rp->st, rp->r->pool, rp->own->base,
                        rp->r->request_time, &d->items, &d->filler);
}

/* llms.txt's title: SitemapLLMsTitle, the home page's, or the host. */
static const char *llms_title(const sitemap_reply *rp, const news_doc *d)
{
    return sm_llms_title(rp->conf->llms_title, d->items,
                         rp->conf->base_path ? rp->conf->base_path : "/",
                         rp->own->base);
}

static apr_uint64_t hash_rows(apr_uint64_t tag, const news_doc *d)
{
    int i;

    for (i = 0; i < d->items->nelts; i++) {
        if (d->llms) {
            const sm_llms_item *it = &APR_ARRAY_IDX(d->items, i,
                                                    sm_llms_item);
            tag = sm_hash_str(tag, it->url);
            tag = sm_hash_str(tag, it->title ? it->title : "\1");
            tag = sm_hash_str(tag, it->description ? it->description
                                                   : "\1");
        }
        else {
            const sm_news_item *it = &APR_ARRAY_IDX(d->items, i,
                                                    sm_news_item);
            tag = sm_hash_str(tag, it->url);
            tag = sm_hash_str(tag, it->title ? it->title : "\1");
            tag = sm_hash_u64(tag, (apr_uint64_t)it->published);
        }
    }
    if (d->filler.url)
        tag = sm_hash_u64(sm_hash_str(tag, d->filler.url),
                          (apr_uint64_t)d->filler.lastmod);
    return tag;
}

/* Its content's hash, with what shapes it beside the store: the ETag
 * (seed SM_HASH_SEED) and, from another seed, the rendition key's second
 * half.  The rows are those of the window at this request's time, so
 * the key moves when an article enters or leaves it. */
static apr_uint64_t content_hash(const sitemap_reply *rp, const news_doc *d,
                                 apr_uint64_t seed)
{
    const sitemap_server_conf *conf = rp->conf;
    apr_uint64_t tag;

    tag = sm_hash_str(seed, rp->info.store_id);
    tag = sm_hash_str(tag, d->llms ? "llms" : "news");
    tag = sm_hash_str(tag, rp->own->base);
    tag = sm_hash_str(tag, d->llms ? d->title : conf->news_name);
    tag = sm_hash_str(tag, d->llms ? (conf->llms_summary ? conf->llms_summary
                                                        : "\1")
                                   : conf->news_lang);
    return hash_rows(tag, d);
}

static int news_head(sitemap_reply *rp)
{
    request_rec *r = rp->r;
    const sitemap_server_conf *conf = rp->conf;
    news_doc *d = rp->ctx;
    apr_status_t rv;

    if (rp->doc.kind == SM_DOC_EMPTY)
        return sitemap_nothing_yet(r);
    if ((rv = read_rows(rp, d)) != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, "store %s: cannot read "
                      "%s: %s", conf->db_shown, r->uri,
                      sm_store_error(rp->st));
        return HTTP_SERVICE_UNAVAILABLE;
    }
    if (d->llms)
        d->title = llms_title(rp, d);
    rp->tagged = 1;
    rp->tag = content_hash(rp, d, SM_HASH_SEED);
    rp->gzip = conf->cache == 1 && sm_accepts_gzip(apr_table_get(
                   r->headers_in, "Accept-Encoding"));
    if (conf->cache == 1)
        apr_table_mergen(r->headers_out, "Vary", "Accept-Encoding");
    if (rp->gzip) {
        apr_table_setn(r->subprocess_env, "no-gzip", "1");
        apr_table_setn(r->headers_out, "Content-Encoding", "gzip");
        rp->tag_suffix = "-gz";
    }
    ap_set_content_type(r, d->llms ? "text/plain; charset=utf-8"
                                   : "application/xml; charset=utf-8");
    apr_table_setn(r->headers_out, "X-Robots-Tag", "noindex");
    return OK;
}

static apr_status_t news_render(void *baton, apr_pool_t *p, sm_sink *sink,
                                void *sink_baton);

static apr_status_t news_body(sitemap_reply *rp, sm_sink *sink, void *baton)
{
    return news_render(rp, rp->r->pool, sink, baton);
}

static apr_status_t news_render(void *baton, apr_pool_t *p, sm_sink *sink,
                                void *sink_baton)
{
    sitemap_reply *rp = baton;
    news_doc *d = rp->ctx;

    if (d->llms)
        return sm_llms_write(p, sink, sink_baton, rp->own->base, d->title,
                             rp->conf->llms_summary, d->items);
    return sm_news_write(p, sink, sink_baton, rp->own->base,
                         rp->conf->news_name, rp->conf->news_lang, d->items,
                         d->filler.url ? &d->filler : NULL);
}

/* From its rendition when SitemapCache is on (a HEAD too: the file gives
 * its Content-Length), keyed by its content's hashes: the bytes are
 * those of the rows read in this snapshot, never an earlier window's. */
static apr_status_t news_file(sitemap_reply *rp, sitemap_file *out)
{
    news_doc *d = rp->ctx;
    sm_rend_key key;

    if (rp->conf->cache != 1)
        return APR_ENOTIMPL;
    key.a = rp->tag;
    key.b = content_hash(rp, d, ~SM_HASH_SEED);
    return sitemap_rendition_named(rp->r, rp->conf, rp->own->base,
                                   d->llms ? "llms" : "news", &key, rp->gzip,
                                   news_render, rp, out);
}

static const sitemap_doc_type news_type = { 1, news_head, news_file,
                                            news_body };

int sitemap_news_serve(request_rec *r)
{
    sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    news_doc d;

    if (conf->enabled != 1 || !sitemap_news_claim(conf, r->uri))
        return DECLINED;
    memset(&d, 0, sizeof(d));
    d.llms = conf->llms_path && strcmp(r->uri, conf->llms_path) == 0;
    return sitemap_serve(r, &news_type, SM_NAME_INDEX, &d);
}
