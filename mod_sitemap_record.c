/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_record.c: the log_transaction hook.  Runs after every
 * request, so it decides cheaply and never waits on the store: the rules
 * are in the core (sm_rules), the queue and writer in sm_recorder.
 *
 * Cheapest first: the facts that need no header are checked before any
 * header is read; a response whose raw facts were handed over before (the
 * steady state of a site) is recognised by their hash (sm_recorder_repeat)
 * before any parsing, and before the request's headers are read. */
#include "mod_sitemap_record.h"
#include "mod_sitemap_images.h"

#include "http_log.h"
#include "http_request.h"
#include "http_ssl.h"

#include <apr_strings.h>

#include "crawl/sm_crawl.h"
#include "head/sm_alternates.h"
#include "util/sm_date.h"
#include "head/sm_fingerprint.h"
#include "util/sm_hash.h"
#include "head/sm_head.h"

APLOG_USE_MODULE(sitemap);

/* Every value of a response header, from headers_out and err_headers_out,
 * comma-joined; NULL when absent.  apr_table_get first: it is the cheap
 * answer for the usual "absent", and apr_table_getm is paid only when the
 * header is there. */
SM_HOT static const char *all_values(const request_rec *r, int errs,
                                     const char *name)
{
    const char *a = apr_table_get(r->headers_out, name);
    const char *b = errs ? apr_table_get(r->err_headers_out, name) : NULL;

    if (a)
        a = apr_table_getm(r->pool, r->headers_out, name);
    if (b)
        b = apr_table_getm(r->pool, r->err_headers_out, name);
    if (a && b)
        return apr_pstrcat(r->pool, a, ",", b, NULL);
    return a ? a : b;
}

/* find_headers' usual case (nothing in err_headers_out) in one pass over
 * headers_out: a key is compared (strcasecmp, as apr_table_get does) only
 * when its first letter is one of the four headers'.  0: X-Robots-Tag or
 * Cache-Control is there twice, whose values all_values joins.  Six
 * apr_table_get calls (each a key checksum and a strcasecmp) ran on every
 * steady request twice (the head filter's repeat check and the log
 * hook's); the steady state fell by about 300 instructions with this
 * (bench/RESULTS.md, "Issue 35: the steady state's header reads"). */
/* Is k "ETag", ASCII case-insensitively?  httpd's own spelling without
 * a call (strcasecmp cost about 40 of a steady request), a byte at a
 * time so that nothing past k's end is read; any other spelling as
 * apr_table_get would match it. */
static APR_INLINE int key_is_etag(const char *k)
{
    if (k[0] == 'E' && k[1] == 'T' && k[2] == 'a' && k[3] == 'g')
        return !k[4];
    return strcasecmp(k, "ETag") == 0;
}

SM_HOT static int headers_one_pass(const apr_table_t *t,
                                   sitemap_response_headers *h)
{
    const apr_array_header_t *a = apr_table_elts(t);
    const apr_table_entry_t *e = (const apr_table_entry_t *)a->elts;
    const apr_table_entry_t *end = e + a->nelts;

    memset(h, 0, sizeof(*h));
    for (; e < end; e++) {
        const char *k = e->key;
        switch (k[0] | 0x20) {
        case 'l':
            if (!h->last_modified && strcasecmp(k, "Last-Modified") == 0)
                h->last_modified = e->val;
            break;
        case 'e':
            if (!h->etag && key_is_etag(k))
                h->etag = e->val;
            break;
        case 'x':
            if (strcasecmp(k, "X-Robots-Tag") == 0) {
                if (h->x_robots_tag)
                    return 0;
                h->x_robots_tag = e->val;
            }
            break;
        case 'c':
            if ((k[1] | 0x20) == 'a' && strcasecmp(k, "Cache-Control") == 0) {
                if (h->cache_control)
                    return 0;
                h->cache_control = e->val;
            }
            break;
        }
    }
    return 1;
}

