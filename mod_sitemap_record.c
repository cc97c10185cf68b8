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
#include "util/sm_etag.h"
#include "head/sm_fingerprint.h"
#include "util/sm_hash.h"
#include "head/sm_head.h"

APLOG_USE_MODULE(sitemap);

/* Every value of a response header, from headers_out and err_headers_out
 * (errs: not empty), comma-joined; NULL when absent.  apr_table_get first: it is the cheap
 * answer for the usual "absent", and apr_table_getm is paid only when the
 * header is there. */
SM_HOT const char *sitemap_all_values(const request_rec *r, int errs,
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
    h->x_robots_tag = sitemap_all_values(last, errs, "X-Robots-Tag");
    h->cache_control = sitemap_all_values(last, errs, "Cache-Control");
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

/* then: the headers a repeat's note hashed as the body began; now: the
 * final ones.  The ETag may have gained an encoding filter's suffix
 * since (mod_deflate's "-gzip", Debian's default for HTML): the same
 * entity, compressed, which the filter's facts already stand for (a
 * repeat of them leads where the final facts do: decide's end). */
static int same_headers(const sitemap_response_headers *then,
                        const sitemap_response_headers *now)
{
    return same_value(then->last_modified, now->last_modified)
           && (same_value(then->etag, now->etag)
               || sm_etag_is_encoded(then->etag, now->etag))
           && same_value(then->x_robots_tag, now->x_robots_tag)
           && same_value(then->cache_control, now->cache_control);
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

/* A Last-Modified that is a real modification time: not the time of the
 * response itself (applications that send "now"), nor later.  0 when
 * there is none, or not a real one. */
apr_time_t sitemap_real_last_modified(const char *value, apr_time_t now)
{
    apr_time_t lm = sm_parse_http_date(value);

    return lm && lm < now - apr_time_from_sec(1) ? lm : 0;
}

/* Does the response carry a validator of its own: an ETag, or a real
 * Last-Modified?  Without one it is fingerprinted (sm_fingerprint). */
static int has_validators(const sitemap_response_headers *h, apr_time_t now)
{
    return h->etag || sitemap_real_last_modified(h->last_modified, now);
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
                       sitemap_all_values(last, !apr_is_empty_table(
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
    resp->has_path_info = sitemap_final_path_info(last)
                          && sitemap_served_as_file(last);
    resp->is_subrequest = orig->main != NULL;
    resp->base_len = site == &conf->site ? conf->base_len
                                         : strlen(site->base);
    resp->authenticated = orig->user || last->user;
    resp->session = 0;
    resp->x_robots_tag = resp->cache_control = NULL;
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
        || sitemap_client_certificate(last);
    resp.session = sm_has_session(conf->sessions,
                                  apr_table_get(orig->headers_in, "Cookie"));
    resp.x_robots_tag = h.x_robots_tag;
    resp.cache_control = h.cache_control;
    if (sm_rules_decide(r->pool, &conf->rules, &resp, &url, &why)
        != SM_RECORD)
        return NULL;
    return sitemap_site_claim(r, conf);
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
    if (sm_recorder_repeat(conf->proc->recorder, raw, r->request_time)) {
        /* Its head was read all the same (the facts at the body's start
         * differ: mod_deflate's "-gzip", a header set later): they lead
         * here too from now on (see decide's end). */
        if (note && note->state == SITEMAP_HEAD_READ && note->raw)
            sm_recorder_repeat_alias(conf->proc->recorder, raw, note->raw,
                                     r->request_time);
        return OK;
    }
    if (facts && facts->state == SITEMAP_HEAD_SKIPPED
        && !head_from_file(r, last, facts, &h))
        return DECLINED;
    return sitemap_decide(r, conf, site, orig, last, &resp, &h, raw, note);
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
            || sitemap_client_certificate(r);
    resp.session = sm_has_session(conf->sessions,
                                  apr_table_get(orig->headers_in, "Cookie"));
    return sm_rules_decide(r->pool, &conf->rules, &resp, &url, &why)
           == SM_RECORD;
}
