/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_decide.c: a response that is no repeat, decided
 * (log_transaction, mod_sitemap_record.c, for the few requests that get
 * this far): the rules, the anonymous visitor's check, what the page's
 * head and Link header say, the site's robots.txt, and the change handed
 * to the recorder with what the page says of itself. */
#include "mod_sitemap_record.h"
#include "mod_sitemap_images.h"

#include "http_log.h"
#include "http_ssl.h"

#include <apr_strings.h>

#include "head/sm_alternates.h"
#include "head/sm_fingerprint.h"
#include "head/sm_head.h"

APLOG_USE_MODULE(sitemap);

/* The stored form of the URL of the script that served r, without its
 * path info (NULL when it has none). */
static const char *script_url(apr_pool_t *p, const sitemap_server_conf *conf,
                              const request_rec *r)
{
    apr_size_t n = strlen(r->uri), pi = strlen(r->path_info);
    char *path, *url;

    if (pi >= n || strcmp(r->uri + n - pi, r->path_info) != 0)
        return NULL;
    if (sm_url_from_target(p, apr_pstrmemdup(p, r->uri, n - pi),
                           conf->allow_query, 0, &path, &url) != SM_URL_OK)
        return NULL;
    return url;
}

/* Is url (stored form) the own URL of the script that served last: no
 * path info, not rewritten (sm_change.file_url)?  Never for a file served
 * as a file: its path-info URLs are never recorded (the path-info rule),
 * so it has no copies to look for (5,600 instructions a new URL). */
static int file_own_url(apr_pool_t *p, const sitemap_server_conf *conf,
                        const request_rec *last, const char *url)
{
    char *path, *own;

    if (sitemap_final_path_info(last) || last->finfo.filetype != APR_REG
        || sitemap_served_as_file(last)
        || sm_url_from_target(p, last->uri, conf->allow_query, 0, &path,
                              &own) != SM_URL_OK)
        return 0;
    return strcmp(own, url) == 0;
}

/* Does a canonical name another URL than the page?  The head's <link
 * rel=canonical> (resolved against its <base href>) and a Link header's
 * rel="canonical" (against the page's URL) count alike; two that disagree
 * cancel out, as two conflicting <link>s do (sm_head). */
static int canonical_elsewhere(request_rec *r, const sitemap_server_conf *conf,
                               const sm_site_conf *site,
                               const request_rec *orig,
                               const sm_head_result *head, const char *link,
                               const char *url)
{
    sm_head_result from_link;
    int in_head = 0, in_link = 0;

    if (head && head->canonical)
        in_head = 1 + sm_head_names_other(r->pool, head, site->base,
                                          orig->unparsed_uri, url,
                                          conf->allow_query);
    if (link && (from_link.canonical = sm_link_canonical(r->pool, link))) {
        from_link.base_href = NULL;
        in_link = 1 + sm_head_names_other(r->pool, &from_link, site->base,
                                          orig->unparsed_uri, url,
                                          conf->allow_query);
    }
    if (in_head && in_link && in_head != in_link)
        return 0;
    return in_head == 2 || in_link == 2;
}

/* What the page's head (and its Link header) says about a response the
 * rules would record: SM_RECORD to go on, SM_FORGET (noindex, or a
 * canonical naming another URL: removed if stored), SM_IGNORE (the head
 * was not read whole; a script's path info without its head read). */
static sm_verdict head_says(request_rec *r, const sitemap_server_conf *conf,
                            const sm_site_conf *site,
                            const request_rec *orig, const request_rec *last,
                            const sitemap_head_note *note,
                            const char *url, const char **why)
{
    const sm_head_result *head = NULL;

    /* Judged by its headers: no filter, a Content-Encoding, or a response
     * whose facts when its body began had been acted on (head read) and
     * that filters after the reader made new (mod_headers set an ETag). */
    if (note && note->state == SITEMAP_HEAD_READ) {
        if (note->fp && !note->fingerprint) {
            *why = "body not read to its end";
            return SM_IGNORE;
        }
        head = sm_head_result_get(note->scanner);
    }
    else if (note && note->state != SITEMAP_HEAD_UNREADABLE
             && note->state != SITEMAP_HEAD_REPEAT) {
        *why = "head not read";
        return SM_IGNORE;
    }
    /* A script's path info (a front controller's route) is a page when
     * its head says so: read, no noindex, no canonical elsewhere. */
    if (!head && sitemap_final_path_info(last)) {
        *why = "path info, head not read";
        return SM_IGNORE;
    }
    if (head && head->noindex) {
        *why = "meta robots noindex";
        return SM_FORGET;
    }
    /* The Link header is read only now: a repeat (a response with an ETag
     * seen before) never pays for it; one without validators is never a
     * repeat, so a Link it gains is seen at its next GET. */
    if (canonical_elsewhere(r, conf, site, orig, head,
                            sitemap_all_values(last, !apr_is_empty_table(
                                           last->err_headers_out), "Link"),
                            url)) {
        *why = "canonical names another URL";
        return SM_FORGET;
    }
    return SM_RECORD;
}

