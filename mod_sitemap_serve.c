/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_serve.c: the serving layer every document of the module goes
 * through (mod_sitemap.h, sitemap_doc_type): the one translate_name that
 * claims the module's URLs, the one handler that dispatches them, and
 * sitemap_serve: the methods, a read snapshot, validators, 304 and HEAD,
 * the store's faults as one 503, the body, the snapshot closed once. */
#include "mod_sitemap.h"

#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"

#include <apr_strings.h>

#include "serve/sm_sitemap.h"
#include "util/sm_gzip.h"

APLOG_USE_MODULE(sitemap);

#define RETRY_AFTER "60"
#define LOG_503_EVERY apr_time_from_sec(60)

/* ---- claiming the URLs --------------------------------------------------- */

/* A URL one of our handlers answers, whatever the document root holds:
 * its filename is no file's, so that map_to_storage skips it. */
int sitemap_claim(request_rec *r, const char *handler)
{
    sitemap_decode_etags(r);
    r->handler = handler;
    r->filename = apr_pstrcat(r->pool, "sitemap:", r->uri, NULL);
    return OK;
}

static void index_path(sitemap_server_conf *conf, const char *path)
{
    unsigned char c;

    if (!path || path[0] != '/')
        return;
    c = (unsigned char)path[1];
    conf->own_url_second[c >> 5] |= (apr_uint32_t)1 << (c & 31);
}

/* Every path the checks below claim in a vhost with Sitemap On begins
 * with one of these (SitemapPath's pages and .gz share its first two
 * bytes, as the views' pages share theirs). */
void sitemap_own_urls_index(sitemap_server_conf *conf)
{
    memset(conf->own_url_second, 0, sizeof(conf->own_url_second));
    index_path(conf, conf->sitemap_path);
    index_path(conf, conf->own_css_path);
    index_path(conf, conf->text_path);
    index_path(conf, conf->html_path);
    index_path(conf, conf->news_path);
    index_path(conf, conf->llms_path);
    index_path(conf, conf->indexnow_key_path);
}

/* Could uri ("/...") be one of the site's own URLs?  One test for the
 * most requests, whose URIs are none of them. */
static APR_INLINE int maybe_own_url(const sitemap_server_conf *conf,
                                    const char *uri)
{
    unsigned char c = (unsigned char)uri[1];

    return (conf->own_url_second[c >> 5] >> (c & 31)) & 1;
}

/* The module's URLs belong to it, whatever the document root or later
 * rewrites, ProxyPass or a front controller would make of them: in vhosts
 * with Sitemap On, SitemapPath and its pages (and .gz), the views, the
 * CSS; a <Location> with SetHandler sitemap-status; the IndexNow key file
 * (IndexNow On needs Sitemap On).  Run first (before mod_rewrite), for
 * every request: a URI whose second byte begins none of the site's paths
 * goes straight to the prefetch. */
SM_HOT int sitemap_translate_name(request_rec *r)
{
    sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    int gz, site = conf->enabled == 1 && conf->site.base, maybe;

    if (r->main || !r->uri || r->uri[0] != '/')
        return DECLINED;
    maybe = site && maybe_own_url(conf, r->uri);
    if (maybe && sm_name_parse_gz(conf->sitemap_path, r->uri, &gz)
                 != SM_NAME_NOT_OURS)
        return sitemap_claim(r, SITEMAP_XML_HANDLER);
    if (maybe && sitemap_views_claim(conf, r->uri))
        return sitemap_claim(r, SITEMAP_VIEW_HANDLER);
    if (maybe && sitemap_news_claim(conf, r->uri))
        return sitemap_claim(r, SITEMAP_NEWS_HANDLER);
    if (sitemap_status_claim(r))
        return sitemap_claim(r, SITEMAP_STATUS_HANDLER);
    if (maybe && sitemap_indexnow_claim(r, conf))
        return sitemap_claim(r, SITEMAP_KEY_HANDLER);
    if (site)
        sitemap_record_prefetch(r, conf);
    return DECLINED;
}

