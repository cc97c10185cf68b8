/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_robots.c: advertise the sitemap in /robots.txt.
 *
 * An output filter (after the filters that make content, before those that
 * compress it) adds "Sitemap:" lines to whatever produces the site's
 * robots.txt (a file, a script, a proxy): the body passes through
 * byte for byte, held only until its end or its first SM_ROBOTS_HOLD bytes
 * (where the lines go: see src/serve/sm_robots.h, which also scans it).  When
 * the site has no robots.txt, a last-resort handler answers a permissive
 * one and the same filter adds the lines. */
#include "mod_sitemap.h"

#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"

#include <apr_date.h>
#include <apr_lib.h>
#include <apr_strings.h>

#include "util/sm_hash.h"
#include "util/sm_inflate.h"
#include "serve/sm_robots.h"

APLOG_USE_MODULE(sitemap);

#define ROBOTS_FILTER "SITEMAP_ROBOTS"
#define ROBOTS_PATH "/robots.txt"

typedef struct {
    sm_robots *scan;
    apr_bucket_brigade *held;   /* the body so far (decoded) */
    apr_off_t seen;             /* its bytes */
    char magic[4];              /* its first bytes */
    apr_size_t magic_len;
    sm_inflate *z;              /* a gzip or deflate body: its decoder */
    ap_filter_t *f;
    int released;               /* the lines went out (decoding goes on) */
    int replaced;               /* a 404's body, dropped: see not_found */
} robots_ctx;

/* The lines are as old as the configuration that decides them (Sitemap,
 * SitemapRobots, SitemapPath, SitemapBaseURL, SitemapRobotsExtra): to the
 * second, as HTTP dates go. */
static apr_time_t lines_since(const sitemap_server_conf *conf)
{
    return apr_time_from_sec(apr_time_sec(conf->loaded));
}

/* Is this the answer to a client's /robots.txt?  Decided on the request
 * the client made, so robots.txt produced through a rewrite (to a script,
 * or an internal redirect) counts; an ErrorDocument does not. */
SM_HOT static int robots_wanted(request_rec *r,
                                const sitemap_server_conf **out)
{
    const sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    request_rec *orig = r;

    if (conf->enabled != 1 || conf->robots != 1 || !conf->robots_urls
        || r->main)
        return 0;
    for (; orig->prev; orig = orig->prev)
        if (ap_is_HTTP_ERROR(orig->prev->status))
            return 0;
    /* Runs three times a request: "/r" rules out most before strcmp. */
    if (!orig->parsed_uri.path || orig->parsed_uri.path[0] != '/'
        || orig->parsed_uri.path[1] != 'r'
        || strcmp(orig->parsed_uri.path, ROBOTS_PATH))
        return 0;
    /* A mass vhost's Host without a site or nothing stored of it: no
     * Sitemap line. */
    if (conf->host_re && !sitemap_site_listed(r, conf))
        return 0;
    *out = conf;
    return 1;
}

/* "abc" -> "abc-sitemapXXXXXXXX": differs from the resource's own ETag,
 * and the same for the 200 and the 304. */
static const char *altered_etag(request_rec *r,
                                const sitemap_server_conf *conf,
                                const char *etag)
{
    apr_size_t len = strlen(etag);

    if (len < 2 || etag[len - 1] != '"')
        return NULL;
    return apr_psprintf(r->pool, "%.*s-%s\"", (int)(len - 1), etag,
                        conf->robots_etag_suffix);
}

/* Conditional requests carry our altered ETags: give the handler back its
 * own; a tag we did not make names a body without our lines, so it becomes
 * one that matches nothing (the condition stays, and fails).  If-Range is
 * left alone: httpd checks it against the response's (altered) ETag. */
static void restore_etags(request_rec *r, const sitemap_server_conf *conf,
                          const char *header)
{
    const char *value = apr_table_get(r->headers_in, header);
    apr_array_header_t *kept;
    char *list, *tok, *state;
    const char *suffix;
    apr_size_t slen;

    if (!value || strcmp(value, "*") == 0)
        return;
    suffix = apr_pstrcat(r->pool, "-", conf->robots_etag_suffix, "\"", NULL);
    slen = strlen(suffix);
    kept = apr_array_make(r->pool, 2, sizeof(char *));
    list = apr_pstrdup(r->pool, value);
    for (tok = apr_strtok(list, ",", &state); tok;
         tok = apr_strtok(NULL, ",", &state)) {
        apr_size_t len;
        while (apr_isspace(*tok))
            tok++;
        len = strlen(tok);
        while (len && apr_isspace(tok[len - 1]))
            len--;
        if (len > slen && strncmp(tok + len - slen, suffix, slen) == 0)
            APR_ARRAY_PUSH(kept, const char *) =
                apr_pstrcat(r->pool, apr_pstrmemdup(r->pool, tok, len - slen),
                            "\"", NULL);
        else
            APR_ARRAY_PUSH(kept, const char *) = "\"sitemap-matches-nothing\"";
    }
    apr_table_setn(r->headers_in, header,
                   apr_array_pstrcat(r->pool, kept, ','));
}