SM_HOT static void find_headers(request_rec *last,
                                sitemap_response_headers *h)
{
    int errs = !apr_is_empty_table(last->err_headers_out);

    if (!errs && headers_one_pass(last->headers_out, h))
        return;
    h->last_modified = apr_table_get(last->headers_out, "Last-Modified");
    h->etag = apr_table_get(last->headers_out, "ETag");
    h->x_robots_tag = all_values(last, errs, "X-Robots-Tag");
    h->cache_control = all_values(last, errs, "Cache-Control");
}

/* A repeat's headers_out as the body began (its entries: the key and
 * value pointers), when err_headers_out is empty: then log_transaction
 * compares them (entries_unchanged) instead of reading the four headers
 * again. */
SM_HOT static void keep_entries(const request_rec *r, sitemap_head_note *n)
{
    const apr_array_header_t *a = apr_table_elts(r->headers_out);

    n->entries = NULL;
    if (!apr_is_empty_table(r->err_headers_out))
        return;
    n->nentries = a->nelts;
    n->entries = apr_pmemdup(r->pool, a->elts,
                             (apr_size_t)a->nelts * sizeof(*n->entries));
}

/* Is k one of the four headers find_headers reads?  Its first letter
 * first, as there. */
static APR_INLINE int hashed_header(const char *k)
{
    switch (k[0] | 0x20) {
    case 'l':
        return strcasecmp(k, "Last-Modified") == 0;
    case 'e':
        return key_is_etag(k);
    case 'x':
        return strcasecmp(k, "X-Robots-Tag") == 0;
    case 'c':
        return (k[1] | 0x20) == 'a' && strcasecmp(k, "Cache-Control") == 0;
    }
    return 0;
}

/* 1 when last's headers still have the four headers a repeat's note
 * hashed (keep_entries): nothing in err_headers_out, the keys then still
 * first, in the same places (a header removed moves the ones after it),
 * the values of the four there the same (a header set again or merged
 * gets a new one), and none of the four among the entries added since.
 * Other values may change (the CONTENT_LENGTH filter sets
 * Content-Length again).  0: not known; find_headers and same_headers
 * decide. */
SM_HOT static int entries_unchanged(const request_rec *last,
                                    const sitemap_head_note *n)
{
    const apr_array_header_t *a = apr_table_elts(last->headers_out);
    const apr_table_entry_t *e = (const apr_table_entry_t *)a->elts;
    const apr_table_entry_t *end = e + a->nelts, *then = n->entries;
    const apr_table_entry_t *kept = e + n->nentries;

    if (!then || a->nelts < n->nentries
        || !apr_is_empty_table(last->err_headers_out))
        return 0;
    for (; e < kept; e++, then++)
        if (e->key != then->key
            || (e->val != then->val && hashed_header(e->key)))
            return 0;
    for (; e < end; e++)
        if (hashed_header(e->key))
            return 0;
    return 1;
}