/* Not a file: no directory walk, no stat (as mod_proxy does), for what
 * sitemap_claim claimed (its handler still ours: nothing replaced it). */
SM_HOT int sitemap_map_to_storage(request_rec *r)
{
    /* A file's name begins with '/': one byte decides for most. */
    if (r->filename && r->filename[0] == 's'
        && strncmp(r->filename, "sitemap:", 8) == 0
        && r->handler && strncmp(r->handler, "sitemap", 7) == 0)
        return OK;
    return DECLINED;
}

/* Every request asks: only the module's own documents go further. */
SM_HOT int sitemap_handler(request_rec *r)
{
    const char *h = r->handler;

    if (!h || h[0] != 's' || strncmp(h, "sitemap", 7) != 0)
        return DECLINED;
    if (!h[7])
        return sitemap_xml_serve(r);
    if (strcmp(h, SITEMAP_VIEW_HANDLER) == 0)
        return sitemap_views_serve(r);
    if (strcmp(h, SITEMAP_STATUS_HANDLER) == 0)
        return sitemap_status_serve(r);
    if (strcmp(h, SITEMAP_KEY_HANDLER) == 0)
        return sitemap_indexnow_key_handler(r);
    if (strcmp(h, SITEMAP_NEWS_HANDLER) == 0)
        return sitemap_news_serve(r);
    return DECLINED;
}

/* The module's filters of the middle (insert_filter, APR_HOOK_MIDDLE):
 * robots.txt's Sitemap lines, then the head reader, in that order as
 * when each had its hook; one hook and one check of the vhost for both.
 * robots.txt is the client's request's path (robots_wanted decides):
 * "/r" rules out most before a call. */
SM_HOT void sitemap_insert_filters(request_rec *r)
{
    const sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    const request_rec *orig = r;
    const char *path;

    if (conf->enabled != 1 || r->main)
        return;
    while (orig->prev)
        orig = orig->prev;
    path = orig->parsed_uri.path;
    if (path && path[0] == '/' && path[1] == 'r')
        sitemap_robots_insert_filter(r);
    sitemap_head_insert_filter(r);
}

/* ---- answers every document shares --------------------------------------- */

int sitemap_nothing_yet(request_rec *r)
{
    ap_custom_response(r, HTTP_NOT_FOUND, "No page of this site has been "
                       "recorded yet: mod_sitemap lists the pages this "
                       "server answers with 200 once they are served.\n");
    return HTTP_NOT_FOUND;
}

/* A 304 answered through the normal filters, not the error path:
 * mod_cache's save filter must see the 304 to its own revalidation (the
 * error path drops it).  OK, or AP_FILTER_ERROR. */
int sitemap_not_modified(request_rec *r)
{
    apr_bucket_brigade *bb = apr_brigade_create(r->pool,
                                                r->connection->bucket_alloc);

    r->status = HTTP_NOT_MODIFIED;
    sitemap_etag_as_sent(r);
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(
                            r->connection->bucket_alloc));
    return ap_pass_brigade(r->output_filters, bb) == APR_SUCCESS
           ? OK : AP_FILTER_ERROR;
}

/* 503 for a store that cannot be read.  Anyone can ask for the documents
 * as often as they like, so the fault is logged at most once a minute per
 * process, with the number of 503s since the last line (the other
 * requests log at debug level).  Threads race on the two counters: at
 * worst a line is logged twice or a count is off by a few. */
static int unavailable(request_rec *r, const sitemap_server_conf *conf,
                       const char *why)
{
    static apr_time_t last_logged;
    static apr_uint32_t unlogged;
    apr_time_t now = apr_time_now();

    if (!last_logged || now - last_logged >= LOG_503_EVERY) {
        last_logged = now;
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "store %s cannot be read "
                      "(%s): answering 503 to %s (%u more times in the last "
                      "minute; logged at most once a minute per process)",
                      conf->db_shown, why, r->uri, unlogged);
        unlogged = 0;
    }
    else {
        unlogged++;
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, "store %s cannot be "
                      "read (%s): answering 503 to %s", conf->db_shown, why,
                      r->uri);
    }
    apr_table_setn(r->err_headers_out, "Retry-After", RETRY_AFTER);
    return HTTP_SERVICE_UNAVAILABLE;
}

