/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_views.c: the sitemap for people: the module's CSS
 * (SitemapStylesheet On), the plain-text sitemap (SitemapTextPath) and the
 * HTML site map (SitemapHTMLPath).  The documents are written by the core
 * (sm_document.c, sm_html.c) from one read snapshot of the store, as the
 * XML is; this file claims the URLs and answers HTTP (ETag, 304, HEAD). */
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

#define VIEW_HANDLER "sitemap-view"
#define RETRY_AFTER "60"

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

/* Claimed like SitemapPath: whatever the document root holds. */
int sitemap_views_translate_name(request_rec *r)
{
    sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    apr_int64_t name;

    if (conf->enabled != 1 || !conf->site.base || r->main || !r->uri
        || r->uri[0] != '/' || !view_of(conf, r->uri, &name))
        return DECLINED;
    return sitemap_claim(r, VIEW_HANDLER);
}

/* ---- HTTP ------------------------------------------------------------------ */

static void set_validators(request_rec *r, apr_uint64_t tag, apr_time_t mtime)
{
    apr_table_setn(r->headers_out, "ETag",
                   apr_psprintf(r->pool, "\"%016" APR_UINT64_T_HEX_FMT "\"",
                                tag));
    if (mtime) {
        ap_update_mtime(r, mtime);
        ap_set_last_modified(r);
    }
}

/* 304 through the normal filters (as the XML handler does, for
 * mod_cache), or the status of the conditions; OK: send the body. */
static int conditions(request_rec *r)
{
    int status = ap_meets_conditions(r);

    if (status == HTTP_NOT_MODIFIED)
        return sitemap_not_modified(r) == OK ? DONE : AP_FILTER_ERROR;
    return status;
}

static int serve_css(request_rec *r, const sitemap_server_conf *conf)
{
    int status;

    ap_set_content_type(r, "text/css; charset=utf-8");
    set_validators(r, sm_hash_str(SM_HASH_SEED, sm_css), conf->loaded);
    if ((status = conditions(r)) != OK)
        return status == DONE ? OK : status;
    /* Also for a HEAD: an encoding filter then gives it the GET's headers
     * (Content-Length, ETag); httpd drops the body. */
    ap_set_content_length(r, (apr_off_t)strlen(sm_css));
    ap_rputs(sm_css, r);
    return OK;
}

static apr_status_t to_client(void *baton, const char *data, apr_size_t len)
{
    request_rec *r = baton;
    return ap_rwrite(data, (int)len, r) < 0 ? APR_ECONNABORTED : APR_SUCCESS;
}

/* One read snapshot of the site, for the page name names. */
typedef struct {
    sm_store *st;
    sm_site_info info;
    sm_doc doc;
    sm_doc_site site;
    apr_uint64_t tag;       /* the store, the configuration, the pages */
    apr_time_t mtime;
} snapshot;

/* 503; said in the log at most once a minute per process (a race only
 * logs twice): a store fault must not flood it. */
static int unavailable(request_rec *r, const sitemap_server_conf *conf,
                       const char *why)
{
    static apr_time_t last;
    apr_time_t now = apr_time_now();

    if (!last || now - last >= apr_time_from_sec(60)) {
        last = now;
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "store %s cannot be read "
                      "(%s): answering 503 to %s", conf->db_shown, why,
                      r->uri);
    }
    apr_table_setn(r->err_headers_out, "Retry-After", RETRY_AFTER);
    return HTTP_SERVICE_UNAVAILABLE;
}

static int snapshot_open(request_rec *r, const sitemap_server_conf *conf,
                         apr_int64_t name, snapshot *s)
{
    const sm_site_conf *own = sitemap_site_to_read(r, conf);
    char err[256];
    int i;

    /* A mass vhost's Host without a site has no views. */
    if (!own)
        return HTTP_NOT_FOUND;
    if (!(s->st = sm_readers_acquire(conf->proc->readers, err, sizeof(err))))
        return unavailable(r, conf, err);
    if (sm_store_read_begin(s->st) != APR_SUCCESS
        || sm_store_site_info(s->st, r->pool, own->base, name, &s->info)
           != APR_SUCCESS) {
        const char *why = apr_pstrdup(r->pool, sm_store_error(s->st));
        sm_store_read_end(s->st);
        sm_readers_invalidate(conf->proc->readers, s->st);
        return unavailable(r, conf, why);
    }
    sm_doc_choose(&s->info, name, &s->doc);
    s->site.base = own->base;
    s->site.sitemap_path = conf->sitemap_path;
    s->site.changefreq = conf->changefreq;
    s->site.priority = conf->priority;
    s->site.stylesheet = conf->stylesheet;
    s->site.max_bytes = 0;
    s->tag = sm_hash_str(SM_HASH_SEED, s->info.store_id);
    s->tag = sm_hash_u64(s->tag, conf->config_tag);
    s->tag = sm_hash_u64(s->tag, (apr_uint64_t)name);
    s->mtime = s->info.settings_changed;
    for (i = 0; i < s->info.pages->nelts; i++) {
        const sm_page_info *pi = &APR_ARRAY_IDX(s->info.pages, i,
                                                sm_page_info);
        s->tag = sm_hash_u64(s->tag, (apr_uint64_t)pi->page);
        s->tag = sm_hash_u64(s->tag, (apr_uint64_t)pi->version);
        if (pi->changed > s->mtime)
            s->mtime = pi->changed;
    }
    if (conf->loaded > s->mtime
        && (!s->info.settings
            || strcmp(s->info.settings, own->settings) != 0))
        s->mtime = conf->loaded;
    return OK;
}

