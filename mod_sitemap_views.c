/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_views.c: the sitemap for people: the module's CSS
 * (SitemapStylesheet On), the plain-text sitemap (SitemapTextPath) and the
 * HTML site map (SitemapHTMLPath).  The documents are written by the core
 * (sm_document.c, sm_html.c) from one read snapshot of the store, as the
 * XML is; this file says which URLs are the views and what each one's
 * headers, validators and body are; the serving layer
 * (mod_sitemap_serve.c) answers HTTP (ETag, 304, HEAD, 503). */
#include "mod_sitemap.h"

#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"

#include <apr_strings.h>

#include "serve/sm_css.h"
#include "serve/sm_document.h"
#include "util/sm_hash.h"
#include "serve/sm_html_map.h"
#include "serve/sm_sitemap.h"

APLOG_USE_MODULE(sitemap);

typedef enum { VIEW_CSS = 1, VIEW_TEXT, VIEW_HTML } view_kind;

/* Which of our views uri names (0: none); *name the page (sm_name_parse). */
static view_kind view_of(const sitemap_server_conf *conf, const char *uri,
                         apr_int64_t *name)
{
    *name = SM_NAME_INDEX;
    if (conf->own_css_path && strcmp(uri, conf->own_css_path) == 0)
        return VIEW_CSS;
    if (conf->text_path
        && (*name = sm_name_parse(conf->text_path, uri)) != SM_NAME_NOT_OURS)
        return VIEW_TEXT;
    if (conf->html_path
        && (*name = sm_name_parse(conf->html_path, uri)) != SM_NAME_NOT_OURS)
        return VIEW_HTML;
    return 0;
}

/* Claimed like SitemapPath (sitemap_translate_name), in vhosts with
 * Sitemap On: whatever the document root holds. */
int sitemap_views_claim(const sitemap_server_conf *conf, const char *uri)
{
    apr_int64_t name;

    return view_of(conf, uri, &name) != 0;
}

/* ---- the documents --------------------------------------------------------- */

/* The built-in CSS: fixed bytes, also for a HEAD (an encoding filter then
 * gives it the GET's headers, Content-Length and ETag; httpd drops the
 * body). */
static int css_head(sitemap_reply *rp)
{
    ap_set_content_type(rp->r, "text/css; charset=utf-8");
    rp->tagged = 1;
    rp->tag = sm_hash_str(SM_HASH_SEED, sm_css);
    rp->mtime = rp->conf->loaded;
    rp->bytes = sm_css;
    return OK;
}

/* The validators of a view: the store, the configuration, the name read
 * and every page's version; the newest change. */
static void view_validators(sitemap_reply *rp, const char *view)
{
    const sitemap_server_conf *conf = rp->conf;
    apr_uint64_t tag;
    apr_time_t mtime;
    int i;

    tag = sm_hash_str(SM_HASH_SEED, rp->info.store_id);
    tag = sm_hash_u64(tag, conf->config_tag);
    tag = sm_hash_u64(tag, (apr_uint64_t)rp->name);
    mtime = rp->info.settings_changed;
    for (i = 0; i < rp->info.pages->nelts; i++) {
        const sm_page_info *pi = &APR_ARRAY_IDX(rp->info.pages, i,
                                                sm_page_info);
        tag = sm_hash_u64(tag, (apr_uint64_t)pi->page);
        tag = sm_hash_u64(tag, (apr_uint64_t)pi->version);
        if (pi->changed > mtime)
            mtime = pi->changed;
    }
    if (conf->loaded > mtime
        && (!rp->info.settings
            || strcmp(rp->info.settings, rp->own->settings) != 0))
        mtime = conf->loaded;
    rp->tagged = 1;
    rp->tag = sm_hash_str(tag, view);
    rp->mtime = mtime;
}

/* SitemapTextPath: the only page (or the root) at the path itself, pages
 * at "<stem>-N.txt"; a site of several pages has no text document at
 * SitemapTextPath (the protocol has no text index): 404 saying so. */
static int text_head(sitemap_reply *rp)
{
    if (rp->doc.kind != SM_DOC_URLSET)
        return rp->doc.kind == SM_DOC_EMPTY ? sitemap_nothing_yet(rp->r)
                                            : HTTP_NOT_FOUND;
    ap_set_content_type(rp->r, "text/plain; charset=utf-8");
    apr_table_setn(rp->r->headers_out, "X-Robots-Tag", "noindex");
    view_validators(rp, "text");
    return OK;
}

static apr_status_t text_body(sitemap_reply *rp, sm_sink *sink, void *baton)
{
    return sm_doc_write_text(rp->r->pool, rp->st, &rp->site, &rp->doc, sink,
                             baton, NULL);
}

/* SitemapHTMLPath: page 1 at the path itself ("<stem>-1.html" is the same
 * page), the others at "<stem>-N.html"; every page is cut from the whole
 * site's store pages (the snapshot of SM_NAME_INDEX). */
typedef struct {
    apr_int64_t name;           /* the HTML page the URL names */
    sm_html_site hs;
    sm_html_page hp;
} html_view;

static int html_head(sitemap_reply *rp)
{
    html_view *v = rp->ctx;
    const sitemap_server_conf *conf = rp->conf;

    memset(&v->hs, 0, sizeof(v->hs));
    v->hs.base = rp->site.base;
    v->hs.html_path = conf->html_path;
    v->hs.stylesheet = conf->html_stylesheet ? conf->html_stylesheet
                                             : conf->own_css_path;
    v->hs.server_name = rp->r->server->server_hostname;
    if (!sm_html_locate(&rp->info, v->name ? v->name : 1, &v->hp))
        return HTTP_NOT_FOUND;
    ap_set_content_type(rp->r, "text/html; charset=utf-8");
    /* For visitors, and crawlers may follow its links; but it is made from
     * the store, so it is not recorded into it (the rules skip noindex). */
    apr_table_setn(rp->r->headers_out, "X-Robots-Tag", "noindex, follow");
    view_validators(rp, "html");
    rp->tag = sm_hash_u64(rp->tag, (apr_uint64_t)v->hp.number);
    return OK;
}

static apr_status_t html_body(sitemap_reply *rp, sm_sink *sink, void *baton)
{
    html_view *v = rp->ctx;

    return sm_html_write(rp->r->pool, rp->st, &v->hs, &rp->info, &v->hp,
                         sink, baton);
}

static const sitemap_doc_type css_type = { 0, css_head, NULL, NULL };
static const sitemap_doc_type text_type = { 1, text_head, NULL, text_body };
static const sitemap_doc_type html_type = { 1, html_head, NULL, html_body };

int sitemap_views_serve(request_rec *r)
{
    sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    apr_int64_t name;
    view_kind kind;
    html_view v;

    if (conf->enabled != 1 || !(kind = view_of(conf, r->uri, &name)))
        return DECLINED;
    if (name < 0)
        return HTTP_NOT_FOUND;
    if (kind == VIEW_CSS)
        return sitemap_serve(r, &css_type, name, NULL);
    if (kind == VIEW_TEXT)
        return sitemap_serve(r, &text_type, name, NULL);
    v.name = name;
    return sitemap_serve(r, &html_type, SM_NAME_INDEX, &v);
}