/* The body could not be finished after the headers went out: make the
 * response visibly broken (no last chunk, connection closed), as
 * mod_proxy does for a backend that fails mid-body. */
static void abort_response(request_rec *r)
{
    conn_rec *c = r->connection;
    apr_bucket_brigade *bb = apr_brigade_create(r->pool, c->bucket_alloc);

    ap_rflush(r);
    APR_BRIGADE_INSERT_TAIL(bb, ap_bucket_error_create(HTTP_BAD_GATEWAY, NULL,
                                                       r->pool,
                                                       c->bucket_alloc));
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(c->bucket_alloc));
    ap_pass_brigade(r->output_filters, bb);
    c->keepalive = AP_CONN_CLOSE;
}

/* ---- read snapshots ------------------------------------------------------ */

sm_store *sitemap_read_begin(const sitemap_server_conf *conf, char *err,
                             apr_size_t len)
{
    sm_store *st;

    if (!conf->proc->readers) {
        apr_cpystrn(err, "no reader in this process", len);
        return NULL;
    }
    if (!(st = sm_readers_acquire(conf->proc->readers, err, len)))
        return NULL;
    if (sm_store_read_begin(st) != APR_SUCCESS) {
        apr_cpystrn(err, sm_store_error(st), len);
        sitemap_read_end(conf, st, 0);
        return NULL;
    }
    return st;
}

void sitemap_read_end(const sitemap_server_conf *conf, sm_store *st, int ok)
{
    sm_store_read_end(st);
    if (ok)
        sm_readers_release(conf->proc->readers, st);
    else
        sm_readers_invalidate(conf->proc->readers, st);
}

/* ---- serving ------------------------------------------------------------- */

/* The client's sink: the first failure, and whether a byte went to the
 * output filters (after that, a fault cannot become a clean 503). */
typedef struct {
    request_rec *r;
    apr_status_t out;
    int sent;
} client_sink;

static apr_status_t to_client(void *baton, const char *data, apr_size_t len)
{
    client_sink *cs = baton;

    cs->sent = 1;
    if (ap_rwrite(data, (int)len, cs->r) < 0) {
        cs->out = APR_ECONNABORTED;
        return cs->out;
    }
    /* A HEAD: once bytes passed httpd's content_length filter the headers
     * are out and the rest would be dropped; it is not made (APR_EOF is
     * no fault: the client's answer is complete). */
    if (cs->r->header_only && cs->r->bytes_sent) {
        cs->out = APR_EOF;
        return cs->out;
    }
    return APR_SUCCESS;
}

/* A sink that only counts (a HEAD's Content-Length). */
static apr_status_t count_only(void *baton, const char *data, apr_size_t len)
{
    (void)data;
    *(apr_off_t *)baton += (apr_off_t)len;
    return APR_SUCCESS;
}

/* One response on its way: the reply the document fills, and what the
 * serving layer keeps for the end. */
typedef struct {
    sitemap_reply rp;
    client_sink client;
    sitemap_file file;
    int has_file;               /* send file */
    const char *fault;          /* the store failed (NULL: it did not) */
    apr_status_t fault_rv;
} serving;

static void store_fault(serving *sv, apr_status_t rv, const char *why)
{
    sv->fault = apr_pstrdup(sv->rp.r->pool, why);
    sv->fault_rv = rv;
}

