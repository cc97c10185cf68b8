/* mod_sitemap_record.c: the log_transaction hook.  Runs after every
 * request, so it decides cheaply and never waits on the store: the rules
 * are in the core (sm_rules), the queue and writer in sm_recorder. */
#include "mod_sitemap.h"

#include "http_log.h"
#include "http_request.h"

#include <apr_date.h>
#include <apr_strings.h>

APLOG_USE_MODULE(sitemap);

/* All values of a response header, from headers_out and err_headers_out. */
static const char *response_header(request_rec *r, const char *name)
{
    const char *a = apr_table_getm(r->pool, r->headers_out, name);
    const char *b = apr_table_getm(r->pool, r->err_headers_out, name);

    if (a && b)
        return apr_pstrcat(r->pool, a, ",", b, NULL);
    return a ? a : b;
}

int sitemap_log_transaction(request_rec *r)
{
    sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    request_rec *orig = r, *last = r;
    sm_response resp;
    sm_change change;
    sm_verdict verdict;
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
    resp.authenticated = orig->user || last->user
                         || apr_table_get(orig->headers_in, "Authorization");
    resp.x_robots_tag = response_header(last, "X-Robots-Tag");
    resp.cache_control = response_header(last, "Cache-Control");
    resp.has_path_info = (last->path_info && *last->path_info)
                         || (orig->path_info && *orig->path_info);
    resp.is_subrequest = orig->main != NULL;
    resp.base_len = strlen(conf->site.base);

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
        const char *lm = apr_table_get(last->headers_out, "Last-Modified");
        if (lm) {
            apr_time_t t = apr_date_parse_http(lm);
            change.last_modified = t == APR_DATE_BAD ? 0 : t;
        }
        change.etag = apr_table_get(last->headers_out, "ETag");
    }
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "%s %s%s",
                  verdict == SM_RECORD ? "recording" : "forgetting",
                  conf->site.base, url);
    sm_recorder_add(conf->recorder, &change);
    return OK;
}
