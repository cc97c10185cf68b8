/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_config.c: the directives.  Every value is checked here, when
 * the configuration is read: a bad one stops start-up with a message that
 * names the directive, the value and what is allowed. */
#include "mod_sitemap.h"

#include "http_core.h"
#include "http_log.h"

#include <apr_lib.h>
#include <apr_strings.h>
#include <sys/stat.h>

#include "indexnow/sm_indexnow.h"
#include "serve/sm_robots.h"
#include "serve/sm_sitemap.h"
#include "util/sm_parse.h"

APLOG_USE_MODULE(sitemap);

#define MAX_FLUSH_INTERVAL apr_time_from_sec(3600)
#define MAX_EXPIRE         apr_time_from_sec(100LL * 366 * 86400)
#define MAX_URLS_LIMIT     APR_INT64_C(1000000000000)

static const char *in_server_only(cmd_parms *cmd)
{
    return ap_check_cmd_context(cmd, NOT_IN_DIR_CONTEXT);
}

/* A duration (sm_parse_duration): ms, s, mi, h, and d when days make
 * sense, as httpd's timeout directives read them. */
static const char *parse_duration(cmd_parms *cmd, const char *arg,
                                  int allow_days, apr_interval_time_t min,
                                  apr_interval_time_t max,
                                  const char *allowed,
                                  apr_interval_time_t *out)
{
    if (sm_parse_duration(arg, allow_days ? SM_DURATION_DAYS : 0, min, max,
                          out) != APR_SUCCESS)
        return apr_psprintf(cmd->pool, "%s: '%s' is not allowed: %s",
                            cmd->cmd->name, arg, allowed);
    return NULL;
}

/* On|Off directives: cmd->info is the offset of the int to set. */
static const char *set_server_flag(cmd_parms *cmd, void *dconf, int on)
{
    const char *err = in_server_only(cmd);
    (void)dconf;
    if (err)
        return err;
    *(int *)((char *)SITEMAP_CONF(cmd->server) + (apr_size_t)cmd->info) = on;
    return NULL;
}

/* A whole number from min to max, digits only ("10x", "-1", " 5" and
 * overflow are refused). */
static const char *parse_count(cmd_parms *cmd, const char *arg,
                               apr_int64_t min, apr_int64_t max,
                               apr_int64_t *out)
{
    const char *err = in_server_only(cmd);

    if (err)
        return err;
    if (sm_parse_count(arg, min, max, out) != APR_SUCCESS)
        return apr_psprintf(cmd->pool, "%s: '%s' is not allowed: a whole "
                            "number from %" APR_INT64_T_FMT " to %"
                            APR_INT64_T_FMT, cmd->cmd->name, arg, min, max);
    return NULL;
}

static const char *set_max_urls(cmd_parms *cmd, void *dconf, const char *arg)
{
    (void)dconf;
    return parse_count(cmd, arg, 1, MAX_URLS_LIMIT,
                       &SITEMAP_CONF(cmd->server)->max_urls);
}

static const char *set_page_size(cmd_parms *cmd, void *dconf, const char *arg)
{
    apr_int64_t n;
    const char *err = parse_count(cmd, arg, 1, SM_PAGE_MAX_URLS, &n);
    (void)dconf;
    if (!err)
        SITEMAP_CONF(cmd->server)->page_size = (int)n;
    return err;
}

/* SitemapSiteFromHost: the pattern must match the whole normal name. */
static const char *set_site_from_host(cmd_parms *cmd, void *dconf,
                                      const char *arg)
{
    const char *err = in_server_only(cmd);
    sm_regex *re;
    (void)dconf;

    if (err)
        return err;
    /* Alone first: a pattern such as "a)|(b" must not balance the
     * anchoring group. */
    if (!*arg || !sm_regex_compile(cmd->temp_pool, arg, &err)
        || !(re = sm_regex_compile(cmd->pool, apr_pstrcat(cmd->temp_pool,
                                   "^(?:", arg, ")$", NULL), &err)))
        return apr_psprintf(cmd->pool, "SitemapSiteFromHost: '%s' is not a "
                            "valid regular expression: %s", arg,
                            *arg ? err : "empty");
    SITEMAP_CONF(cmd->server)->host_re = re;
    return NULL;
}