/* What a canonical that took a page out names, for its verdict: the
 * head's (else the Link header's) href, resolved against the page. */
static const char *canonical_named(request_rec *r, const sm_site_conf *site,
                                   const request_rec *orig,
                                   const sitemap_head_note *note,
                                   const request_rec *last)
{
    const char *href = NULL, *base, *target, *link;

    if (note && note->state == SITEMAP_HEAD_READ)
        href = sm_head_result_get(note->scanner)->canonical;
    if (!href && (link = sitemap_all_values(last, !apr_is_empty_table(
                                        last->err_headers_out), "Link")))
        href = sm_link_canonical(r->pool, link);
    if (href && sm_head_resolve(r->pool, site->base, orig->unparsed_uri,
                                href, &base, &target))
        return apr_pstrcat(r->pool, base, target, NULL);
    return href;
}

/* Did the client present a TLS certificate?  It is a credential like a
 * user: a section that lets it in (SSLVerifyClient, Require
 * ssl-verify-client, SSLRequire) is not for anonymous visitors, and the
 * authz stand-in cannot tell, as it shares the visitor's TLS connection.
 * mod_ssl says "NONE" when none was sent; nothing without TLS. */
int sitemap_client_certificate(request_rec *r)
{
    const char *verify = ap_ssl_var_lookup(r->pool, r->server, r->connection,
                                           r, "SSL_CLIENT_VERIFY");

    return verify && *verify && strcmp(verify, "NONE") != 0;
}

/* What a page to record says of itself: its validators (or its
 * fingerprint), the script URL it repeats, its title and alternates. */
static void page_details(request_rec *r, const sitemap_server_conf *conf,
                         const sm_site_conf *site, request_rec *orig,
                         request_rec *last,
                         const sitemap_response_headers *h,
                         const sitemap_head_note *note, sm_change *change)
{
    change->last_modified = sitemap_real_last_modified(h->last_modified,
                                               r->request_time);
    change->etag = h->etag;
    /* No ETag: the content's fingerprint in its place, so lastmod
     * moves when the content does (sm_store_tx). */
    if (!change->etag && note && note->fp && note->fingerprint)
        change->etag = sm_fingerprint_tag(r->pool, note->fingerprint);
    /* A script's path info: the same content as the script's own URL
     * is that page again, not a second one (the writer compares). */
    if (sitemap_final_path_info(last))
        change->same_as = script_url(r->pool, conf, last);
    /* And the other order: the file's own URL, whose copies under path
     * info stored before it leave (the writer compares). */
    change->file_url = file_own_url(r->pool, conf, last, change->url);
    /* What the head said of its title ("" for none); NULL when the
     * head was not read, which leaves a stored title alone. */
    if (note && note->state == SITEMAP_HEAD_READ) {
        const sm_head_result *head = sm_head_result_get(note->scanner);
        change->title = head->title ? head->title : "";
        /* Its hreflang alternates likewise, normalised as its own URL
         * ("" for none: stored ones are cleared). */
        change->alternates = sm_alternates_from_head(
            r->pool, head->alternates, site->base, orig->unparsed_uri,
            conf->allow_query);
        /* Its images (SitemapImages), resolved likewise. */
        change->images = sitemap_head_images(r, conf, site, orig, head);
        /* Its description and publication time likewise ("" and 0 for
         * none), for the news sitemap and llms.txt; left unread (NULL)
         * when the site has neither, so that the writer stores neither:
         * a published time costs an index entry a page (urls_published),
         * and the news sitemap or llms.txt turned on later learns them
         * as pages are served again (bench/RESULTS.md, issue 35). */
        if (conf->news_path || conf->llms_path) {
            change->description = head->description ? head->description
                                                    : "";
            change->published = head->published;
        }
    }
}

/* Not a repeat: the rules decide, and a record or forget is handed to the
 * recorder.  Apart from the hot path, as it runs for few requests. */