/* A copy older than our lines lacks them, whatever the resource's own
 * date: that If-Modified-Since cannot be met, so it is dropped (the
 * handler then answers 200).  A later one is left to the handler. */
static void drop_older_ims(request_rec *r, const sitemap_server_conf *conf)
{
    const char *ims = apr_table_get(r->headers_in, "If-Modified-Since");
    apr_time_t t;

    if (!ims)
        return;
    t = apr_date_parse_http(ims);
    if (t != APR_DATE_BAD && t < lines_since(conf))
        apr_table_unset(r->headers_in, "If-Modified-Since");
}

/* Just before the handler runs: the ETags are restored here rather than in
 * a fixup, so the other requests pay for one hook of ours, not two. */
SM_HOT void sitemap_robots_insert_filter(request_rec *r)
{
    const sitemap_server_conf *conf;
    request_rec *orig = r;

    if (!robots_wanted(r, &conf))
        return;
    ap_add_output_filter(ROBOTS_FILTER, NULL, r, r->connection);
    /* Internal redirects share headers_in: restore only once. */
    while (orig->prev)
        orig = orig->prev;
    if (apr_table_get(orig->notes, "sitemap-etags-restored"))
        return;
    apr_table_setn(orig->notes, "sitemap-etags-restored", "1");
    /* "...-sitemapXXXX-gzip" (mod_deflate after us) is ours too. */
    sitemap_decode_etags(r);
    restore_etags(r, conf, "If-None-Match");
    restore_etags(r, conf, "If-Match");
    drop_older_ims(r, conf);
}

/* The site has no robots.txt: answer one that allows everything (the
 * filter adds the Sitemap lines). */
SM_HOT int sitemap_robots_fallback(request_rec *r)
{
    const sitemap_server_conf *conf;
    int status;

    /* Cheapest first: every request with a file declines here. */
    if (r->finfo.filetype != APR_NOFILE || !robots_wanted(r, &conf)
        || conf->robots_fallback != 1
        || (r->handler && strcmp(r->handler, "default-handler") != 0
            && !ap_strchr_c(r->handler, '/'))
        || r->method_number != M_GET)
        return DECLINED;
    ap_set_content_type(r, "text/plain; charset=utf-8");
    /* Validators of its own (the filter adds its suffix and date), so that
     * it revalidates as a file would. */
    apr_table_setn(r->headers_out, "ETag", apr_psprintf(r->pool,
                   "\"robots-%016" APR_UINT64_T_HEX_FMT "\"",
                   sm_hash_u64(sm_hash_str(SM_HASH_SEED,
                                           SM_ROBOTS_PERMISSIVE),
                               conf->config_tag)));
    ap_update_mtime(r, lines_since(conf));
    ap_set_last_modified(r);
    if ((status = ap_meets_conditions(r)) == HTTP_NOT_MODIFIED)
        return sitemap_not_modified(r);
    if (status != OK)
        return status;
    ap_rputs(SM_ROBOTS_PERMISSIVE, r);
    return OK;
}

/* Our ETag and Last-Modified, on the 200 and on the 304 alike: the ETag
 * gets our suffix, and Last-Modified is at least the time this
 * configuration (which decides the lines) was read. */
static void set_validators(request_rec *r, const sitemap_server_conf *conf)
{
    const char *etag = apr_table_get(r->headers_out, "ETag");
    const char *lm = apr_table_get(r->headers_out, "Last-Modified");

    if (etag) {
        const char *altered = altered_etag(r, conf, etag);
        if (altered)
            apr_table_setn(r->headers_out, "ETag", altered);
        else
            apr_table_unset(r->headers_out, "ETag");
    }
    if (lm) {
        apr_time_t t = apr_date_parse_http(lm);
        if (t == APR_DATE_BAD || t < lines_since(conf)) {
            char *date = apr_palloc(r->pool, APR_RFC822_DATE_LEN);
            apr_rfc822_date(date, lines_since(conf));
            apr_table_setn(r->headers_out, "Last-Modified", date);
        }
    }
}

/* A compressed file given its Content-Encoding after us (mod_headers'
 * "Header set Content-Encoding" runs in a later filter): no robots.txt
 * text starts with the gzip or zstd magic number. */