static const char *set_hosts_max(cmd_parms *cmd, void *dconf,
                                 const char *arg)
{
    apr_int64_t n;
    const char *err = parse_count(cmd, arg, 1, 1000000, &n);
    (void)dconf;
    if (!err)
        SITEMAP_CONF(cmd->server)->hosts_max = (int)n;
    return err;
}

/* Does the nearest existing ancestor of path look usable for the store?
 * Creating it and handing it to User/Group happens in post_config. */
const char *sitemap_db_location_problem(apr_pool_t *p, const char *path)
{
    struct stat sb;
    char *dir = apr_pstrdup(p, path);
    char *slash;

    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return apr_psprintf(p, "SitemapDatabase: '%s' exists and is not a "
                            "regular file; give the path of an SQLite file "
                            "(it is created if missing)", path);
    while ((slash = strrchr(dir, '/')) != NULL) {
        *slash = '\0';
        if (!*dir)
            return NULL;            /* reached "/" */
        if (stat(dir, &sb) == 0) {
            if (!S_ISDIR(sb.st_mode))
                return apr_psprintf(p, "SitemapDatabase: '%s' cannot be "
                                    "created: '%s' is not a directory",
                                    path, dir);
            return NULL;
        }
    }
    return NULL;
}

/* SitemapStateDir: the main server's only (every vhost's default store
 * and every URI store's spills are there). */