/* Was a header's value the same then (both absent, the same string)? */
static int same_value(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static int same_headers(const sitemap_response_headers *a,
                        const sitemap_response_headers *b)
{
    return same_value(a->last_modified, b->last_modified)
           && same_value(a->etag, b->etag)
           && same_value(a->x_robots_tag, b->x_robots_tag)
           && same_value(a->cache_control, b->cache_control);
}

/* sitemap_site, its usual answer (no SitemapSiteFromHost) without a call
 * into mod_sitemap_hosts.c: the steady path asks up to three times. */
static APR_INLINE const sm_site_conf *site_of(request_rec *r,
                                              const sitemap_server_conf *conf)
{
    return conf->host_re ? sitemap_site(r, conf) : &conf->site;
}

SM_HOT sitemap_head_note *sitemap_request_note(request_rec *r)
{
    sitemap_head_note *n = ap_get_module_config(r->request_config,
                                                &sitemap_module);

    if (!n) {
        n = apr_pcalloc(r->pool, sizeof(*n));
        ap_set_module_config(r->request_config, &sitemap_module, n);
    }
    return n;
}

/* The raw facts known when the request arrives: the site's configuration,
 * (the site's: a mass vhost's hosts each have their own), the method and
 * the request target.  They pick the recorder's memory line
 * (sm_recorder_raw), which sitemap_record_prefetch starts loading then.
 * Hashed once a request: kept in the note of r (orig's final request, or
 * orig itself) for the filter's check and log_transaction. */
SM_HOT static apr_uint64_t raw_facts_first(sitemap_head_note *n, /* or NULL */
                                           const sm_site_conf *site,
                                           const request_rec *orig)
{
    apr_uint32_t gen = sitemap_disallow_generation;
    apr_uint64_t x;

    if (n && n->first_site == site && n->first_generation == gen)
        return n->first;
    x = ((apr_uint64_t)(apr_uintptr_t)site << 16)
        ^ (apr_uint64_t)orig->method_number ^ ((apr_uint64_t)gen << 40);
    x = sm_hash_str(x ^ SM_HASH_SEED, orig->unparsed_uri);
    if (n) {
        n->first_site = site;
        n->first_generation = gen;
        n->first = x;
    }
    return x;
}

SM_HOT void sitemap_record_prefetch(const request_rec *cr,
                                    const sitemap_server_conf *conf)
{
    request_rec *r = (request_rec *)cr;
    const sm_site_conf *site;

    if (conf->proc->recorder && !r->prev && r->unparsed_uri
        && (site = site_of(r, conf)))
        sm_recorder_prefetch(conf->proc->recorder,
                             raw_facts_first(sitemap_request_note(r), site,
                                             r));
}

/* Everything that still decides the verdict and the change once the cheap
 * checks (sm_rules_worth_deciding) have passed: the first part above, the
 * status and the headers.  Not the content type: past those checks it is
 * one of the listed types, and sm_rules_decide looks at it no further. */
SM_HOT static apr_uint64_t raw_facts_hash(apr_uint64_t first, int status,
                                          const sitemap_response_headers *h,
                                          apr_uint64_t fingerprint)
{
    const char *strs[4];

    strs[0] = h->last_modified;
    strs[1] = h->etag;
    strs[2] = h->x_robots_tag;
    strs[3] = h->cache_control;
    /* A fingerprinted response (no validators of its own) repeats only
     * with the same content. */
    apr_uint64_t rest = sm_hash_strs(first ^ (apr_uint64_t)status, strs, 4);

    return sm_recorder_raw(first, fingerprint ? sm_hash_u64(rest, fingerprint)
                                              : rest);
}

/* Was the final request served from a file as it is (the default handler:
 * httpd names the handler after the content type when no module claimed
 * it), rather than by a script?  A file does not read its path info, so a
 * URL with path info after one is never a page of its own; a script's (a
 * front controller's route, MediaWiki's /index.php/Title) may be. */
int sitemap_served_as_file(const request_rec *r)
{
    const char *h = r->handler, *ct = r->content_type;
    apr_size_t n;

    if (!h || strcmp(h, "default-handler") == 0)
        return 1;
    if (!ct)
        return 0;
    n = strcspn(ct, "; \t");
    return strncasecmp(h, ct, n) == 0 && !h[n];
}

/* Path info after what served the final request (the URL the client asked
 * for may have had some before a rewrite took it to a front controller). */
static int final_path_info(const request_rec *last)
{
    return last->path_info && *last->path_info;
}

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

    if (final_path_info(last) || last->finfo.filetype != APR_REG
        || sitemap_served_as_file(last)
        || sm_url_from_target(p, last->uri, conf->allow_query, 0, &path,
                              &own) != SM_URL_OK)
        return 0;
    return strcmp(own, url) == 0;
}

/* A Last-Modified that is a real modification time: not the time of the
 * response itself (applications that send "now"), nor later.  0 when
 * there is none, or not a real one. */
static apr_time_t real_last_modified(const char *value, apr_time_t now)
{
    apr_time_t lm = sm_parse_http_date(value);

    return lm && lm < now - apr_time_from_sec(1) ? lm : 0;
}

/* Does the response carry a validator of its own: an ETag, or a real
 * Last-Modified?  Without one it is fingerprinted (sm_fingerprint). */
static int has_validators(const sitemap_response_headers *h, apr_time_t now)
{
    return h->etag || real_last_modified(h->last_modified, now);
}