static int looks_compressed(const robots_ctx *ctx)
{
    return (ctx->magic_len >= 2 && memcmp(ctx->magic, "\x1f\x8b", 2) == 0)
        || (ctx->magic_len >= 4 && memcmp(ctx->magic, "\x28\xb5\x2f\xfd", 4) == 0);
}

/* Look at decoded (or plain) bytes before the lines go out. */
static void scan(robots_ctx *ctx, const char *data, apr_size_t len)
{
    if (ctx->magic_len < sizeof(ctx->magic)) {
        apr_size_t n = sizeof(ctx->magic) - ctx->magic_len;
        n = n < len ? n : len;
        memcpy(ctx->magic + ctx->magic_len, data, n);
        ctx->magic_len += n;
    }
    sm_robots_feed(ctx->scan, data, len);
    ctx->seen += len;
}

/* The decoder's sink: decoded bytes join the held body (before the lines
 * go out) or the brigade passed at the end of this call (after). */
static apr_status_t decoded(void *baton, const char *data, apr_size_t len)
{
    robots_ctx *ctx = baton;

    if (!ctx->released)
        scan(ctx, data, len);
    APR_BRIGADE_INSERT_TAIL(ctx->held, apr_bucket_heap_create(
                                data, len, NULL, ctx->f->c->bucket_alloc));
    return APR_SUCCESS;
}

/* Pass what was held, with the lines: at the end when eos is the body's
 * end, else at its start (see sm_robots.h).  The filter then steps
 * aside. */
static apr_status_t release(ap_filter_t *f, robots_ctx *ctx, apr_bucket *eos)
{
    request_rec *r = f->r;
    const sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    const char *lines;
    apr_size_t len = 0, offset = 0;
    apr_bucket *at, *lb;

    ctx->released = 1;
    if (!ctx->z)
        ap_remove_output_filter(f);
    if (looks_compressed(ctx)) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, "robots.txt starts like "
                      "compressed data: passed through without Sitemap lines");
        if (eos)
            APR_BRIGADE_INSERT_TAIL(ctx->held, eos);
        return ap_pass_brigade(f->next, ctx->held);
    }
    set_validators(r, conf);
    apr_table_unset(r->headers_out, "Content-Length");
    apr_table_unset(r->headers_out, "Content-MD5");
    if (eos) {
        /* An application's robots.txt, whole: its rules (a file's are read
         * from the file). */
        if (r->status == HTTP_OK && !r->header_only
            && !sitemap_served_as_file(r)) {
            char *body;
            apr_size_t blen;
            if (apr_brigade_pflatten(ctx->held, &body, &blen, r->pool)
                == APR_SUCCESS)
                sitemap_disallow_learn(r, body, blen);
        }
        lines = sm_robots_tail(ctx->scan, r->pool, &len);
        /* A HEAD answered without a body (a script or backend that
         * skips it): adding lines would make a wrong length. */
        if (r->header_only && !ctx->seen)
            len = 0;
        at = APR_BRIGADE_SENTINEL(ctx->held);
    }
    else {
        apr_status_t rv;
        lines = sm_robots_head(ctx->scan, r->pool, &len, &offset);
        rv = apr_brigade_partition(ctx->held, offset, &at);
        if (rv != APR_SUCCESS)
            return rv;
    }
    if (len) {
        lb = apr_bucket_pool_create(lines, len, r->pool, f->c->bucket_alloc);
        APR_BUCKET_INSERT_BEFORE(at, lb);
    }
    if (eos)
        APR_BRIGADE_INSERT_TAIL(ctx->held, eos);
    return ap_pass_brigade(f->next, ctx->held);
}

/* 0: not encoded; 1 or 2: gzip or deflate (sm_inflate_coding); -1 another
 * coding. */
static int encoded(request_rec *r)
{
    const char *ce = r->content_encoding;

    if (!ce)
        ce = apr_table_get(r->headers_out, "Content-Encoding");
    if (!ce)
        ce = apr_table_get(r->err_headers_out, "Content-Encoding");
    if (!ce)
        return 0;
    return sm_inflate_coding(ce) ? sm_inflate_coding(ce) : -1;
}

/* A gzip or deflate body: decoded as it comes; held (decoded) until its end
 * or SM_ROBOTS_HOLD bytes, then streamed decoded. */
