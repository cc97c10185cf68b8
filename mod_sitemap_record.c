/* mod_sitemap_record.c: the log_transaction hook.  Runs after every
 * request, so it decides cheaply and never waits on the store: the rules
 * are in the core (sm_rules), the queue and writer in sm_recorder.
 *
 * Cheapest first: the facts that need no header are checked before any
 * header is read; the headers are found in one pass; a response whose raw
 * facts were handed over before (the steady state of a site) is recognised
 * by their hash (sm_recorder_repeat) before any parsing. */
#include "mod_sitemap.h"

#include "http_log.h"
#include "http_request.h"

#include <apr_date.h>
#include <apr_strings.h>

#include "sm_hash.h"

APLOG_USE_MODULE(sitemap);

/* The response headers the rules and the change read. */
typedef struct {
    const char *last_modified;  /* headers_out's first */
    const char *etag;           /* headers_out's first */
    const char *x_robots_tag;   /* every value of both tables, joined */
    const char *cache_control;  /* likewise */
} response_headers;

static void join(apr_pool_t *p, const char **to, const char *val)
{
    *to = *to ? apr_pstrcat(p, *to, ",", val, NULL) : val;
}

/* One pass over a table (most responses have a handful of headers);
 * first_only: Last-Modified and ETag are read from this table. */
static void find_headers(apr_pool_t *p, const apr_table_t *t, int first_only,
                         response_headers *h)
{
    const apr_array_header_t *arr = apr_table_elts(t);
    const apr_table_entry_t *e = (const apr_table_entry_t *)arr->elts;
    int i;

    for (i = 0; i < arr->nelts; i++) {
        const char *k = e[i].key;
        if (!k || !e[i].val)
            continue;
        switch (*k) {
        case 'L': case 'l':
            if (first_only && !h->last_modified
                && !ap_cstr_casecmp(k, "Last-Modified"))
                h->last_modified = e[i].val;
            break;
        case 'E': case 'e':
            if (first_only && !h->etag && !ap_cstr_casecmp(k, "ETag"))
                h->etag = e[i].val;
            break;
        case 'X': case 'x':
            if (!ap_cstr_casecmp(k, "X-Robots-Tag"))
                join(p, &h->x_robots_tag, e[i].val);
            break;
        case 'C': case 'c':
            if (!ap_cstr_casecmp(k, "Cache-Control"))
                join(p, &h->cache_control, e[i].val);
            break;
        }
    }
}

/* Everything that decides the verdict and the change, once the cheap
 * checks (sm_rules_worth_deciding) have passed: the site's configuration,
 * method, status, request target, content type and headers. */
static apr_uint64_t raw_facts_hash(const sitemap_server_conf *conf,
                                   const request_rec *orig, int status,
                                   const char *content_type,
                                   const response_headers *h)
{
    apr_uint64_t x = sm_hash_u64(SM_HASH_SEED, (apr_uint64_t)(apr_uintptr_t)conf);

    x = sm_hash_u64(x, ((apr_uint64_t)orig->method_number << 16)
                       | (apr_uint64_t)status);
    x = sm_hash_str(x, orig->unparsed_uri);
    x = sm_hash_str(x, content_type);
    x = sm_hash_str(x, h->last_modified);
    x = sm_hash_str(x, h->etag);
    x = sm_hash_str(x, h->x_robots_tag);
    x = sm_hash_str(x, h->cache_control);
    return x ? x : 1;
}

int sitemap_log_transaction(request_rec *r)
{
    sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    request_rec *orig = r, *last = r;
    response_headers h = { NULL, NULL, NULL, NULL };
    sm_response resp;
    sm_change change;
    sm_verdict verdict;
    apr_uint64_t raw;
    const char *url, *why = NULL;
    int status;

    if (conf->enabled != 1 || !conf->recorder)
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

    resp.method = orig->method;
    resp.status = status;
    resp.target = orig->unparsed_uri;
    resp.content_type = last->content_type;
    resp.has_path_info = (last->path_info && *last->path_info)
                         || (orig->path_info && *orig->path_info);
    resp.is_subrequest = orig->main != NULL;
    resp.base_len = strlen(conf->site.base);
    resp.authenticated = orig->user || last->user
                         || apr_table_get(orig->headers_in, "Authorization");
    resp.x_robots_tag = resp.cache_control = NULL;
    if (!sm_rules_worth_deciding(&conf->rules, &resp, &why)) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "not recorded (%s): %s",
                      why, orig->unparsed_uri);
        return DECLINED;
    }

    find_headers(r->pool, last->headers_out, 1, &h);
    if (!apr_is_empty_table(last->err_headers_out))
        find_headers(r->pool, last->err_headers_out, 0, &h);
    raw = raw_facts_hash(conf, orig, status, last->content_type, &h);
    if (sm_recorder_repeat(conf->recorder, raw, r->request_time))
        return OK;

    resp.x_robots_tag = h.x_robots_tag;
    resp.cache_control = h.cache_control;
    verdict = sm_rules_decide(r->pool, &conf->rules, &resp, &url, &why);
    if (verdict == SM_IGNORE) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "not recorded (%s): %s",
                      why ? why : "-", orig->unparsed_uri);
        return DECLINED;
    }

    change.op = verdict == SM_RECORD ? SM_CHANGE_RECORD : SM_CHANGE_FORGET;
    change.site = &conf->site;
    change.url = url;
    change.seen = r->request_time;
    change.last_modified = 0;
    change.etag = NULL;
    if (verdict == SM_RECORD) {
        if (h.last_modified) {
            apr_time_t t = apr_date_parse_http(h.last_modified);
            change.last_modified = t == APR_DATE_BAD ? 0 : t;
        }
        change.etag = h.etag;
    }
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "%s %s%s",
                  verdict == SM_RECORD ? "recording" : "forgetting",
                  conf->site.base, url);
    sm_recorder_add(conf->recorder, &change, raw);
    return OK;
}