static void snapshot_close(const sitemap_server_conf *conf, snapshot *s,
                           apr_status_t rv)
{
    sm_store_read_end(s->st);
    if (rv == APR_SUCCESS)
        sm_readers_release(conf->proc->readers, s->st);
    else
        sm_readers_invalidate(conf->proc->readers, s->st);
}

/* The body failed after the headers went out: close the connection so the
 * client sees a broken response rather than a short one. */
static void body_failed(request_rec *r, const sitemap_server_conf *conf,
                        snapshot *s, apr_status_t rv)
{
    ap_log_rerror(APLOG_MARK, APLOG_INFO, rv, r, "store %s: %s not finished:"
                  " %s", conf->db_shown, r->uri, sm_store_error(s->st));
    r->connection->keepalive = AP_CONN_CLOSE;
    r->connection->aborted = 1;
}

/* SitemapTextPath: the only page (or the root) at the path itself, pages
 * at "<stem>-N.txt"; a site of several pages has no text document at
 * SitemapTextPath (the protocol has no text index): 404 saying so. */
static int serve_text(request_rec *r, const sitemap_server_conf *conf,
                      apr_int64_t name)
{
    snapshot s;
    int status;
    apr_status_t rv;

    if ((status = snapshot_open(r, conf, name, &s)) != OK)
        return status;
    if (s.doc.kind != SM_DOC_URLSET) {
        snapshot_close(conf, &s, APR_SUCCESS);
        return s.doc.kind == SM_DOC_EMPTY ? sitemap_nothing_yet(r)
                                          : HTTP_NOT_FOUND;
    }
    ap_set_content_type(r, "text/plain; charset=utf-8");
    apr_table_setn(r->headers_out, "X-Robots-Tag", "noindex");
    set_validators(r, sm_hash_str(s.tag, "text"), s.mtime);
    if ((status = conditions(r)) != OK || r->header_only) {
        snapshot_close(conf, &s, APR_SUCCESS);
        return status == DONE ? OK : status;
    }
    rv = sm_doc_write_text(r->pool, s.st, &s.site, &s.doc, to_client, r,
                           NULL);
    if (rv != APR_SUCCESS)
        body_failed(r, conf, &s, rv);
    snapshot_close(conf, &s, rv);
    return OK;
}

/* SitemapHTMLPath: page 1 at the path itself ("<stem>-1.html" is the same
 * page), the others at "<stem>-N.html". */
static int serve_html(request_rec *r, const sitemap_server_conf *conf,
                      apr_int64_t name)
{
    snapshot s;
    sm_html_site hs;
    sm_html_page hp;
    int status;
    apr_status_t rv;

    /* Every HTML page is cut from the whole site's store pages. */
    if ((status = snapshot_open(r, conf, SM_NAME_INDEX, &s)) != OK)
        return status;
    memset(&hs, 0, sizeof(hs));
    hs.base = s.site.base;
    hs.html_path = conf->html_path;
    hs.stylesheet = conf->html_stylesheet ? conf->html_stylesheet
                                          : conf->own_css_path;
    hs.server_name = r->server->server_hostname;
    if (!sm_html_locate(&s.info, name ? name : 1, &hp)) {
        snapshot_close(conf, &s, APR_SUCCESS);
        return HTTP_NOT_FOUND;
    }
    ap_set_content_type(r, "text/html; charset=utf-8");
    /* For visitors, and crawlers may follow its links; but it is made from
     * the store, so it is not recorded into it (the rules skip noindex). */
    apr_table_setn(r->headers_out, "X-Robots-Tag", "noindex, follow");
    set_validators(r, sm_hash_u64(sm_hash_str(s.tag, "html"),
                                  (apr_uint64_t)hp.number), s.mtime);
    if ((status = conditions(r)) != OK || r->header_only) {
        snapshot_close(conf, &s, APR_SUCCESS);
        return status == DONE ? OK : status;
    }
    rv = sm_html_write(r->pool, s.st, &hs, &s.info, &hp, to_client, r);
    if (rv != APR_SUCCESS)
        body_failed(r, conf, &s, rv);
    snapshot_close(conf, &s, rv);
    return OK;
}

int sitemap_views_handler(request_rec *r)
{
    sitemap_server_conf *conf;
    apr_int64_t name;
    view_kind kind;
    int status;

    if (!r->handler || strcmp(r->handler, VIEW_HANDLER) != 0)
        return DECLINED;
    conf = SITEMAP_CONF(r->server);
    if (conf->enabled != 1 || !(kind = view_of(conf, r->uri, &name)))
        return DECLINED;
    if (name < 0)
        return HTTP_NOT_FOUND;
    if ((status = sitemap_methods(r)) != DECLINED)
        return status;
    if (kind == VIEW_CSS)
        return serve_css(r, conf);
    if (!conf->proc->readers)
        return unavailable(r, conf, "no reader in this process");
    return kind == VIEW_TEXT ? serve_text(r, conf, name)
                             : serve_html(r, conf, name);
}