static apr_status_t decode_body(ap_filter_t *f, robots_ctx *ctx,
                                apr_bucket_brigade *bb)
{
    request_rec *r = f->r;
    apr_status_t rv;

    while (!APR_BRIGADE_EMPTY(bb)) {
        apr_bucket *b = APR_BRIGADE_FIRST(bb);

        if (APR_BUCKET_IS_EOS(b)) {
            APR_BUCKET_REMOVE(b);
            if (!ctx->released)
                return release(f, ctx, b);
            APR_BRIGADE_INSERT_TAIL(ctx->held, b);
            break;
        }
        if (APR_BUCKET_IS_METADATA(b)) {
            APR_BUCKET_REMOVE(b);
            APR_BRIGADE_INSERT_TAIL(ctx->held, b);
            continue;
        }
        {
            const char *data;
            apr_size_t len;

            rv = apr_bucket_read(b, &data, &len, APR_BLOCK_READ);
            if (rv == APR_SUCCESS)
                rv = sm_inflate_feed(ctx->z, data, len);
            apr_bucket_delete(b);
        }
        if (rv != APR_SUCCESS) {
            /* Not gzip after all, or cut short: the backend's fault, told
             * to the client as mod_proxy tells a backend failing
             * mid-body. */
            ap_log_rerror(APLOG_MARK, APLOG_INFO, rv, r, "cannot decode the "
                          "robots.txt body");
            apr_brigade_cleanup(bb);
            APR_BRIGADE_INSERT_TAIL(ctx->held, ap_bucket_error_create(
                HTTP_BAD_GATEWAY, NULL, r->pool, f->c->bucket_alloc));
            APR_BRIGADE_INSERT_TAIL(ctx->held, apr_bucket_eos_create(
                f->c->bucket_alloc));
            ap_remove_output_filter(f);
            return ap_pass_brigade(f->next, ctx->held);
        }
        if (!ctx->released && ctx->seen > SM_ROBOTS_HOLD) {
            if ((rv = release(f, ctx, NULL)) != APR_SUCCESS)
                return rv;
            apr_brigade_cleanup(ctx->held);
        }
    }
    if (!ctx->released || APR_BRIGADE_EMPTY(ctx->held))
        return APR_SUCCESS;
    rv = ap_pass_brigade(f->next, ctx->held);
    apr_brigade_cleanup(ctx->held);
    return rv;
}

/* A 404 for robots.txt that reached the filters (a backend's behind
 * ProxyPass, a script's; httpd's own 404s take the error path, without
 * this filter, and the fallback handler answers first): the site has no
 * robots.txt, so with SitemapRobotsFallback On it gets the permissive one
 * the fallback handler answers, with the lines. */
static robots_ctx *not_found(ap_filter_t *f)
{
    request_rec *r = f->r;
    const sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    robots_ctx *ctx = apr_pcalloc(r->pool, sizeof(*ctx));
    static const char text[] = SM_ROBOTS_PERMISSIVE;

    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, "robots.txt answered 404: "
                  "the permissive one instead, with the Sitemap lines");
    f->ctx = ctx;
    ctx->f = f;
    ctx->replaced = 1;
    ctx->scan = sm_robots_create(r->pool, sitemap_robots_urls(r, conf,
                                              sitemap_site_listed(r, conf)));
    ctx->held = apr_brigade_create(r->pool, f->c->bucket_alloc);
    r->status = HTTP_OK;
    r->status_line = NULL;
    r->content_encoding = NULL;
    apr_table_unset(r->headers_out, "Content-Encoding");
    apr_table_unset(r->headers_out, "ETag");
    apr_table_unset(r->headers_out, "Last-Modified");
    apr_table_unset(r->headers_out, "Cache-Control");
    apr_table_unset(r->headers_out, "Expires");
    ap_set_content_type(r, "text/plain; charset=utf-8");
    scan(ctx, text, sizeof(text) - 1);
    APR_BRIGADE_INSERT_TAIL(ctx->held, apr_bucket_immortal_create(
                                text, sizeof(text) - 1, f->c->bucket_alloc));
    return ctx;
}

/* Hold the body until its end or SM_ROBOTS_HOLD bytes, looking at every
 * byte as it comes. */
