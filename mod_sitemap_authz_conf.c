/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_authz_conf.c: does anything in the configuration look at
 * who is asking?
 *
 * The anonymous re-check (mod_sitemap_authz.c) asks httpd again, for a
 * stand-in visitor from 192.0.2.1 without headers, whether a page about
 * to be recorded is served to anyone: a lookup subrequest of its URL,
 * 12,000 instructions a new URL (bench/RESULTS.md).  Its answer can
 * differ from the visitor's own request only where something consults
 * what differs between them: the client's address or name, a request
 * header other than Host, an environment variable set from them, a
 * subrequest (mod_rewrite's [NS]).  Credentials, a client certificate
 * and a session cookie never reach the re-check (sm_rules: such a
 * response is not recorded at all).
 *
 * So at start-up the whole configuration tree (every Include, every
 * vhost, every section) and every loaded module are looked at once.  The
 * re-check is skipped ("client-blind") only when every module is one of
 * a list whose request phases are known to depend on the client solely
 * through directives checked here, and no directive is one that can:
 *
 *   - <If>, <ElseIf>, <Else>; RewriteCond, RewriteMap; a RewriteRule
 *     with %{...} or ${...} or the [NS] flag
 *   - Require other than all, valid-user, user, group, file-owner,
 *     file-group and method (ip, host, local, env, expr, an alias...);
 *     Allow and Deny other than "from all"
 *   - AllowOverride or AllowOverrideList other than None (.htaccess
 *     files are read per request, not here)
 *   - Options naming MultiViews (mod_negotiation picks a file by the
 *     request's headers in the type checker, which a lookup runs; a
 *     type-map handler's choice is made in the handler, which no lookup
 *     ever ran, so Debian's "AddHandler type-map var" is no reason)
 *   - <AuthzProviderAlias> and <AuthnProviderAlias> (a provider of any
 *     name, even one listed below in another case, may be an alias of ip)
 *   - RequestHeader; SSLRequire; SSLVerifyClient other than none;
 *     ProxyRequests or ProxyPassInterpolateEnv on
 *   - any other argument with an expression (%{...}), but for the
 *     logging and response-header directives'
 *
 * Such directives inside a <Location> section (a path, not a regex; one
 * with wildcards counts as the path before its first wildcard) keep
 * the re-check on only for the pages whose URIs (asked for, and served
 * under after any rewrite) start with its path: when nothing outside
 * those sections looks at the client, the stand-in's URIs are the
 * visitor's, so a section not applied to him is not applied to it.
 * Anything else (a module not listed, one of these directives anywhere
 * else, even in a section unrelated to the page) keeps the re-check on
 * for every page, as before; the first such directive or module is logged
 * at info at start-up, with its file and line.  SetEnvIf and BrowserMatch
 * are allowed: every directive that could read what they set is refused
 * above. */
#include "mod_sitemap.h"

#include "http_config.h"
#include "http_log.h"
#include "util_cfgtree.h"

#include <apr_lib.h>
#include <apr_strings.h>

APLOG_USE_MODULE(sitemap);

static int client_blind;

/* Modules whose hooks before the handler look at the client only through
 * the directives checked below (or not at all).  httpd's own "name" of a
 * module is its source file's. */
static const char *const blind_modules[] = {
    "core.c", "http_core.c", "mod_so.c", "mod_watchdog.c",
    "mod_log_config.c", "mod_logio.c", "mod_version.c", "mod_unixd.c",
    "mod_systemd.c", "prefork.c", "worker.c", "event.c",
    "mod_authz_core.c", "mod_authz_host.c", "mod_authz_user.c",
    "mod_authz_groupfile.c", "mod_authz_owner.c", "mod_authn_core.c",
    "mod_authn_file.c", "mod_auth_basic.c", "mod_auth_digest.c",
    "mod_access_compat.c", "mod_alias.c", "mod_rewrite.c", "mod_dir.c",
    "mod_mime.c", "mod_mime_magic.c", "mod_autoindex.c", "mod_deflate.c",
    "mod_filter.c", "mod_env.c", "mod_expires.c", "mod_headers.c",
    "mod_setenvif.c", "mod_negotiation.c", "mod_reqtimeout.c",
    "mod_remoteip.c", "mod_status.c", "mod_info.c", "mod_include.c",
    "mod_cgi.c", "mod_cgid.c", "mod_actions.c", "mod_ssl.c",
    "mod_socache_shmcb.c", "mod_http2.c", "mod_proxy.c",
    "mod_proxy_http.c", "mod_proxy_fcgi.c", "mod_php.c", "mod_php7.c",
    "mod_sitemap.c", NULL
};

/* Directives whose %{...} is a log format or a response header's. */
static const char *const format_directives[] = {
    "LogFormat", "CustomLog", "TransferLog", "ErrorLogFormat", "Header",
    "SetEnvIfExpr", NULL
};

/* Require's providers that ask nothing of the client but its credentials
 * (a response for credentials is never recorded) or its method (GET).
 * Compared exactly: httpd looks providers up by case, and an alias
 * (refused anyway) could be "Valid-User". */
static const char *const blind_requires[] = {
    "all", "valid-user", "user", "group", "file-owner", "file-group",
    "method", NULL
};

static int listed(const char *const *list, const char *name)
{
    for (; *list; list++)
        if (!strcasecmp(*list, name))
            return 1;
    return 0;
}

static int listed_exactly(const char *const *list, const char *name)
{
    for (; *list; list++)
        if (!strcmp(*list, name))
            return 1;
    return 0;
}

static int has(const char *args, const char *what)
{
    return args && ap_strcasestr(args, what) != NULL;
}

/* Is the directive's argument list "On" (first word)? */
static int first_word_is(apr_pool_t *p, const char *args, const char *word)
{
    const char *a = args ? args : "";
    return !strcasecmp(ap_getword_conf(p, &a), word);
}

static int require_blind(apr_pool_t *p, const char *args)
{
    const char *a = args ? args : "";
    const char *w = ap_getword_conf(p, &a);

    if (!strcasecmp(w, "not"))
        w = ap_getword_conf(p, &a);
    return listed_exactly(blind_requires, w);
}

/* Do mod_rewrite's flags ("[L,NS]") name nosubreq? */
static int rewrite_nosubreq(apr_pool_t *p, const char *args)
{
    const char *a = args ? args : "", *w, *flags = NULL;
    char *f, *tok, *last;

    while (*(w = ap_getword_conf(p, &a)))
        flags = w;
    if (!flags || flags[0] != '[')
        return 0;
    f = apr_pstrdup(p, flags + 1);
    for (tok = apr_strtok(f, ",]", &last); tok;
         tok = apr_strtok(NULL, ",]", &last))
        if (!strcasecmp(tok, "NS") || !strcasecmp(tok, "nosubreq"))
            return 1;
    return 0;
}

/* Can this directive (not its section's contents) make the answer
 * depend on the client?  1 when it can. */
static int dependent(apr_pool_t *p, const ap_directive_t *d)
{
    const char *n = d->directive, *a = d->args;

    if (!strcasecmp(n, "<If") || !strcasecmp(n, "<ElseIf")
        || !strcasecmp(n, "<Else") || !strcasecmp(n, "RewriteCond")
        || !strcasecmp(n, "RewriteMap") || !strcasecmp(n, "RequestHeader")
        || !strcasecmp(n, "SSLRequire")
        || !strcasecmp(n, "<AuthzProviderAlias")
        || !strcasecmp(n, "<AuthnProviderAlias"))
        return 1;
    if (!strcasecmp(n, "RewriteRule"))
        return has(a, "%{") || has(a, "${") || rewrite_nosubreq(p, a);
    if (!strcasecmp(n, "Require"))
        return !require_blind(p, a);
    if (!strcasecmp(n, "Allow") || !strcasecmp(n, "Deny"))
        return strcasecmp(a ? a : "", "from all") != 0;
    if (!strcasecmp(n, "AllowOverride") || !strcasecmp(n, "AllowOverrideList"))
        return strcasecmp(a ? a : "", "None") != 0;
    if (!strcasecmp(n, "Options") && has(a, "MultiViews"))
        return 1;
    if (!strcasecmp(n, "SSLVerifyClient"))
        return !first_word_is(p, a, "none");
    if (!strcasecmp(n, "ProxyRequests")
        || !strcasecmp(n, "ProxyPassInterpolateEnv"))
        return !first_word_is(p, a, "off");
    return has(a, "%{") && !listed(format_directives, n);
}

/* The path of a <Location> section (not a regex: not "~", not
 * <LocationMatch>), NULL for any other directive; a path with wildcards
 * (httpd matches it with fnmatch) cut at the first, so that a section
 * for "/private/" followed by a star guards "/private/", and one whose
 * second byte is a wildcard guards every URI.  A container's args end
 * with its '>'. */
static const char *location_path(apr_pool_t *p, const ap_directive_t *d)
{
    char *args;
    const char *a, *w;
    apr_size_t n;

    if (strcasecmp(d->directive, "<Location") || !d->args)
        return NULL;
    args = apr_pstrdup(p, d->args);
    n = strlen(args);
    while (n && (args[n - 1] == '>' || apr_isspace(args[n - 1])))
        args[--n] = '\0';
    a = args;
    w = ap_getword_conf(p, &a);
    if (w[0] != '/' || *a)
        return NULL;
    return apr_pstrndup(p, w, strcspn(w, "*?[\\"));
}

/* The first directive in the tree from d (depth first) that can, outside
 * the <Location> sections it notes in guards (a section whose path the
 * visitor's URI does not start with is not applied to him, nor to the
 * stand-in when nothing outside such sections looks at the client: the
 * stand-in's URI is his). */
static const ap_directive_t *first_dependent(apr_pool_t *p,
                                             const ap_directive_t *d,
                                             apr_array_header_t *guards)
{
    const ap_directive_t *hit;
    const char *loc;

    for (; d; d = d->next) {
        if (d->directive && dependent(p, d))
            return d;
        if (!d->first_child)
            continue;
        if (guards && d->directive && (loc = location_path(p, d))) {
            if ((hit = first_dependent(p, d->first_child, NULL))) {
                ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, NULL, "anonymous "
                             "re-check: for URIs under %s (%s %s at %s:%d)",
                             loc, hit->directive, hit->args ? hit->args : "",
                             hit->filename, hit->line_num);
                APR_ARRAY_PUSH(guards, const char *) = loc;
            }
        }
        else if ((hit = first_dependent(p, d->first_child, guards)))
            return hit;
    }
    return NULL;
}

/* The first active module not listed as blind; NULL when none. */
static const char *unlisted_module(void)
{
    module *m;

    for (m = ap_top_module; m; m = m->next) {
        const char *base = strrchr(m->name, '/');

        if (!listed(blind_modules, base ? base + 1 : m->name))
            return m->name;
    }
    return NULL;
}

/* The guarded sections' paths (pconf), NULL for none. */
static apr_array_header_t *guards;

void sitemap_authz_conf_check(apr_pool_t *pconf, server_rec *s)
{
    const char *mod = unlisted_module();
    apr_array_header_t *g = apr_array_make(pconf, 2, sizeof(const char *));
    const ap_directive_t *d = mod ? NULL : first_dependent(pconf,
                                                           ap_conftree, g);

    client_blind = !mod && !d;
    guards = client_blind && g->nelts ? g : NULL;
    if (client_blind)
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, "anonymous re-check: "
                     "not needed, nothing in the configuration looks at "
                     "who asks%s", guards ? " but in <Location> sections "
                     "(for their URIs)" : "");
    else if (mod)
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, "anonymous re-check: "
                     "on for every new page (module %s)", mod);
    else
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, "anonymous re-check: "
                     "on for every new page (%s %s at %s:%d)", d->directive,
                     d->args ? d->args : "", d->filename, d->line_num);
}

/* Does uri start with path, runs of '/' in either counted as one and
 * letters of any case alike (more than <Location> matches: it errs
 * towards the re-check)? */
static int under(const char *uri, const char *path)
{
    while (*path) {
        if (!*uri || apr_tolower(*uri) != apr_tolower(*path))
            return 0;
        if (*path == '/') {
            while (uri[1] == '/')
                uri++;
            while (path[1] == '/')
                path++;
        }
        uri++;
        path++;
    }
    return 1;
}

int sitemap_authz_client_blind(const request_rec *orig,
                               const request_rec *last)
{
    const request_rec *r;
    int i;

    if (!client_blind)
        return 0;
    if (!guards)
        return 1;
    for (i = 0; i < guards->nelts; i++) {
        const char *path = APR_ARRAY_IDX(guards, i, const char *);

        if (orig->parsed_uri.path && under(orig->parsed_uri.path, path))
            return 0;
        for (r = orig; r; r = r == last ? NULL : r->next)
            if (r->uri && under(r->uri, path))
                return 0;
    }
    return 1;
}