/* The site's snapshot, and the document chosen in it. */
static int snapshot_open(serving *sv)
{
    sitemap_reply *rp = &sv->rp;
    const sitemap_server_conf *conf = rp->conf;
    char err[256];
    apr_status_t rv;

    if (!(rp->st = sitemap_read_begin(conf, err, sizeof(err)))) {
        store_fault(sv, APR_EGENERAL, err);
        return HTTP_SERVICE_UNAVAILABLE;
    }
    rv = sm_store_site_info(rp->st, rp->r->pool, rp->own->base, rp->name,
                            &rp->info);
    if (rv != APR_SUCCESS) {
        store_fault(sv, rv, sm_store_error(rp->st));
        return HTTP_SERVICE_UNAVAILABLE;
    }
    sm_doc_choose(&rp->info, rp->name, &rp->doc);
    rp->site.base = rp->own->base;
    rp->site.sitemap_path = conf->sitemap_path;
    rp->site.changefreq = conf->changefreq;
    rp->site.priority = conf->priority;
    rp->site.stylesheet = conf->stylesheet;
    rp->site.max_bytes = 0;             /* the protocol's */
    rp->site.images = conf->images == 1;
    return OK;
}

/* ETag and Last-Modified, and the conditions they answer: OK (go on),
 * 304, or a precondition's status.  No validator, no condition. */
static int validators(sitemap_reply *rp)
{
    request_rec *r = rp->r;

    if (rp->tagged)
        apr_table_setn(r->headers_out, "ETag",
                       apr_psprintf(r->pool, "\"%016" APR_UINT64_T_HEX_FMT
                                    "%s\"", rp->tag,
                                    rp->tag_suffix ? rp->tag_suffix : ""));
    if (rp->mtime) {
        ap_update_mtime(r, rp->mtime);
        ap_set_last_modified(r);
    }
    if (!rp->tagged && !rp->mtime)
        return OK;
    return ap_meets_conditions(r);
}

/* The body to sink, gzip-compressed when the reply is: the body's status
 * (APR_ENOMEM when zlib could not start: *no_zlib set). */
static apr_status_t render(serving *sv, const sitemap_doc_type *type,
                           sm_sink *sink, void *baton, int *no_zlib)
{
    sitemap_reply *rp = &sv->rp;
    sm_gzip *gz = NULL;
    apr_status_t rv;

    *no_zlib = 0;
    if (rp->gzip && sm_gzip_create(&gz, rp->r->pool, SM_GZIP_LEVEL, sink,
                                   baton) != APR_SUCCESS) {
        *no_zlib = 1;
        return APR_ENOMEM;
    }
    rv = type->body(rp, gz ? sm_gzip_write : sink, gz ? (void *)gz : baton);
    if (gz && rv == APR_SUCCESS)
        rv = sm_gzip_finish(gz);
    return rv;
}

/* The body streamed as it is written (gzip as a rendition would be). */
static int stream(serving *sv, const sitemap_doc_type *type)
{
    sitemap_reply *rp = &sv->rp;
    apr_status_t rv;
    int no_zlib;

    rv = render(sv, type, to_client, &sv->client, &no_zlib);
    if (no_zlib)
        return HTTP_INTERNAL_SERVER_ERROR;
    /* Done, or the client is gone (nothing wrong with the store). */
    if (rv == APR_SUCCESS || sv->client.out != APR_SUCCESS)
        return OK;
    store_fault(sv, rv, rp->st ? sm_store_error(rp->st) : "");
    /* Nothing left the writer's buffer yet (the XML's is 16 KiB): the
     * answer can still be a clean 503. */
    return sv->client.sent ? OK : HTTP_SERVICE_UNAVAILABLE;
}

/* A HEAD of a document without a file: the GET's headers, Content-Length
 * included.  The length is counted by a render that only counts; then the
 * GET's body goes down the filters until the headers are out (to_client),
 * so that an encoding filter says what it says to the GET: mod_deflate
 * drops the length and compresses, and httpd counts what it makes when it
 * all fits the first brigade, as for a static file; the HEAD never claims
 * the plain length for a compressed body.  Costs a GET's render. */