/* What a fingerprinted response (no validators of its own) repeats with:
 * its content's fingerprint and its Link header (a canonical it gains is
 * a change).  0 for any other response, whose Link is read only when it
 * is decided. */
static apr_uint64_t content_facts(const request_rec *last,
                                  const sitemap_head_note *note)
{
    if (!note || !note->fp || !note->fingerprint)
        return 0;
    return sm_hash_str(note->fingerprint,
                       all_values(last, !apr_is_empty_table(
                                      last->err_headers_out), "Link")) | 1;
}

/* The facts that need no header (sm_rules_worth_deciding's). */
SM_HOT static void fill_response(const sitemap_server_conf *conf,
                                 const sm_site_conf *site, request_rec *orig, request_rec *last,
                                 int status, sm_response *resp)
{
    resp->method = orig->method;
    resp->status = status;
    resp->target = orig->unparsed_uri;
    resp->content_type = last->content_type;
    resp->has_path_info = final_path_info(last)
                          && sitemap_served_as_file(last);
    resp->is_subrequest = orig->main != NULL;
    resp->base_len = site == &conf->site ? conf->base_len
                                         : strlen(site->base);
    resp->authenticated = orig->user || last->user;
    resp->session = 0;
    resp->x_robots_tag = resp->cache_control = NULL;
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
    if (!head && final_path_info(last)) {
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
                            all_values(last, !apr_is_empty_table(
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
    if (!href && (link = all_values(last, !apr_is_empty_table(
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
static int client_certificate(request_rec *r)
{
    const char *verify = ap_ssl_var_lookup(r->pool, r->server, r->connection,
                                           r, "SSL_CLIENT_VERIFY");

    return verify && *verify && strcmp(verify, "NONE") != 0;
}

/* The site of a mass vhost's name that has no place in this process yet:
 * one is taken only for a 200 the rules would record (its head not read
 * yet), so that names with nothing behind them (a 404 for everything)
 * never take one.  NULL: not such a page, or no place left. */
static SM_NOINLINE const sm_site_conf *
site_to_place(request_rec *r, const sitemap_server_conf *conf,
              request_rec *orig, request_rec *last, int status)
{
    const sm_site_conf *unplaced;
    sitemap_response_headers h;
    sm_response resp;
    const char *url, *why;

    if (!conf->host_re || status != HTTP_OK
        || !(unplaced = sitemap_site_to_read(r, conf)))
        return NULL;
    fill_response(conf, unplaced, orig, last, status, &resp);
    if (!sm_rules_worth_deciding(&conf->rules, &resp, &why))
        return NULL;
    find_headers(last, &h);
    resp.authenticated = resp.authenticated
        || apr_table_get(orig->headers_in, "Authorization") != NULL
        || client_certificate(last);
    resp.session = sm_has_session(conf->sessions,
                                  apr_table_get(orig->headers_in, "Cookie"));
    resp.x_robots_tag = h.x_robots_tag;
    resp.cache_control = h.cache_control;
    if (sm_rules_decide(r->pool, &conf->rules, &resp, &url, &why)
        != SM_RECORD)
        return NULL;
    return sitemap_site_claim(r, conf);
}

/* Not a repeat: the rules decide, and a record or forget is handed to the
 * recorder.  Apart from the hot path, as it runs for few requests. */
/* What a page to record says of itself: its validators (or its
 * fingerprint), the script URL it repeats, its title and alternates. */
static void page_details(request_rec *r, const sitemap_server_conf *conf,
                         const sm_site_conf *site, request_rec *orig,
                         request_rec *last,
                         const sitemap_response_headers *h,
                         const sitemap_head_note *note, sm_change *change)
{
    change->last_modified = real_last_modified(h->last_modified,
                                               r->request_time);
    change->etag = h->etag;
    /* No ETag: the content's fingerprint in its place, so lastmod
     * moves when the content does (sm_store_tx). */
    if (!change->etag && note && note->fp && note->fingerprint)
        change->etag = sm_fingerprint_tag(r->pool, note->fingerprint);
    /* A script's path info: the same content as the script's own URL
     * is that page again, not a second one (the writer compares). */
    if (final_path_info(last))
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

static SM_NOINLINE int decide(request_rec *r, sitemap_server_conf *conf,
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
            || client_certificate(last);
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

/* The URL a crawler's fetch names: the target normalised as a verdict
 * note names it (sm_rules_note_url); NULL when it cannot be. */
const char *sitemap_crawl_url(request_rec *r, const sitemap_server_conf *conf,
                              const sm_site_conf *site, request_rec *orig,
                              request_rec *last, int status)
{
    sm_response resp;

    fill_response(conf, site, orig, last, status, &resp);
    return sm_rules_note_url(r->pool, &conf->rules, &resp);
}

/* A response whose head filter was left out (SITEMAP_HEAD_SKIPPED: its
 * file unchanged since a repeat) that is no repeat after all (a header
 * another module set, the memory's refresh): its head is read from its
 * file, as the filter would have read it; when it cannot be, it is not
 * decided now, and the next request reads it.  Either way the next
 * request goes through the filter. */
static SM_NOINLINE int head_from_file(request_rec *r, request_rec *last,
                                      sitemap_head_note *note,
                                      const sitemap_response_headers *h)
{
    sitemap_known_forget(note);
    if (sitemap_head_read_file(last, note, h))
        return 1;
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "head not read, no "
                  "repeat: left for the next request: %s", r->unparsed_uri);
    return 0;
}

static SM_HOT int log_page(request_rec *r, sitemap_server_conf *conf)
{
    request_rec *orig = r, *last = r;
    sitemap_response_headers h;
    sm_response resp;
    apr_uint64_t raw;
    sitemap_head_note *facts;
    const sitemap_head_note *note;
    const sm_site_conf *site;
    const char *why = NULL;
    int status, have_headers = 0;

    if (conf->enabled != 1 || !conf->proc->recorder)
        return DECLINED;
    /* As mod_log_config's %>s: the status that counts is the final
     * request's, the URL the one the client asked for. */
    while (orig->prev)
        orig = orig->prev;
    while (last->next)
        last = last->next;
    status = last->status;
    if (status != HTTP_OK && status != HTTP_NOT_FOUND && status != HTTP_GONE
        && status != HTTP_MOVED_PERMANENTLY)
        return DECLINED;

    /* Now and then, whether the site's robots.txt changed (which makes
     * every response new once: sitemap_disallow_generation). */
    if (status == HTTP_OK
        && r->request_time - conf->proc->disallow_checked
           >= SITEMAP_DISALLOW_CHECK) {
        conf->proc->disallow_checked = r->request_time;
        if ((site = sitemap_site(r, conf)))
            sitemap_disallow_refresh(r, conf, site);
    }

    /* The head filter found a repeat when the body began: that answer
     * stands when no filter after it changed a header it hashed (most
     * responses: mod_deflate's ETag suffix is the usual change). */
    facts = ap_get_module_config(last->request_config, &sitemap_module);
    note = facts && facts->state != SITEMAP_HEAD_NONE ? facts : NULL;
    if (note && note->state == SITEMAP_HEAD_REPEAT && status == HTTP_OK) {
        if (entries_unchanged(last, note)) {
            sitemap_known_remember(last, note);
            return OK;
        }
        find_headers(last, &h);
        if (same_headers(&note->headers, &h)) {
            sitemap_known_remember(last, note);
            return OK;
        }
        have_headers = 1;
    }

    /* A static file served without the head filter (SITEMAP_HEAD_SKIPPED:
     * the same as at a repeat before): the same headers are the same raw
     * facts, which the rules passed then (mod_sitemap_known.c). */
    if (facts && facts->state == SITEMAP_HEAD_SKIPPED && status == HTTP_OK
        && !orig->user && !last->user) {
        /* A filter that makes the body came since the slot was filled
         * (an SSI's chmod under XBitHack, a .htaccess): the file's
         * validators no longer say what was served. */
        if (sitemap_body_made_by_filters(last)) {
            sitemap_known_forget(facts);
            ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "a filter makes "
                          "the body, head not read: left for the next "
                          "request: %s", r->unparsed_uri);
            return DECLINED;
        }
        find_headers(last, &h);
        have_headers = 1;
        if (sitemap_known_repeat(last, facts, &h, &raw)
            && sm_recorder_repeat(conf->proc->recorder, raw, r->request_time))
            return OK;
    }

    /* A mass vhost's request whose Host has no site is not recorded. */
    if (!(site = site_of(r, conf))
        && !(site = site_to_place(r, conf, orig, last, status)))
        return DECLINED;
    fill_response(conf, site, orig, last, status, &resp);
    if (!sm_rules_worth_deciding(&conf->rules, &resp, &why)) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "not recorded (%s): %s",
                      why, orig->unparsed_uri);
        sitemap_note_verdict(r, conf, site, &resp, NULL, why, NULL, 1);
        return DECLINED;
    }

    if (!have_headers)
        find_headers(last, &h);
    raw = raw_facts_hash(raw_facts_first(facts, site, orig), status, &h,
                         content_facts(last, note));
    if (sm_recorder_repeat(conf->proc->recorder, raw, r->request_time))
        return OK;
    if (facts && facts->state == SITEMAP_HEAD_SKIPPED
        && !head_from_file(r, last, facts, &h))
        return DECLINED;
    return decide(r, conf, site, orig, last, &resp, &h, raw, note);
}

SM_HOT int sitemap_log_transaction(request_rec *r)
{
    sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    int rc = conf->images == 1 && sitemap_image_logged(r, conf)
             ? OK : log_page(r, conf);

    /* A crawler's fetch, after the page's own change (sm_recorder_crawl):
     * the pre-check first, so that an ordinary visitor's request runs no
     * pattern. */
    if (conf->crawlers && conf->enabled == 1 && conf->proc->recorder) {
        const char *ua = sm_crawl_visitor(conf->crawlers,
                                          apr_table_elts(r->headers_in));
        if (ua)
            sitemap_crawl_fetch(r, conf, ua);
    }
    return rc;
}

int sitemap_record_wants_head(request_rec *r, int *repeat,
                              sitemap_head_note *note)
{
    sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    request_rec *orig = r;
    sm_response resp;
    const sm_site_conf *site;
    const char *why, *url;
    int made;

    *repeat = 0;
    note->raw = 0;
    if (r->status != HTTP_OK || !conf->proc->recorder)
        return 0;
    while (orig->prev)
        orig = orig->prev;
    if (!(site = site_of(r, conf))
        && !(site = site_to_place(r, conf, orig, r, HTTP_OK)))
        return 0;
    fill_response(conf, site, orig, r, HTTP_OK, &resp);
    if (!sm_rules_worth_deciding(&conf->rules, &resp, &why))
        return 0;
    find_headers(r, &note->headers);
    note->raw = raw_facts_hash(raw_facts_first(note, site, orig), HTTP_OK,
                               &note->headers, 0);
    /* A response without validators of its own is never a repeat before
     * its content is known: its head is read each time, so a noindex, a
     * canonical, a title or alternates it gains are seen at the next GET;
     * without an ETag it is read to its end for its fingerprint.  So is
     * a body a filter makes (SSI, mod_substitute): its ETag and
     * Last-Modified are the file's, which stay when the filter comes, or
     * writes something else, so they are not its own validators. */
    made = sitemap_body_made_by_filters(r);
    note->fingerprinting = !note->headers.etag || made;
    if (!made && has_validators(&note->headers, r->request_time)
        && (*repeat = sm_recorder_repeat(conf->proc->recorder, note->raw,
                                         r->request_time))) {
        keep_entries(r, note);
        return 0;
    }
    /* A page the rules leave out whatever its head says (an excluded
     * path, a refused query, credentials) is not read: being ignored, it
     * is never a repeat.  Its headers are left out of this check: filters
     * after this one may still change them (mod_headers). */
    if (!resp.authenticated)
        resp.authenticated =
            apr_table_get(orig->headers_in, "Authorization") != NULL
            || client_certificate(r);
    resp.session = sm_has_session(conf->sessions,
                                  apr_table_get(orig->headers_in, "Cookie"));
    return sm_rules_decide(r->pool, &conf->rules, &resp, &url, &why)
           == SM_RECORD;
}
