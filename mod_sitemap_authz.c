/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_authz.c: what would an anonymous visitor from anywhere get?
 *
 * A page is published in the sitemap only if anyone may fetch it.  The
 * request that served it cannot tell: it came from somewhere (`Require ip
 * 127.0.0.1`, `Require local`, a RewriteCond on %{REMOTE_ADDR}, an <If> on
 * a cookie), so httpd is asked again, for a stand-in visitor: from
 * 192.0.2.1 (TEST-NET-1, documentation only: no real client has it) with
 * no name (a "Require host" never resolves it: the lookup is marked as
 * failed, so no DNS query is made), no user, no request header but Host
 * (no cookie, no Authorization, no User-Agent), no environment variables
 * and no notes.
 *
 * The stand-in looks the URL the client asked for up as httpd's own
 * lookups do (ap_sub_req_method_uri, the handler never runs): every phase
 * of request.c's ap_process_request_internal for it, so translate_name
 * (mod_rewrite's server rules, mod_alias), the <Location>, <If>,
 * <Directory> and <Files> walks, .htaccess files, the access, authn and
 * authz checkers under Satisfy as configured, and fixups (per-directory
 * and .htaccess RewriteRules, a RedirectMatch inside <If>).  SetEnvIf
 * (server and per-directory rules) runs for it too, from its own address
 * and without headers: httpd runs it in post_read_request and
 * header_parser, which a lookup skips, so this module runs header_parser
 * for the stand-in (sitemap_authz_stand_in).  An internal rewrite (a RewriteRule
 * in a directory context: "redirect:") is followed as mod_rewrite's
 * handler would.  Where the visitor's request was redirected internally
 * by its handler (an Action, a CGI script's local Location), the stand-in
 * goes on from that request to where the visitor was sent.  At most
 * MAX_LOOKUPS lookups in all.
 *
 * The page is published only if that ends in the same place: no error
 * or redirect status (401, 403, 3xx, 404, 410...), and the same file (or
 * proxied URL) as the request that served it.  A visitor sent to
 * another file (a rule rewriting outsiders to a "members only" page
 * answered 200) is not served this page, so it is not published either;
 * so is a page MultiViews negotiates on Accept-Language when the client's
 * choice is not the default one.
 *
 * What a lookup cannot see: mod_rewrite never applies rules with [NS],
 * nor [R] redirects, to a subrequest, so a restriction made only with
 * such a rule is not seen (README); -U and -F conditions (lookahead) are
 * not evaluated for it either.  A handler that refuses by itself (a script
 * checking REMOTE_ADDR) cannot be asked without running it.  An access
 * checker with side effects (counting requests per client) sees the
 * stand-in as one more request from 192.0.2.1.  A rule granting access
 * from something the visitor's own request carries (a header, a cookie)
 * is judged without it, so such a page is not recorded: that errs towards
 * not publishing.  The check runs only for responses about to be recorded
 * (not for repeats), and the stand-in's log level is kept at emerg (also
 * over a section's own LogLevel) so its refusals never reach the error
 * log.  Each lookup has its own pool, destroyed at once; the stand-in
 * itself (a copy of the request and of the connection, in the request's
 * pool) has no filters, so nothing a lookup adds reaches the visitor's. */
#include "mod_sitemap.h"

#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_request.h"

#include <apr_strings.h>

APLOG_USE_MODULE(sitemap);

#define ANONYMOUS_IP "192.0.2.1"
/* Lookups for one page: internal rewrites and redirects followed
 * (httpd's LimitInternalRecursion: 10). */
#define MAX_LOOKUPS 10
/* mod_rewrite's handler for a rewrite in a directory context. */
#define REWRITE_REDIRECT "redirect-handler"

static apr_sockaddr_t *anonymous_addr;
static struct ap_logconf quiet = { NULL, APLOG_EMERG };

apr_status_t sitemap_authz_init(apr_pool_t *pconf)
{
    return apr_sockaddr_info_get(&anonymous_addr, ANONYMOUS_IP, APR_INET, 0,
                                 0, pconf);
}

/* A stand-in's lookup (or a lookup made under it: mod_dir's index, a
 * negotiated variant) is on the stand-in's copy of the connection: no
 * real connection has that address structure. */
static int on_stand_in(const request_rec *r)
{
    return anonymous_addr && r->connection->client_addr == anonymous_addr;
}

/* After the last <Location>/<If> walk, before header_parser and the
 * access checks: a section's LogLevel does not reach the stand-in, and
 * the header_parser hooks a lookup skips (SetEnvIf's per-directory rules)
 * run for it as for a visitor's request.  mod_setenvif takes its server
 * rules at its first call on a request and its per-directory ones at the
 * next, as it does in post_read_request then header_parser. */
int sitemap_authz_stand_in(request_rec *r)
{
    int rv;

    if (!on_stand_in(r))
        return DECLINED;
    r->log = &quiet;
    if (r->main && !r->main->main
        && ((rv = ap_run_header_parser(r)) != OK
            || (rv = ap_run_header_parser(r)) != OK))
        return rv;
    return DECLINED;
}

/* A distinct copy of the server's defaults: a lookup whose configuration
 * is its parent's takes the parent's authorization as done
 * (ap_process_request_internal), so the parent must never share one. */
static ap_conf_vector_t *own_defaults(request_rec *r)
{
    ap_conf_vector_t *v = ap_create_request_config(r->pool);
    module *m;

    for (m = ap_top_module; m; m = m->next)
        ap_set_module_config(v, m, ap_get_module_config(
                                 r->server->lookup_defaults, m));
    return v;
}

/* The stand-in: orig's vhost, request line and URI, nothing of its
 * visitor's, on a copy of the connection from ANONYMOUS_IP. */
static request_rec *stand_in(request_rec *orig)
{
    request_rec *anon;
    conn_rec *c;
    const char *host;

    c = apr_pmemdup(orig->pool, orig->connection, sizeof(*c));
    c->client_addr = anonymous_addr;
    c->client_ip = ANONYMOUS_IP;
    c->remote_host = "";            /* looked up, no name: no DNS query */
    c->double_reverse = -1;
    c->remote_logname = NULL;
    c->log = NULL;
    c->notes = apr_table_make(orig->pool, 1);   /* nothing leaks into it */

    anon = apr_pmemdup(orig->pool, orig, sizeof(*anon));
    anon->connection = c;
    anon->useragent_addr = anonymous_addr;
    anon->useragent_ip = c->client_ip;
    anon->useragent_host = "";
    anon->double_reverse = -1;
    anon->user = NULL;
    anon->ap_auth_type = NULL;
    /* Only the Host every visitor of the page's URL sends (a vhost's
     * <If> or RewriteCond on %{HTTP_HOST} routes on it), nothing else. */
    anon->headers_in = apr_table_make(orig->pool, 1);
    if ((host = apr_table_get(orig->headers_in, "Host")))
        apr_table_setn(anon->headers_in, "Host", host);
    anon->trailers_in = apr_table_make(orig->pool, 1);
    anon->subprocess_env = apr_table_make(orig->pool, 4);
    anon->notes = apr_table_make(orig->pool, 1);
    anon->kept_body = NULL;
    anon->prev = anon->next = anon->main = NULL;
    anon->log = &quiet;
    /* Its own request configuration (SetEnvIf keeps there whether it ran)
     * but core's of orig: core_create_req reads a lookup's parent's, and
     * its notes are the walk caches lookups start from, as orig's own
     * lookups do (every <If> is evaluated again). */
    anon->request_config = ap_create_request_config(orig->pool);
    ap_set_core_module_config(anon->request_config,
                              ap_get_core_module_config(orig->request_config));
    anon->per_dir_config = own_defaults(orig);
    /* No filters: nothing a lookup adds can reach the visitor's. */
    anon->output_filters = anon->proto_output_filters = NULL;
    anon->input_filters = anon->proto_input_filters = NULL;
    /* SetEnvIf's server rules, as post_read_request runs them, so that
     * translate_name (RewriteCond %{ENV:...}) sees what they set. */
    ap_run_header_parser(anon);
    return anon;
}

/* Did the stand-in's lookup end where this request of the visitor's was
 * served?  The same file; or the same one behind a SetHandler
 * "proxy:URL" (php-fpm's way), for which mod_proxy's handler names the
 * file "proxy:URL/file", made canonical, with "?query" when there is one. */
static int same_place(const request_rec *sub, const request_rec *real)
{
    const char *f = real->filename, *q;
    apr_size_t n, len;

    if (!sub->filename || !f)
        return !sub->filename && !f && !strcmp(sub->uri, real->uri);
    if (!strcmp(sub->filename, f))
        return 1;
    if (!real->handler || strncmp(real->handler, "proxy:", 6) != 0
        || strncmp(f, "proxy:", 6) != 0
        || !strncmp(sub->filename, "proxy:", 6))
        return 0;
    n = strlen(sub->filename);
    len = strlen(f);
    if (real->args && (q = strrchr(f, '?')) && !strcmp(q + 1, real->args))
        len = (apr_size_t)(q - f);
    return len > n && !strncmp(f + len - n, sub->filename, n);
}

/* Where in the visitor's requests, from "at" to the final one, did the
 * stand-in's lookup of uri end?  NULL when refused or elsewhere.  A
 * rewrite in a directory context ("redirect:") is followed, as
 * mod_rewrite's handler would; *lookups counts them all. */
static const request_rec *lookup(request_rec *anon, const char *uri,
                                 const request_rec *at, int *lookups)
{
    request_rec *sub;
    const request_rec *found = NULL;

    while (uri && ++*lookups <= MAX_LOOKUPS) {
        sub = ap_sub_req_method_uri("GET", uri, anon, NULL);
        uri = NULL;
        if (sub->status == HTTP_OK && sub->handler && sub->filename
            && !strcmp(sub->handler, REWRITE_REDIRECT)
            && !strncmp(sub->filename, "redirect:", 9))
            uri = apr_pstrcat(anon->pool, sub->filename + 9,
                              sub->args ? "?" : NULL, sub->args, NULL);
        else if (sub->status == HTTP_OK)
            for (found = at; found && !same_place(sub, found);
                 found = found->next)
                ;
        ap_log_rerror(APLOG_MARK, APLOG_TRACE2, 0, at, "anonymous "
                      "lookup of %s: status %d, %s", sub->unparsed_uri,
                      sub->status, sub->filename ? sub->filename : "-");
        ap_destroy_sub_req(sub);
    }
    return found;
}

int sitemap_anonymous_allowed(request_rec *orig, const request_rec *last)
{
    request_rec *anon;
    const request_rec *from = orig, *at;
    const char *uri = orig->unparsed_uri;
    int lookups = 0;

    /* An absolute-form target's path (its authority chose the vhost, as
     * the request's Host does); anything else is not judged. */
    if (uri && uri[0] != '/' && (uri = strstr(uri, "://")))
        uri = strchr(uri + 3, '/');
    if (!anonymous_addr || !uri || uri[0] != '/')
        return 0;
    /* Nothing looks at who asks: the stand-in would be answered as the
     * visitor was (mod_sitemap_authz_conf.c). */
    if (sitemap_authz_client_blind(orig, last))
        return 1;
    anon = stand_in(orig);
    /* A handler that redirected internally (an Action, a CGI script's
     * local Location) did so after the request it ran for: the stand-in
     * goes on from there to where the visitor was sent, until the final
     * request is reached. */
    while ((at = lookup(anon, uri, from, &lookups)) && at != last) {
        from = at->next;
        uri = from->unparsed_uri;
    }
    return at == last;
}
