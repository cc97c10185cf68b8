/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_config_rules.c: the directives that say what is recorded and
 * how it is listed, where they are of their own kind: media types,
 * exclusions, session cookies, changefreq and priority. */
#include "mod_sitemap_config.h"

#include "http_core.h"

#include <apr_lib.h>
#include <apr_strings.h>

#include "serve/sm_sitemap.h"

/* A media type: type "/" subtype, token characters only, no parameters. */
static int is_media_type(const char *s)
{
    const char *slash = strchr(s, '/');
    static const char *const tspecials = "()<>@,;:\\\"/[]?={} \t";
    const char *c;

    if (!slash || slash == s || !slash[1] || strchr(slash + 1, '/'))
        return 0;
    for (c = s; *c; c++)
        if (c != slash && (!apr_isprint(*c) || strchr(tspecials, *c)))
            return 0;
    return 1;
}

const char *sitemap_media_type_problem(apr_pool_t *p, const char *arg)
{
    (void)p;
    return is_media_type(arg) ? NULL : "";
}

const char *sitemap_add_exclude(cmd_parms *cmd, void *dconf, const char *arg)
{
    const char *err = sitemap_in_server_only(cmd);
    sitemap_server_conf *conf = SITEMAP_CONF(cmd->server);
    sm_regex *re;
    (void)dconf;

    if (err)
        return err;
    if (!(re = sm_regex_compile(cmd->pool, arg, &err)))
        return apr_psprintf(cmd->pool, "SitemapExclude: '%s' is not a valid "
                            "regular expression: %s", arg, err);
    APR_ARRAY_PUSH(conf->excludes, sm_regex *) = re;
    return NULL;
}

/* The session cookies of the common applications (SitemapSessionCookie's
 * default; the README says why each is there). */
static const char *const default_session_cookies[] = {
    "wordpress_logged_in_*", "wordpress_sec_*", "wp-postpass_*",
    "comment_author_*",                 /* WordPress */
    "SESS*", "SSESS*",                  /* Drupal */
    "joomla_user_state",                /* Joomla */
    "*_session", "*UserID",             /* MediaWiki, Rails, Laravel */
    "sessionid",                        /* Django */
    "PHPSESSID",                        /* PHP */
    "JSESSIONID",                       /* Java servlets */
    "connect.sid",                      /* Express */
    NULL
};

static void push_defaults(apr_array_header_t *a)
{
    int i;

    for (i = 0; default_session_cookies[i]; i++)
        APR_ARRAY_PUSH(a, const char *) = default_session_cookies[i];
}

const apr_array_header_t *sitemap_default_session_cookies(apr_pool_t *p)
{
    apr_array_header_t *a = apr_array_make(p, 16, sizeof(const char *));

    push_defaults(a);
    return a;
}

/* A cookie name (RFC 6265: an HTTP token, as httpd scans them), or one
 * with a leading or trailing '*' standing for any prefix or suffix. */
static int is_cookie_pattern(const char *s)
{
    apr_size_t n = strlen(s);
    apr_size_t from = s[0] == '*', to = n && s[n - 1] == '*' ? n - 1 : n;

    if (to <= from || (from && to < n))         /* "*", "**", "*x*" */
        return 0;
    return ap_scan_http_token(s + from) == s + to
           && !memchr(s + from, '*', to - from);
}

const char *sitemap_add_session_cookie(cmd_parms *cmd, void *dconf,
                                       const char *arg)
{
    const char *err = sitemap_in_server_only(cmd);
    sitemap_server_conf *conf = SITEMAP_CONF(cmd->server);
    (void)dconf;

    if (err)
        return err;
    if (!conf->session_cookies)
        conf->session_cookies = apr_array_make(cmd->pool, 16,
                                               sizeof(const char *));
    else if (conf->session_cookies->nelts == 0)
        return "SitemapSessionCookie: None must be the only value";
    if (strcasecmp(arg, "None") == 0) {
        if (conf->session_cookies->nelts)
            return "SitemapSessionCookie: None must be the only value";
        return NULL;                    /* empty: no session cookies */
    }
    if (strcasecmp(arg, "Default") == 0) {
        push_defaults(conf->session_cookies);
        return NULL;
    }
    if (!is_cookie_pattern(arg))
        return apr_psprintf(cmd->pool, "SitemapSessionCookie: '%s' is not "
                            "allowed: give cookie names, each may start or "
                            "end with '*' (such as PHPSESSID, "
                            "wordpress_logged_in_* or *_session), Default "
                            "for the built-in list, or None", arg);
    APR_ARRAY_PUSH(conf->session_cookies, const char *) = arg;
    return NULL;
}

static const char *add_annotation(cmd_parms *cmd, apr_array_header_t *list,
                                  const char *pattern, const char *value)
{
    sm_annotation *a;
    const char *err;
    sm_regex *re = sm_regex_compile(cmd->pool, pattern, &err);

    if (!re)
        return apr_psprintf(cmd->pool, "%s: '%s' is not a valid regular "
                            "expression: %s", cmd->cmd->name, pattern, err);
    a = apr_array_push(list);
    a->re = re;
    a->value = value;
    return NULL;
}

const char *sitemap_add_changefreq(cmd_parms *cmd, void *dconf,
                                   const char *pattern, const char *word)
{
    const char *err = sitemap_in_server_only(cmd);
    (void)dconf;

    if (err)
        return err;
    if ((err = sm_changefreq_check(word)) != NULL)
        return apr_psprintf(cmd->pool, "SitemapChangefreq: '%s' is not "
                            "allowed: %s", word, err);
    return add_annotation(cmd, SITEMAP_CONF(cmd->server)->changefreq,
                          pattern, word);
}

const char *sitemap_add_priority(cmd_parms *cmd, void *dconf,
                                 const char *pattern, const char *value)
{
    const char *err = sitemap_in_server_only(cmd);
    const char *canon;
    (void)dconf;

    if (err)
        return err;
    if (!(canon = sm_priority_canon(cmd->pool, value)))
        return apr_psprintf(cmd->pool, "SitemapPriority: '%s' is not allowed:"
                            " a number from 0.0 to 1.0 with one decimal, "
                            "such as 0.8", value);
    return add_annotation(cmd, SITEMAP_CONF(cmd->server)->priority, pattern,
                          canon);
}