static const char *set_state_dir(cmd_parms *cmd, void *dconf,
                                 const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    char *path;
    apr_size_t n;
    (void)dconf;

    if (err)
        return err;
    if (!*arg || !(path = ap_server_root_relative(cmd->pool, arg)))
        return apr_psprintf(cmd->pool, "SitemapStateDir: '%s' is not "
                            "allowed: give a directory, absolute or relative "
                            "to ServerRoot", arg);
    for (n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
        path[n - 1] = '\0';
    SITEMAP_CONF(cmd->server)->state_dir = path;
    return NULL;
}

static const char *set_database(cmd_parms *cmd, void *dconf, const char *arg)
{
    const char *err = in_server_only(cmd);
    const char *path;
    (void)dconf;

    if (err)
        return err;
    if (!*arg)
        return "SitemapDatabase: '' is not allowed: give the path of an "
               "SQLite file or a postgresql:// URI";
    if ((err = sm_store_location_problem(cmd->pool, arg)) != NULL)
        return apr_psprintf(cmd->pool, "SitemapDatabase: '%s' cannot be "
                            "used: %s", sm_uri_mask(cmd->pool, arg), err);
    if (!sm_store_is_file(arg)) {
        /* a database server's: no place on this machine */
        SITEMAP_CONF(cmd->server)->db_path = arg;
        return NULL;
    }
    path = ap_server_root_relative(cmd->pool, arg);
    if (!path)
        return apr_psprintf(cmd->pool, "SitemapDatabase: '%s' is not a valid "
                            "path", arg);
    /* What is at the path is the state of the store, not configuration:
     * checked here only by a configuration test (-t).  `-k stop` and
     * `-k graceful` read the configuration too, and must work whatever
     * became of the store meanwhile; a start checks it in post_config. */
    if (ap_state_query(AP_SQ_RUN_MODE) == AP_SQ_RM_CONFIG_TEST
        && (err = sitemap_db_location_problem(cmd->pool, path)) != NULL)
        return err;
    SITEMAP_CONF(cmd->server)->db_path = path;
    return NULL;
}

static const char *set_base_url(cmd_parms *cmd, void *dconf, const char *arg)
{
    const char *err = in_server_only(cmd);
    const char *base, *path = NULL, *origin = arg, *sep;
    (void)dconf;

    if (err)
        return err;
    /* A site under a path: scheme://host[:port]/dir/ (the path ends in
     * "/", and holds what SitemapPath may). */
    if ((sep = ap_strstr_c(arg, "://")) != NULL
        && (sep = strchr(sep + 3, '/')) != NULL && strcmp(sep, "/") != 0
        && !strpbrk(sep, "?#")) {
        origin = apr_pstrmemdup(cmd->temp_pool, arg, (apr_size_t)(sep - arg));
        path = sep;
        if (path[strlen(path) - 1] != '/'
            || sm_sitemap_path_check(apr_pstrcat(cmd->temp_pool, path,
                                                 "sitemap.xml", NULL)))
            return apr_psprintf(cmd->pool, "SitemapBaseURL: '%s' is not "
                                "allowed: the path of a site must be a "
                                "directory ending in '/' (such as "
                                "https://example.com/blog/), of the "
                                "characters a URL path holds literally, "
                                "without empty, '.' or '..' segments", arg);
    }
    if (!(base = sm_url_parse_base(cmd->pool, origin, &err)))
        return apr_psprintf(cmd->pool, "SitemapBaseURL: '%s' is not allowed: "
                            "%s", arg, err);
    SITEMAP_CONF(cmd->server)->base_url = base;
    SITEMAP_CONF(cmd->server)->base_path = path ? apr_pstrdup(cmd->pool, path)
                                                : NULL;
    return NULL;
}

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

static const char *add_content_type(cmd_parms *cmd, void *dconf,
                                    const char *arg)
{
    const char *err = in_server_only(cmd);
    sitemap_server_conf *conf = SITEMAP_CONF(cmd->server);
    (void)dconf;

    if (err)
        return err;
    if (!is_media_type(arg))
        return apr_psprintf(cmd->pool, "SitemapContentTypes: '%s' is not "
                            "allowed: give media types such as text/html, "
                            "without parameters", arg);
    /* A vhost's list replaces the main server's (see the merge). */
    if (!conf->content_types)
        conf->content_types = apr_array_make(cmd->pool, 4, sizeof(char *));
    APR_ARRAY_PUSH(conf->content_types, const char *) =
        apr_pstrdup(cmd->pool, arg);
    ap_str_tolower(APR_ARRAY_IDX(conf->content_types,
                                 conf->content_types->nelts - 1, char *));
    return NULL;
}

static const char *add_exclude(cmd_parms *cmd, void *dconf, const char *arg)
{
    const char *err = in_server_only(cmd);
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

static const char *add_allow_query(cmd_parms *cmd, void *dconf,
                                   const char *arg)
{
    const char *err = in_server_only(cmd);
    sitemap_server_conf *conf = SITEMAP_CONF(cmd->server);
    (void)dconf;

    if (err)
        return err;
    if (!sm_is_param_name(arg))
        return apr_psprintf(cmd->pool, "SitemapAllowQuery: '%s' is not "
                            "allowed: give query parameter names (no '&', "
                            "'=', '#' or spaces)", arg);
    if (!conf->allow_query)
        conf->allow_query = apr_array_make(cmd->pool, 4, sizeof(char *));
    APR_ARRAY_PUSH(conf->allow_query, const char *) = arg;
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

static const char *add_session_cookie(cmd_parms *cmd, void *dconf,
                                      const char *arg)
{
    const char *err = in_server_only(cmd);
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

static const char *set_flush_interval(cmd_parms *cmd, void *dconf,
                                      const char *arg)
{
    const char *err = in_server_only(cmd);
    (void)dconf;
    if (err)
        return err;
    return parse_duration(cmd, arg, 0, apr_time_from_msec(10),
                          MAX_FLUSH_INTERVAL, "a duration from 10ms to 1h, "
                          "such as 500ms, 1s, 2mi or 1h (a bare number is "
                          "seconds)",
                          &SITEMAP_CONF(cmd->server)->flush_interval);
}

static const char *set_expire(cmd_parms *cmd, void *dconf, const char *arg)
{
    const char *err = in_server_only(cmd);
    (void)dconf;
    if (err)
        return err;
    return parse_duration(cmd, arg, 1, 0, MAX_EXPIRE, "0 (never) or a "
                          "duration up to 100 years, such as 30d, 720h or "
                          "3600s (a bare number is seconds)",
                          &SITEMAP_CONF(cmd->server)->expire);
}

static const char *set_sitemap_path(cmd_parms *cmd, void *dconf,
                                    const char *arg)
{
    const char *err = in_server_only(cmd);
    (void)dconf;

    if (err)
        return err;
    if ((err = sm_sitemap_path_check(arg)) != NULL)
        return apr_psprintf(cmd->pool, "SitemapPath: '%s' is not allowed: "
                            "a URL path that %s, such as /sitemap.xml", arg,
                            err);
    SITEMAP_CONF(cmd->server)->sitemap_path = arg;
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

static const char *add_changefreq(cmd_parms *cmd, void *dconf,
                                  const char *pattern, const char *word)
{
    const char *err = in_server_only(cmd);
    (void)dconf;

    if (err)
        return err;
    if ((err = sm_changefreq_check(word)) != NULL)
        return apr_psprintf(cmd->pool, "SitemapChangefreq: '%s' is not "
                            "allowed: %s", word, err);
    return add_annotation(cmd, SITEMAP_CONF(cmd->server)->changefreq,
                          pattern, word);
}

static const char *add_priority(cmd_parms *cmd, void *dconf,
                                const char *pattern, const char *value)
{
    const char *err = in_server_only(cmd);
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

/* An absolute http(s) URL with a host, fit for a robots.txt line (see
 * sm_robots_url_problem): refused rather than escaped, since an escape
 * would advertise a URL other than the one written here. */
static const char *add_robots_extra(cmd_parms *cmd, void *dconf,
                                    const char *arg)
{
    const char *err = in_server_only(cmd);
    sitemap_server_conf *conf = SITEMAP_CONF(cmd->server);
    const char *why;
    (void)dconf;

    if (err)
        return err;
    if ((why = sm_robots_url_problem(cmd->pool, arg)))
        return apr_psprintf(cmd->pool, "SitemapRobotsExtra: '%s' is not "
                            "allowed: %s; wanted: an absolute http:// or "
                            "https:// URL of at most 2,048 characters that "
                            "RFC 3986 allows, without '#', such as "
                            "https://www.example.com/news-sitemap.xml",
                            arg, why);
    if (!conf->robots_extra)
        conf->robots_extra = apr_array_make(cmd->pool, 2, sizeof(char *));
    APR_ARRAY_PUSH(conf->robots_extra, const char *) = arg;
    return NULL;
}

/* SitemapCache On|Off|DIR: a directory (relative to ServerRoot; httpd
 * resolves "." and ".." segments) turns it on there; no trailing "/", so
 * one directory has one spelling. */
static const char *set_cache(cmd_parms *cmd, void *dconf, const char *arg)
{
    sitemap_server_conf *conf = SITEMAP_CONF(cmd->server);
    const char *err = in_server_only(cmd);
    const char *path;
    (void)dconf;

    if (err)
        return err;
    if (strcasecmp(arg, "On") == 0 || strcasecmp(arg, "Off") == 0) {
        conf->cache = strcasecmp(arg, "On") == 0;
        conf->cache_dir = NULL;
        return NULL;
    }
    path = *arg ? ap_server_root_relative(cmd->pool, arg) : NULL;
    if (!path || strlen(path) < 2 || path[strlen(path) - 1] == '/'
        || strstr(path, "//"))
        return apr_psprintf(cmd->pool, "SitemapCache: '%s' is not allowed: "
                            "On, Off, or the path of a directory (relative "
                            "to ServerRoot; no trailing '/')", arg);
    conf->cache = 1;
    conf->cache_dir = path;
    return NULL;
}

#define CACHE_MAX_MIN (APR_INT64_C(1) << 20)
#define CACHE_MAX_MAX (APR_INT64_C(1) << 40)

/* SitemapCacheMaxSize: bytes, or a number with K, M, G or T (powers of
 * 1024), from 1M to 1T. */
static const char *set_cache_max(cmd_parms *cmd, void *dconf,
                                 const char *arg)
{
    const char *err = in_server_only(cmd);
    apr_int64_t n;
    (void)dconf;

    if (err)
        return err;
    if (sm_parse_size(arg, CACHE_MAX_MIN, CACHE_MAX_MAX, &n) != APR_SUCCESS)
        return apr_psprintf(cmd->pool, "SitemapCacheMaxSize: '%s' is not "
                            "allowed: a size from 1M to 1T (bytes, or a "
                            "whole number with K, M, G or T)", arg);
    SITEMAP_CONF(cmd->server)->cache_max = n;
    return NULL;
}

/* On, Off, or the URL of the administrator's own stylesheet. */
static const char *set_stylesheet(cmd_parms *cmd, void *dconf,
                                  const char *arg)
{
    const char *err = in_server_only(cmd);
    sitemap_server_conf *conf = SITEMAP_CONF(cmd->server);
    (void)dconf;

    if (err)
        return err;
    if (strcasecmp(arg, "On") == 0 || strcasecmp(arg, "Off") == 0) {
        conf->stylesheet_on = strcasecmp(arg, "On") == 0;
        conf->stylesheet_url = NULL;
        return NULL;
    }
    if ((err = sm_stylesheet_url_check(arg)) != NULL)
        return apr_psprintf(cmd->pool, "SitemapStylesheet: '%s' is not "
                            "allowed: the URL %s; wanted On, Off or a URL "
                            "such as /styles/sitemap.css or "
                            "https://www.example.com/sitemap.css", arg, err);
    conf->stylesheet_on = 2;
    conf->stylesheet_url = arg;
    return NULL;
}

/* SitemapTextPath (.txt) and SitemapHTMLPath (.html): cmd->info is the
 * extension; the path is checked as SitemapPath is. */
static const char *set_view_path(cmd_parms *cmd, void *dconf,
                                 const char *arg)
{
    const char *err = in_server_only(cmd);
    const char *ext = cmd->info;
    sitemap_server_conf *conf = SITEMAP_CONF(cmd->server);
    (void)dconf;

    if (err)
        return err;
    if ((err = sm_doc_path_check(arg, ext)) != NULL)
        return apr_psprintf(cmd->pool, "%s: '%s' is not allowed: a URL path "
                            "that %s, such as /sitemap%s", cmd->cmd->name,
                            arg, err, ext);
    if (strcmp(ext, ".txt") == 0)
        conf->text_path = arg;
    else
        conf->html_path = arg;
    return NULL;
}

static const char *set_html_stylesheet(cmd_parms *cmd, void *dconf,
                                       const char *arg)
{
    const char *err = in_server_only(cmd);
    (void)dconf;

    if (err)
        return err;
    if ((err = sm_stylesheet_url_check(arg)) != NULL)
        return apr_psprintf(cmd->pool, "SitemapHTMLStylesheet: '%s' is not "
                            "allowed: the URL %s; wanted a URL such as "
                            "/styles/site-map.css", arg, err);
    SITEMAP_CONF(cmd->server)->html_stylesheet = arg;
    return NULL;
}

static const char *set_indexnow_key(cmd_parms *cmd, void *dconf,
                                    const char *arg)
{
    const char *err = in_server_only(cmd);
    (void)dconf;

    if (err)
        return err;
    if ((err = sm_indexnow_key_problem(arg)) != NULL)
        return apr_psprintf(cmd->pool, "SitemapIndexNowKey: '%s' is not "
                            "allowed: %s; IndexNow wants 8 to 128 characters "
                            "of a-z, A-Z, 0-9 and '-', such as "
                            "3f1e6c2a9b8d4e7f", arg, err);
    SITEMAP_CONF(cmd->server)->indexnow_key = arg;
    return NULL;
}

static const char *set_indexnow_endpoint(cmd_parms *cmd, void *dconf,
                                         const char *arg)
{
    const char *err = in_server_only(cmd);
    (void)dconf;

    if (err)
        return err;
    if ((err = sm_indexnow_endpoint_problem(cmd->temp_pool, arg)) != NULL)
        return apr_psprintf(cmd->pool, "SitemapIndexNowEndpoint: '%s' is not "
                            "allowed: %s; give an https:// URL such as "
                            SM_INDEXNOW_DEFAULT_ENDPOINT " (http:// only for "
                            "testing)", arg, err);
    SITEMAP_CONF(cmd->server)->indexnow_endpoint = arg;
    return NULL;
}

static const char *set_indexnow_interval(cmd_parms *cmd, void *dconf,
                                         const char *arg)
{
    const char *err = in_server_only(cmd);
    (void)dconf;
    if (err)
        return err;
    return parse_duration(cmd, arg, 0, apr_time_from_msec(100),
                          apr_time_from_sec(86400), "a duration from 100ms "
                          "to 24h, such as 10s or 5mi (a bare number is "
                          "seconds)",
                          &SITEMAP_CONF(cmd->server)->indexnow_interval);
}

const command_rec sitemap_directives[] = {
    AP_INIT_FLAG("Sitemap", set_server_flag,
                 (void *)APR_OFFSETOF(sitemap_server_conf, enabled), RSRC_CONF,
                 "On to record this virtual host's pages and serve its "
                 "sitemap (default Off)"),
    AP_INIT_TAKE1("SitemapDatabase", set_database, NULL, RSRC_CONF,
                  "the SQLite file of the store (relative to ServerRoot), "
                  "or a postgresql:// URI"),
    AP_INIT_TAKE1("SitemapStateDir", set_state_dir, NULL, RSRC_CONF,
                  "the module's directory (relative to ServerRoot): the "
                  "default store's, and where a postgresql:// store keeps "
                  "changes not written at a stop and its renditions"),
    AP_INIT_TAKE1("SitemapSiteFromHost", set_site_from_host, NULL,
                  RSRC_CONF, "a regular expression allowing the host names "
                  "that get a site of their own in this vhost (matched "
                  "whole against the lowercase name; default none)"),
    AP_INIT_TAKE1("SitemapSiteFromHostMax", set_hosts_max, NULL, RSRC_CONF,
                  "the most sites SitemapSiteFromHost makes per process, 1 "
                  "to 1000000 (default 1000)"),
    AP_INIT_TAKE1("SitemapBaseURL", set_base_url, NULL, RSRC_CONF,
                  "scheme://host[:port][/dir/] of every URL (default: the "
                  "vhost's)"),
    /* httpd's own directives, watched: core and mod_ssl handle them (see
     * mod_sitemap_base.c) */
    AP_INIT_TAKE1("ServerName", sitemap_note_server_name, NULL, RSRC_CONF,
                  "(core's ServerName, noted by mod_sitemap)"),
    AP_INIT_TAKE1("SSLEngine", sitemap_note_ssl_engine, NULL, RSRC_CONF,
                  "(mod_ssl's SSLEngine, noted by mod_sitemap)"),
    AP_INIT_ITERATE("SitemapContentTypes", add_content_type, NULL, RSRC_CONF,
                    "media types of pages that are recorded (default "
                    "text/html application/xhtml+xml)"),
    AP_INIT_TAKE1("SitemapExclude", add_exclude, NULL, RSRC_CONF,
                  "a regular expression of paths never recorded "
                  "(repeatable)"),
    AP_INIT_ITERATE("SitemapAllowQuery", add_allow_query, NULL, RSRC_CONF,
                    "query parameter names that may appear in recorded URLs"),
    AP_INIT_ITERATE("SitemapSessionCookie", add_session_cookie, NULL,
                    RSRC_CONF, "cookie names (NAME, PREFIX* or *SUFFIX) "
                    "whose presence means a signed-in session: such "
                    "requests never add or change a URL; Default for the "
                    "built-in list, None for none"),
    AP_INIT_TAKE1("SitemapFlushInterval", set_flush_interval, NULL, RSRC_CONF,
                  "the longest a recorded URL waits in memory (default 1s)"),
    AP_INIT_TAKE1("SitemapExpire", set_expire, NULL, RSRC_CONF,
                  "URLs not served for this long leave the store (default "
                  "365d; 0 = never)"),
    AP_INIT_TAKE1("SitemapMaxURLs", set_max_urls, NULL, RSRC_CONF,
                  "the most URLs stored for one site (default 10000000)"),
    AP_INIT_TAKE1("SitemapPath", set_sitemap_path, NULL, RSRC_CONF,
                  "the URL path of the sitemap, ending in .xml (default "
                  "/sitemap.xml)"),
    AP_INIT_TAKE1("SitemapPageSize", set_page_size, NULL, RSRC_CONF,
                  "URLs per sitemap page, 1 to 50000 (default 50000)"),
    AP_INIT_TAKE2("SitemapChangefreq", add_changefreq, NULL, RSRC_CONF,
                  "a regular expression and a changefreq word for matching "
                  "URLs (repeatable, first match wins)"),
    AP_INIT_TAKE2("SitemapPriority", add_priority, NULL, RSRC_CONF,
                  "a regular expression and a priority 0.0-1.0 for matching "
                  "URLs (repeatable, first match wins)"),
    AP_INIT_FLAG("SitemapRobots", set_server_flag,
                 (void *)APR_OFFSETOF(sitemap_server_conf, robots), RSRC_CONF,
                 "On to add the sitemap's line to /robots.txt (default On)"),
    AP_INIT_TAKE1("SitemapRobotsExtra", add_robots_extra, NULL, RSRC_CONF,
                  "another absolute sitemap URL to list in robots.txt "
                  "(repeatable)"),
    AP_INIT_FLAG("SitemapRobotsFallback", set_server_flag,
                 (void *)APR_OFFSETOF(sitemap_server_conf, robots_fallback),
                 RSRC_CONF, "On to answer a permissive robots.txt when the "
                 "site has none (default On)"),
    AP_INIT_TAKE1("SitemapCache", set_cache, NULL, RSRC_CONF,
                  "On, Off, or the directory of the sitemap's renditions "
                  "(default On: beside the store)"),
    AP_INIT_TAKE1("SitemapCacheMaxSize", set_cache_max, NULL, RSRC_CONF,
                  "the most disk the renditions take, 1M to 1T (default "
                  "1G)"),
    AP_INIT_FLAG("SitemapReadHead", set_server_flag,
                 (void *)APR_OFFSETOF(sitemap_server_conf, read_head),
                 RSRC_CONF, "On to read each page's own <head> (meta robots, "
                 "canonical, hreflang) as it is served (default On)"),
    AP_INIT_TAKE1("SitemapStylesheet", set_stylesheet, NULL, RSRC_CONF,
                  "On (the module's CSS beside SitemapPath), Off, or the URL "
                  "of a CSS stylesheet for the sitemap in browsers (default "
                  "On)"),
    AP_INIT_TAKE1("SitemapTextPath", set_view_path, (void *)".txt",
                  RSRC_CONF, "the URL path of the plain-text sitemap, ending "
                  "in .txt (default: none)"),
    AP_INIT_TAKE1("SitemapHTMLPath", set_view_path, (void *)".html",
                  RSRC_CONF, "the URL path of the HTML site map for "
                  "visitors, ending in .html (default: none)"),
    AP_INIT_TAKE1("SitemapHTMLStylesheet", set_html_stylesheet, NULL,
                  RSRC_CONF, "the URL of the HTML site map's stylesheet "
                  "(default: the module's own)"),
    AP_INIT_FLAG("SitemapIndexNow", set_server_flag,
                 (void *)APR_OFFSETOF(sitemap_server_conf, indexnow),
                 RSRC_CONF, "On to submit new, changed and removed URLs "
                 "with IndexNow (default Off)"),
    AP_INIT_TAKE1("SitemapIndexNowKey", set_indexnow_key, NULL, RSRC_CONF,
                  "the IndexNow key, 8 to 128 of a-z A-Z 0-9 '-' (served "
                  "at /KEY.txt)"),
    AP_INIT_TAKE1("SitemapIndexNowEndpoint", set_indexnow_endpoint, NULL,
                  RSRC_CONF, "the URL submissions are POSTed to (default "
                  SM_INDEXNOW_DEFAULT_ENDPOINT ")"),
    AP_INIT_TAKE1("SitemapIndexNowInterval", set_indexnow_interval, NULL,
                  RSRC_CONF, "the least time between two submissions of a "
                  "site (default 10s)"),
    { NULL }
};