SM_NOINLINE int sitemap_decide(request_rec *r, sitemap_server_conf *conf,
                               const sm_site_conf *site,
                               request_rec *orig, request_rec *last,
                               sm_response *resp,
                               const sitemap_response_headers *h,
                               apr_uint64_t raw,
                               const sitemap_head_note *note)
{
    sm_change change;
    sm_verdict verdict;
    const char *url, *why = NULL;

    /* Credentials sent without r->user (no auth configured there, or a
     * client certificate) are looked up only now: a repeat has the raw
     * facts of a response already acted on, so whoever asked, there is
     * nothing to do; anything else is decided with them (sm_rules: an
     * authenticated 200 is not recorded). */
    if (!resp->authenticated)
        resp->authenticated =
            apr_table_get(orig->headers_in, "Authorization") != NULL
            || sitemap_client_certificate(last);
    resp->session = sm_has_session(conf->sessions,
                                   apr_table_get(orig->headers_in, "Cookie"));
    resp->x_robots_tag = h->x_robots_tag;
    resp->cache_control = h->cache_control;
    verdict = sm_rules_decide(r->pool, &conf->rules, resp, &url, &why);
    /* Only what anyone may fetch is published: a page that Require ip,
     * host, local, a RewriteRule or an <If> (anything beyond "all
     * granted") keeps from an anonymous visitor elsewhere, or serves him
     * from another file, is forgotten, in case it was stored before the
     * rule came.  The client's URL is looked up again for him; it must
     * end where the final request was served. */
    if (verdict == SM_RECORD && !sitemap_anonymous_allowed(orig, last)) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "not recorded (not "
                      "for anonymous visitors from anywhere): %s",
                      orig->unparsed_uri);
        verdict = SM_FORGET;
        why = "not for anonymous visitors";
    }
    if (verdict == SM_RECORD)
        verdict = head_says(r, conf, site, orig, last, note, url, &why);
    /* Never a URL the site's robots.txt keeps "*", Googlebot or Bingbot
     * from: it goes if stored, and comes back when allowed again. */
    if (verdict == SM_RECORD && sitemap_disallowed(r, conf, site, url, &why))
        verdict = SM_FORGET;
    if (verdict == SM_IGNORE) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "not recorded (%s): %s",
                      why ? why : "-", orig->unparsed_uri);
        sitemap_note_verdict(r, conf, site, resp, url, why, NULL, 0);
        return DECLINED;
    }

    /* Every field a later one adds starts zero (crawler, sitemap, ...). */
    memset(&change, 0, sizeof(change));
    change.op = verdict == SM_RECORD ? SM_CHANGE_RECORD : SM_CHANGE_FORGET;
    change.site = site;
    change.url = url;
    change.seen = r->request_time;
    change.last_modified = 0;
    change.etag = NULL;
    change.title = NULL;
    change.alternates = NULL;
    change.same_as = NULL;
    change.why = change.detail = NULL;
    change.status = resp->status;
    /* Who was served, as a tag (IndexNow's corroboration; mod_remoteip's
     * address when it gives one). */
    change.client = sm_client_tag(r->useragent_ip);
    /* A forget keeps its verdict (sitemapctl why): the reason (a 404, 410
     * or 301 has none from the rules: its status), what it names. */
    if (verdict == SM_FORGET && !sitemap_own_answer(r)) {
        change.why = why ? why
                     : apr_psprintf(r->pool, "status %d", resp->status);
        if (why && !strcmp(why, "canonical names another URL"))
            change.detail = canonical_named(r, site, orig, note, last);
        else if (resp->status == HTTP_MOVED_PERMANENTLY)
            change.detail = apr_table_get(last->headers_out, "Location");
    }
    if (verdict == SM_RECORD)
        page_details(r, conf, site, orig, last, h, note, &change);
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "%s %s%s%s%s",
                  verdict == SM_RECORD ? "recording" : "forgetting",
                  site->base, url, why ? ": " : "", why ? why : "");
    sm_recorder_add(conf->proc->recorder, &change, raw);
    /* The head filter's repeat check saw the headers before the filters
     * after it: mod_deflate appends "-gzip" to the ETag, mod_headers may
     * add more.  The facts it saw lead here too, so that the next such
     * response is known to it and its head not read again. */
    if (note && note->state == SITEMAP_HEAD_READ && note->raw
        && note->raw != raw)
        sm_recorder_add(conf->proc->recorder, &change, note->raw);
    return OK;
}