static int head_only(serving *sv, const sitemap_doc_type *type)
{
    sitemap_reply *rp = &sv->rp;
    apr_off_t len = 0;
    apr_status_t rv;
    int no_zlib;

    rv = render(sv, type, count_only, &len, &no_zlib);
    if (no_zlib)
        return HTTP_INTERNAL_SERVER_ERROR;
    if (rv != APR_SUCCESS) {
        store_fault(sv, rv, rp->st ? sm_store_error(rp->st) : "");
        return HTTP_SERVICE_UNAVAILABLE;
    }
    ap_set_content_length(rp->r, len);
    return stream(sv, type);
}

/* Everything done with the snapshot open: the status, or OK with a file,
 * bytes or nothing more to send. */
static int produce(serving *sv, const sitemap_doc_type *type)
{
    sitemap_reply *rp = &sv->rp;
    int status;

    if (type->reads_store && (status = snapshot_open(sv)) != OK)
        return status;
    if ((status = type->head(rp)) != OK
        || (status = validators(rp)) != OK)
        return status;
    if (rp->bytes)
        return OK;
    /* From a file, the snapshot is let go before the bytes are sent,
     * however slow the client. */
    if (type->file && type->file(rp, &sv->file) == APR_SUCCESS) {
        sv->has_file = 1;
        return OK;
    }
    if (rp->r->header_only)
        return head_only(sv, type);
    return stream(sv, type);
}

/* Answer after a store fault: a clean 503 when nothing was sent (without
 * what head said of a document that is not sent), else a broken body. */
static int faulted(serving *sv, int status)
{
    request_rec *r = sv->rp.r;

    if (status == HTTP_SERVICE_UNAVAILABLE) {
        r->content_type = NULL;
        apr_table_unset(r->headers_out, "ETag");
        apr_table_unset(r->headers_out, "Last-Modified");
        apr_table_unset(r->headers_out, "X-Robots-Tag");
        apr_table_unset(r->headers_out, "Vary");
        apr_table_unset(r->headers_out, "Content-Encoding");
        return unavailable(r, sv->rp.conf, sv->fault);
    }
    ap_log_rerror(APLOG_MARK, APLOG_ERR, sv->fault_rv, r, "store %s failed "
                  "while streaming %s: %s", sv->rp.conf->db_shown, r->uri,
                  sv->fault);
    abort_response(r);
    return OK;
}

int sitemap_serve(request_rec *r, const sitemap_doc_type *type,
                  apr_int64_t name, void *ctx)
{
    serving sv;
    int status;

    sv.rp.r = r;
    sv.rp.conf = SITEMAP_CONF(r->server);
    sv.rp.name = name;
    sv.rp.ctx = ctx;
    sv.rp.own = NULL;
    sv.rp.st = NULL;
    sv.rp.tagged = 0;
    sv.rp.tag_suffix = NULL;
    sv.rp.mtime = 0;
    sv.rp.gzip = 0;
    sv.rp.bytes = NULL;
    sv.client.r = r;
    sv.client.out = APR_SUCCESS;
    sv.client.sent = 0;
    sv.has_file = 0;
    sv.fault = NULL;
    /* A mass vhost's Host that is not allowed has no documents; an
     * allowed one without a place here has what the store has of it. */
    if (type->reads_store
        && !(sv.rp.own = sitemap_site_to_read(r, sv.rp.conf)))
        return HTTP_NOT_FOUND;
    if ((status = sitemap_methods(r)) != DECLINED)
        return status;
    status = produce(&sv, type);
    if (sv.rp.st)               /* the one place a snapshot ends */
        sitemap_read_end(sv.rp.conf, sv.rp.st, !sv.fault);
    if (sv.fault)
        return faulted(&sv, status);
    if (status == HTTP_NOT_MODIFIED)
        return sitemap_not_modified(r);
    if (status != OK)
        return status;
    if (sv.has_file)
        return sitemap_send_file(r, &sv.file);
    if (sv.rp.bytes) {
        ap_set_content_length(r, (apr_off_t)strlen(sv.rp.bytes));
        ap_rputs(sv.rp.bytes, r);
    }
    return OK;
}