static apr_status_t hold_body(ap_filter_t *f, robots_ctx *ctx,
                              apr_bucket_brigade *bb)
{
    request_rec *r = f->r;

    while (!APR_BRIGADE_EMPTY(bb)) {
        apr_bucket *b = APR_BRIGADE_FIRST(bb);
        apr_status_t rv;

        if (APR_BUCKET_IS_EOS(b)) {
            APR_BUCKET_REMOVE(b);
            return release(f, ctx, b);
        }
        if (!APR_BUCKET_IS_METADATA(b)) {
            const char *data;
            apr_size_t len;

            rv = apr_bucket_read(b, &data, &len, APR_BLOCK_READ);
            if (rv != APR_SUCCESS) {
                /* The producer (a proxy, a CGI) logs its own failure; a
                 * backend failing on every request must not make us flood
                 * the log too. */
                ap_log_rerror(APLOG_MARK, APLOG_INFO, rv, r, "cannot read the "
                              "robots.txt body");
                return rv;
            }
            scan(ctx, data, len);
        }
        rv = apr_bucket_setaside(b, r->pool);
        if (rv != APR_SUCCESS && rv != APR_ENOTIMPL)
            return rv;
        APR_BUCKET_REMOVE(b);
        APR_BRIGADE_INSERT_TAIL(ctx->held, b);
        if (ctx->seen > SM_ROBOTS_HOLD) {
            /* A long body: the lines go at its start, the rest streams. */
            APR_BRIGADE_CONCAT(ctx->held, bb);
            return release(f, ctx, NULL);
        }
    }
    return APR_SUCCESS;
}

static apr_status_t robots_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    request_rec *r = f->r;
    robots_ctx *ctx = f->ctx;
    const sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    int coding = 0;

    if (!ctx && r->status == HTTP_NOT_FOUND && conf->robots_fallback == 1
        && r->method_number == M_GET)
        ctx = not_found(f);
    if (ctx && ctx->replaced) {
        /* The 404's body goes; the permissive text is held already. */
        while (!APR_BRIGADE_EMPTY(bb)) {
            apr_bucket *b = APR_BRIGADE_FIRST(bb);
            if (APR_BUCKET_IS_EOS(b)) {
                APR_BUCKET_REMOVE(b);
                return release(f, ctx, b);
            }
            apr_bucket_delete(b);
        }
        return APR_SUCCESS;
    }
    if (!ctx) {
        if (r->status != HTTP_OK && r->status != HTTP_NOT_MODIFIED) {
            ap_remove_output_filter(f);
            return ap_pass_brigade(f->next, bb);
        }
        /* Already compressed (by a script, a backend or mod_mime's
         * AddEncoding): gzip and deflate are decoded (the lines go in,
         * and an encoding filter after us encodes the whole again for
         * the clients that take it); other codings are passed through. */
        if ((coding = encoded(r)) < 0) {
            ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, "robots.txt has a "
                          "Content-Encoding: passed through without Sitemap "
                          "lines");
            ap_remove_output_filter(f);
            return ap_pass_brigade(f->next, bb);
        }
        if (r->status != HTTP_OK) {
            if (coding) {       /* the 200 is sent decoded */
                r->content_encoding = NULL;
                apr_table_unset(r->headers_out, "Content-Encoding");
                apr_table_unset(r->err_headers_out, "Content-Encoding");
            }
            set_validators(r, conf);
            sitemap_etag_as_sent(r);
            ap_remove_output_filter(f);
            return ap_pass_brigade(f->next, bb);
        }
        f->ctx = ctx = apr_pcalloc(r->pool, sizeof(*ctx));
        ctx->f = f;
        ctx->scan = sm_robots_create(r->pool, sitemap_robots_urls(
                        r, conf, sitemap_site_listed(r, conf)));
        ctx->held = apr_brigade_create(r->pool, f->c->bucket_alloc);
        if (coding) {
            if (sm_inflate_create(&ctx->z, r->pool, coding, decoded, ctx)
                != APR_SUCCESS)
                return APR_ENOMEM;
            r->content_encoding = NULL;
            apr_table_unset(r->headers_out, "Content-Encoding");
            apr_table_unset(r->err_headers_out, "Content-Encoding");
            /* robots.txt.gz given its type by mime.types: the text now */
            if (r->content_type
                && (strncasecmp(r->content_type, "application/gzip", 16) == 0
                    || strncasecmp(r->content_type, "application/x-gzip",
                                   18) == 0))
                ap_set_content_type(r, "text/plain");
        }
    }
    if (ctx->z)
        return decode_body(f, ctx, bb);
    return hold_body(f, ctx, bb);
}

void sitemap_robots_register(apr_pool_t *p)
{
    (void)p;
    /* After every filter that makes content (AP_FTYPE_RESOURCE: INCLUDES,
     * SUBSTITUTE, SED, ...) and before every filter that encodes it
     * (AP_FTYPE_CONTENT_SET: DEFLATE, BROTLI, also through mod_filter's
     * AddOutputFilterByType), whatever order the modules are loaded in.
     * mod_headers' output headers (also CONTENT_SET) are set after us:
     * see looks_compressed. */
    ap_register_output_filter(ROBOTS_FILTER, robots_filter, NULL,
                              AP_FTYPE_CONTENT_SET - 1);
}
