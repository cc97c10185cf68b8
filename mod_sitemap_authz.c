/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_authz.c: would an anonymous visitor from anywhere be let in?
 *
 * A page is published in the sitemap only if anyone may fetch it.  The
 * request that served it cannot tell: it came from somewhere (`Require ip
 * 127.0.0.1`, `Require local` and `Require host` grant it without any
 * user), so httpd's own access decision is asked again, as request.c's
 * ap_process_request_internal and ap_some_authn_required take it, for a
 * stand-in of the request: the same URL and per-directory configuration,
 * but from 192.0.2.1 (TEST-NET-1, documentation only: no real client has
 * it) with no name (a "Require host" never resolves it: the lookup is
 * marked as failed, so no DNS query is made), no user, no request headers,
 * no environment variables and no notes.  Every authorization provider
 * (mod_authz_core, mod_authz_host, mod_access_compat's Order/Allow/Deny,
 * Require expr, ...) answers for that visitor, under Satisfy as configured.
 *
 * The limits: an access checker with side effects (counting requests per
 * client) sees the stand-in as one more request from 192.0.2.1 (as it does
 * whenever httpd itself calls ap_some_authn_required); a rule granting
 * access from a variable the visitor's own request sets (SetEnvIf on a
 * header) is judged without it, so such a page is not recorded.  Both err
 * towards not publishing.  The check runs only for responses about to be
 * recorded (not for repeats), and the stand-in's log level is kept at
 * emerg so its refusals never reach the error log. */
#include "mod_sitemap.h"

#include "http_core.h"
#include "http_log.h"
#include "http_request.h"

#include <apr_strings.h>

APLOG_USE_MODULE(sitemap);

#define ANONYMOUS_IP "192.0.2.1"

static apr_sockaddr_t *anonymous_addr;
static struct ap_logconf quiet = { NULL, APLOG_EMERG };

apr_status_t sitemap_authz_init(apr_pool_t *pconf)
{
    return apr_sockaddr_info_get(&anonymous_addr, ANONYMOUS_IP, APR_INET, 0,
                                 0, pconf);
}

/* Mirrors the access part of ap_process_request_internal: granted without
 * a user (force_authn aside), under Satisfy All or Any. */
static int granted_without_user(request_rec *r)
{
    int ex;

    if (ap_satisfies(r) == SATISFY_ANY && ap_run_access_checker(r) == OK)
        return 1;
    if (ap_satisfies(r) != SATISFY_ANY && ap_run_access_checker(r) != OK)
        return 0;
    ex = ap_run_access_checker_ex(r);
    return ex == OK && ap_run_force_authn(r) != OK;
}

int sitemap_anonymous_allowed(request_rec *r)
{
    request_rec *anon;
    conn_rec *c;

    if (!anonymous_addr)
        return 0;
    c = apr_pmemdup(r->pool, r->connection, sizeof(*c));
    c->client_addr = anonymous_addr;
    c->client_ip = ANONYMOUS_IP;
    c->remote_host = "";            /* looked up, no name: no DNS query */
    c->double_reverse = -1;
    c->remote_logname = NULL;
    c->log = NULL;

    anon = apr_pmemdup(r->pool, r, sizeof(*anon));
    anon->connection = c;
    anon->useragent_addr = anonymous_addr;
    anon->useragent_ip = c->client_ip;
    anon->useragent_host = "";
    anon->double_reverse = -1;
    anon->user = NULL;
    anon->ap_auth_type = NULL;
    anon->headers_in = apr_table_make(r->pool, 1);
    anon->subprocess_env = apr_table_make(r->pool, 1);
    anon->notes = apr_table_make(r->pool, 1);
    anon->prev = anon->next = anon->main = NULL;
    anon->log = &quiet;
    return granted_without_user(anon);
}
