/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_config.c: the directives.  Every value is checked here, when
 * the configuration is read: a bad one stops start-up with a message that
 * names the directive, the value and what is allowed.  A directive of a
 * common kind is a row of the table below and a sitemap_value saying
 * where its value goes and what is allowed; each kind has one setter,
 * reading with src/util/sm_parse.h as sitemapctl does.  The directives of
 * their own kind are in mod_sitemap_config_site.c (where the site and its
 * store are) and mod_sitemap_config_rules.c (what is recorded, how it is
 * listed). */
#include "mod_sitemap_config.h"

#include "http_core.h"

#include <apr_strings.h>

#include "indexnow/sm_indexnow.h"
#include "serve/sm_robots.h"
#include "serve/sm_sitemap.h"
#include "serve/sm_news.h"
#include "util/sm_parse.h"

#define MAX_FLUSH_INTERVAL apr_time_from_sec(3600)
#define MAX_EXPIRE         apr_time_from_sec(100LL * 366 * 86400)
#define MAX_URLS_LIMIT     APR_INT64_C(1000000000000)
#define CACHE_MAX_MIN      (APR_INT64_C(1) << 20)
#define CACHE_MAX_MAX      (APR_INT64_C(1) << 40)

const char *sitemap_in_server_only(cmd_parms *cmd)
{
    return ap_check_cmd_context(cmd, NOT_IN_DIR_CONTEXT);
}

/* How a directive of a common kind is read (its cmd->info).  A refusal
 * says "NAME: 'VALUE' is not allowed: " then allowed, the problem check
 * found, and after. */
typedef struct {
    apr_size_t offset;          /* its field in sitemap_server_conf */
    apr_size_t size;            /* and the field's size (counts: int or
                                   apr_int64_t) */
    apr_int64_t min, max;       /* counts, sizes, durations */
    int flags;                  /* durations: SM_DURATION_DAYS; lists:
                                   VALUE_LOWER */
    /* Checked values and lists: NULL when arg is allowed, else what is
     * wrong with it ("" when allowed says all). */
    const char *(*check)(apr_pool_t *p, const char *arg);
    const char *allowed, *after;
} sitemap_value;

#define VALUE_LOWER 1           /* a list's values are kept in lowercase */

#define FIELD(f) APR_OFFSETOF(sitemap_server_conf, f), \
                 sizeof(((sitemap_server_conf *)0)->f)

static void *field(cmd_parms *cmd, const sitemap_value *v)
{
    return (char *)SITEMAP_CONF(cmd->server) + v->offset;
}

static const char *refuse(cmd_parms *cmd, const sitemap_value *v,
                          const char *arg, const char *problem)
{
    return apr_pstrcat(cmd->pool, cmd->cmd->name, ": '", arg, "' is not "
                       "allowed: ", v->allowed ? v->allowed : "",
                       problem ? problem : "", v->after ? v->after : "",
                       NULL);
}

/* On|Off. */
static const char *set_flag(cmd_parms *cmd, void *dconf, int on)
{
    const char *err = sitemap_in_server_only(cmd);
    (void)dconf;
    if (err)
        return err;
    *(int *)field(cmd, cmd->info) = on;
    return NULL;
}

/* A duration (sm_parse_duration): ms, s, mi, h, and d when days make
 * sense, as httpd's timeout directives read them. */
static const char *set_duration(cmd_parms *cmd, void *dconf,
                                const char *arg)
{
    const sitemap_value *v = cmd->info;
    const char *err = sitemap_in_server_only(cmd);
    (void)dconf;
    if (err)
        return err;
    if (sm_parse_duration(arg, v->flags, v->min, v->max,
                          field(cmd, v)) != APR_SUCCESS)
        return refuse(cmd, v, arg, NULL);
    return NULL;
}

/* A whole number from min to max, digits only ("10x", "-1", " 5" and
 * overflow are refused). */
static const char *set_count(cmd_parms *cmd, void *dconf, const char *arg)
{
    const sitemap_value *v = cmd->info;
    const char *err = sitemap_in_server_only(cmd);
    apr_int64_t n;
    (void)dconf;

    if (err)
        return err;
    if (sm_parse_count(arg, v->min, v->max, &n) != APR_SUCCESS)
        return apr_psprintf(cmd->pool, "%s: '%s' is not allowed: a whole "
                            "number from %" APR_INT64_T_FMT " to %"
                            APR_INT64_T_FMT, cmd->cmd->name, arg, v->min,
                            v->max);
    if (v->size == sizeof(int))
        *(int *)field(cmd, v) = (int)n;
    else
        *(apr_int64_t *)field(cmd, v) = n;
    return NULL;
}

/* A size in bytes, or with K, M, G or T (sm_parse_size). */
static const char *set_size(cmd_parms *cmd, void *dconf, const char *arg)
{
    const sitemap_value *v = cmd->info;
    const char *err = sitemap_in_server_only(cmd);
    apr_int64_t n;
    (void)dconf;

    if (err)
        return err;
    if (sm_parse_size(arg, v->min, v->max, &n) != APR_SUCCESS)
        return refuse(cmd, v, arg, NULL);
    *(apr_off_t *)field(cmd, v) = (apr_off_t)n;
    return NULL;
}

/* A string that v->check allows. */
static const char *set_value(cmd_parms *cmd, void *dconf, const char *arg)
{
    const sitemap_value *v = cmd->info;
    const char *err = sitemap_in_server_only(cmd);
    (void)dconf;

    if (err)
        return err;
    if ((err = v->check(cmd->temp_pool, arg)) != NULL)
        return refuse(cmd, v, arg, err);
    *(const char **)field(cmd, v) = arg;
    return NULL;
}

/* One more string that v->check allows, to a list made at the first (a
 * vhost's list replaces the main server's: see the merge). */
static const char *add_value(cmd_parms *cmd, void *dconf, const char *arg)
{
    const sitemap_value *v = cmd->info;
    apr_array_header_t **list = field(cmd, v);
    const char *err = sitemap_in_server_only(cmd);
    (void)dconf;

    if (err)
        return err;
    if ((err = v->check(cmd->temp_pool, arg)) != NULL)
        return refuse(cmd, v, arg, err);
    if (!*list)
        *list = apr_array_make(cmd->pool, 4, sizeof(char *));
    if (v->flags & VALUE_LOWER) {
        char *lower = apr_pstrdup(cmd->pool, arg);
        ap_str_tolower(lower);
        arg = lower;
    }
    APR_ARRAY_PUSH(*list, const char *) = arg;
    return NULL;
}

/* ---- the checks of values ------------------------------------------ */

static const char *param_name_problem(apr_pool_t *p, const char *arg)
{
    (void)p;
    return sm_is_param_name(arg) ? NULL : "";
}

static const char *sitemap_path_problem(apr_pool_t *p, const char *arg)
{
    (void)p;
    return sm_sitemap_path_check(arg);
}

static const char *text_path_problem(apr_pool_t *p, const char *arg)
{
    (void)p;
    return sm_doc_path_check(arg, ".txt");
}

static const char *html_path_problem(apr_pool_t *p, const char *arg)
{
    (void)p;
    return sm_doc_path_check(arg, ".html");
}

static const char *stylesheet_url_problem(apr_pool_t *p, const char *arg)
{
    (void)p;
    return sm_stylesheet_url_check(arg);
}

static const char *indexnow_key_problem(apr_pool_t *p, const char *arg)
{
    (void)p;
    return sm_indexnow_key_problem(arg);
}

/* ---- the directives of common kinds -------------------------------- */

static sitemap_value v_enabled = { FIELD(enabled), 0, 0, 0, NULL, NULL,
                                   NULL };
static sitemap_value v_robots = { FIELD(robots), 0, 0, 0, NULL, NULL,
                                  NULL };
static sitemap_value v_robots_fallback = { FIELD(robots_fallback), 0, 0, 0,
                                           NULL, NULL, NULL };
static sitemap_value v_read_head = { FIELD(read_head), 0, 0, 0, NULL, NULL,
                                     NULL };
static sitemap_value v_indexnow = { FIELD(indexnow), 0, 0, 0, NULL, NULL,
                                    NULL };
static sitemap_value v_images = { FIELD(images), 0, 0, 0, NULL, NULL, NULL };
/* SitemapImageHosts: host names (ASCII: an IDN in its xn-- form), no
 * scheme, port or path. */
static sitemap_value v_image_hosts = {
    FIELD(image_hosts), 0, 0, VALUE_LOWER, sitemap_image_host_problem,
    "give host names such as cdn.example.com (no scheme, port or path; an "
    "internationalised name in its xn-- form)", NULL
};
static sitemap_value v_indexnow_stale = { FIELD(indexnow_stale), 0, 0, 0,
                                          NULL, NULL, NULL };

static sitemap_value v_flush_interval = {
    FIELD(flush_interval), apr_time_from_msec(10), MAX_FLUSH_INTERVAL, 0,
    NULL, "a duration from 10ms to 1h, such as 500ms, 1s, 2mi or 1h (a bare "
    "number is seconds)", NULL
};
static sitemap_value v_expire = {
    FIELD(expire), 0, MAX_EXPIRE, SM_DURATION_DAYS, NULL, "0 (never) or a "
    "duration up to 100 years, such as 30d, 720h or 3600s (a bare number "
    "is seconds)", NULL
};
static sitemap_value v_indexnow_interval = {
    FIELD(indexnow_interval), apr_time_from_msec(100),
    apr_time_from_sec(86400), 0, NULL, "a duration from 100ms to 24h, such "
    "as 10s or 5mi (a bare number is seconds)", NULL
};

static sitemap_value v_max_urls = { FIELD(max_urls), 1, MAX_URLS_LIMIT, 0,
                                    NULL, NULL, NULL };
static sitemap_value v_page_size = { FIELD(page_size), 1, SM_PAGE_MAX_URLS,
                                     0, NULL, NULL, NULL };
static sitemap_value v_hosts_max = { FIELD(hosts_max), 1, 1000000, 0, NULL,
                                     NULL, NULL };

/* SitemapCacheMaxSize: from 1M to 1T. */
static sitemap_value v_cache_max = {
    FIELD(cache_max), CACHE_MAX_MIN, CACHE_MAX_MAX, 0, NULL, "a size from 1M "
    "to 1T (bytes, or a whole number with K, M, G or T)", NULL
};

static sitemap_value v_sitemap_path = {
    FIELD(sitemap_path), 0, 0, 0, sitemap_path_problem, "a URL path that ",
    ", such as /sitemap.xml"
};
/* SitemapTextPath (.txt) and SitemapHTMLPath (.html): checked as
 * SitemapPath is. */
static sitemap_value v_text_path = {
    FIELD(text_path), 0, 0, 0, text_path_problem, "a URL path that ",
    ", such as /sitemap.txt"
};
static sitemap_value v_html_path = {
    FIELD(html_path), 0, 0, 0, html_path_problem, "a URL path that ",
    ", such as /sitemap.html"
};
static sitemap_value v_html_stylesheet = {
    FIELD(html_stylesheet), 0, 0, 0, stylesheet_url_problem, "the URL ",
    "; wanted a URL such as /styles/site-map.css"
};
static sitemap_value v_indexnow_key = {
    FIELD(indexnow_key), 0, 0, 0, indexnow_key_problem, NULL, "; IndexNow "
    "wants 8 to 128 characters of a-z, A-Z, 0-9 and '-', such as "
    "3f1e6c2a9b8d4e7f"
};
static sitemap_value v_indexnow_endpoint = {
    FIELD(indexnow_endpoint), 0, 0, 0, sm_indexnow_endpoint_problem, NULL,
    "; give an https:// URL such as " SM_INDEXNOW_DEFAULT_ENDPOINT
    " (http:// only for testing)"
};

static sitemap_value v_content_types = {
    FIELD(content_types), 0, 0, VALUE_LOWER, sitemap_media_type_problem,
    "give media types such as text/html, without parameters", NULL
};
static sitemap_value v_allow_query = {
    FIELD(allow_query), 0, 0, 0, param_name_problem, "give query parameter "
    "names (no '&', '=', '#' or spaces)", NULL
};
/* An absolute http(s) URL with a host, fit for a robots.txt line (see
 * sm_robots_url_problem): refused rather than escaped, since an escape
 * would advertise a URL other than the one written here. */
static sitemap_value v_robots_extra = {
    FIELD(robots_extra), 0, 0, 0, sm_robots_url_problem, NULL, "; wanted: an "
    "absolute http:// or https:// URL of at most 2,048 characters that RFC "
    "3986 allows, without '#', such as "
    "https://www.example.com/news-sitemap.xml"
};

/* The news sitemap and llms.txt (mod_sitemap_news.c) */
static const char *news_path_problem(apr_pool_t *p, const char *arg)
{
    (void)p;
    return sm_doc_path_check(arg, ".xml");
}

static const char *text_problem(apr_pool_t *p, const char *arg)
{
    (void)p;
    return sm_news_text_problem(arg);
}

static sitemap_value v_news_path = {
    FIELD(news_path), 0, 0, 0, news_path_problem, "a URL path that ",
    ", such as /news-sitemap.xml"
};
static sitemap_value v_llms_path = {
    FIELD(llms_path), 0, 0, 0, text_path_problem, "a URL path that ",
    ", such as /llms.txt"
};
static sitemap_value v_llms_summary = {
    FIELD(llms_summary), 0, 0, 0, text_problem, "one line of text: it is ",
    NULL
};
static sitemap_value v_llms_title = {
    FIELD(llms_title), 0, 0, 0, text_problem, "one line of text: it is ",
    NULL
};
static sitemap_value v_llms_max = { FIELD(llms_max), 1, SM_LLMS_MAX_LIMIT,
                                    0, NULL, NULL, NULL };

const command_rec sitemap_directives[] = {
    AP_INIT_FLAG("Sitemap", set_flag, &v_enabled, RSRC_CONF,
                 "On to record this virtual host's pages and serve its "
                 "sitemap (default Off)"),
    AP_INIT_TAKE1("SitemapDatabase", sitemap_set_database, NULL, RSRC_CONF,
                  "the SQLite file of the store (relative to ServerRoot), "
                  "or a postgresql:// URI"),
    AP_INIT_TAKE1("SitemapStateDir", sitemap_set_state_dir, NULL, RSRC_CONF,
                  "the module's directory (relative to ServerRoot): the "
                  "default store's, and where a postgresql:// store keeps "
                  "changes not written at a stop and its renditions"),
    AP_INIT_TAKE1("SitemapSiteFromHost", sitemap_set_site_from_host, NULL,
                  RSRC_CONF, "a regular expression allowing the host names "
                  "that get a site of their own in this vhost (matched "
                  "whole against the lowercase name; default none)"),
    AP_INIT_TAKE1("SitemapSiteFromHostMax", set_count, &v_hosts_max, RSRC_CONF,
                  "the most sites SitemapSiteFromHost makes per process, 1 "
                  "to 1000000 (default 1000)"),
    AP_INIT_TAKE1("SitemapBaseURL", sitemap_set_base_url, NULL, RSRC_CONF,
                  "scheme://host[:port][/dir/] of every URL (default: the "
                  "vhost's)"),
    /* httpd's own directives, watched: core and mod_ssl handle them (see
     * mod_sitemap_base.c) */
    AP_INIT_TAKE1("ServerName", sitemap_note_server_name, NULL, RSRC_CONF,
                  "(core's ServerName, noted by mod_sitemap)"),
    AP_INIT_TAKE1("SSLEngine", sitemap_note_ssl_engine, NULL, RSRC_CONF,
                  "(mod_ssl's SSLEngine, noted by mod_sitemap)"),
    AP_INIT_ITERATE("SitemapContentTypes", add_value, &v_content_types,
                    RSRC_CONF,
                    "media types of pages that are recorded (default "
                    "text/html application/xhtml+xml)"),
    AP_INIT_TAKE1("SitemapExclude", sitemap_add_exclude, NULL, RSRC_CONF,
                  "a regular expression of paths never recorded "
                  "(repeatable)"),
    AP_INIT_ITERATE("SitemapAllowQuery", add_value, &v_allow_query, RSRC_CONF,
                    "query parameter names that may appear in recorded URLs"),
    AP_INIT_ITERATE("SitemapSessionCookie", sitemap_add_session_cookie, NULL,
                    RSRC_CONF, "cookie names (NAME, PREFIX* or *SUFFIX) "
                    "whose presence means a signed-in session: such "
                    "requests never add or change a URL; Default for the "
                    "built-in list, None for none"),
    AP_INIT_TAKE1("SitemapFlushInterval", set_duration,
                  &v_flush_interval, RSRC_CONF,
                  "the longest a recorded URL waits in memory (default 1s)"),
    AP_INIT_TAKE1("SitemapExpire", set_duration, &v_expire, RSRC_CONF,
                  "URLs not served for this long leave the store (default "
                  "365d; 0 = never)"),
    AP_INIT_TAKE1("SitemapMaxURLs", set_count, &v_max_urls, RSRC_CONF,
                  "the most URLs stored for one site (default 10000000)"),
    AP_INIT_TAKE1("SitemapPath", set_value, &v_sitemap_path, RSRC_CONF,
                  "the URL path of the sitemap, ending in .xml (default "
                  "/sitemap.xml)"),
    AP_INIT_TAKE1("SitemapPageSize", set_count, &v_page_size, RSRC_CONF,
                  "URLs per sitemap page, 1 to 50000 (default 50000)"),
    AP_INIT_TAKE2("SitemapChangefreq", sitemap_add_changefreq, NULL, RSRC_CONF,
                  "a regular expression and a changefreq word for matching "
                  "URLs (repeatable, first match wins)"),
    AP_INIT_TAKE2("SitemapPriority", sitemap_add_priority, NULL, RSRC_CONF,
                  "a regular expression and a priority 0.0-1.0 for matching "
                  "URLs (repeatable, first match wins)"),
    AP_INIT_FLAG("SitemapRobots", set_flag, &v_robots, RSRC_CONF,
                 "On to add the sitemap's line to /robots.txt (default On)"),
    AP_INIT_TAKE1("SitemapRobotsExtra", add_value, &v_robots_extra, RSRC_CONF,
                  "another absolute sitemap URL to list in robots.txt "
                  "(repeatable)"),
    AP_INIT_FLAG("SitemapRobotsFallback", set_flag,
                 &v_robots_fallback,
                 RSRC_CONF, "On to answer a permissive robots.txt when the "
                 "site has none (default On)"),
    AP_INIT_TAKE1("SitemapCache", sitemap_set_cache, NULL, RSRC_CONF,
                  "On, Off, or the directory of the sitemap's renditions "
                  "(default On: beside the store)"),
    AP_INIT_TAKE1("SitemapCacheMaxSize", set_size, &v_cache_max, RSRC_CONF,
                  "the most disk the renditions take, 1M to 1T (default "
                  "1G)"),
    AP_INIT_FLAG("SitemapReadHead", set_flag, &v_read_head,
                 RSRC_CONF, "On to read each page's own <head> (meta robots, "
                 "canonical, hreflang) as it is served (default On)"),
    AP_INIT_TAKE1("SitemapStylesheet", sitemap_set_stylesheet, NULL, RSRC_CONF,
                  "On (the module's CSS beside SitemapPath), Off, or the URL "
                  "of a CSS stylesheet for the sitemap in browsers (default "
                  "On)"),
    AP_INIT_TAKE1("SitemapTextPath", set_value, &v_text_path,
                  RSRC_CONF, "the URL path of the plain-text sitemap, ending "
                  "in .txt (default: none)"),
    AP_INIT_TAKE1("SitemapHTMLPath", set_value, &v_html_path,
                  RSRC_CONF, "the URL path of the HTML site map for "
                  "visitors, ending in .html (default: none)"),
    AP_INIT_TAKE1("SitemapHTMLStylesheet", set_value,
                  &v_html_stylesheet,
                  RSRC_CONF, "the URL of the HTML site map's stylesheet "
                  "(default: the module's own)"),
    AP_INIT_FLAG("SitemapIndexNow", set_flag, &v_indexnow,
                 RSRC_CONF, "On to submit new, changed and removed URLs "
                 "with IndexNow (default Off)"),
    AP_INIT_TAKE1("SitemapIndexNowKey", set_value, &v_indexnow_key, RSRC_CONF,
                  "the IndexNow key, 8 to 128 of a-z A-Z 0-9 '-' (served "
                  "at /KEY.txt)"),
    AP_INIT_TAKE1("SitemapIndexNowEndpoint", set_value,
                  &v_indexnow_endpoint,
                  RSRC_CONF, "the URL submissions are POSTed to (default "
                  SM_INDEXNOW_DEFAULT_ENDPOINT ")"),
    AP_INIT_TAKE1("SitemapIndexNowInterval", set_duration,
                  &v_indexnow_interval,
                  RSRC_CONF, "the least time between two submissions of a "
                  "site (default 10s)"),
    AP_INIT_TAKE_ARGV("SitemapCrawler", sitemap_add_crawler, NULL, RSRC_CONF,
                      "NAME UA-REGEX SOURCE...: a crawler whose coverage "
                      "the site tracks (SOURCE: a ranges file or "
                      "dns:SUFFIX[,SUFFIX...])"),
    AP_INIT_FLAG("SitemapImages", set_flag, &v_images, RSRC_CONF,
                 "On to list each page's images (its og:image, "
                 "twitter:image, image_src and the images fetched for it) "
                 "in its <url> (default Off)"),
    AP_INIT_ITERATE("SitemapImageHosts", add_value, &v_image_hosts,
                    RSRC_CONF, "host names besides the site's own whose "
                    "images a page's head may name, such as a CDN "
                    "(default: none)"),
    AP_INIT_FLAG("SitemapIndexNowStale", set_flag, &v_indexnow_stale,
                 RSRC_CONF, "On to submit with IndexNow, once, listed URLs "
                 "a crawler has not fetched since they changed over a day "
                 "ago (default Off; needs SitemapIndexNow On)"),
    AP_INIT_TAKE1("SitemapNewsPath", set_value, &v_news_path, RSRC_CONF,
                  "the URL path of the Google News sitemap, ending in .xml "
                  "(default: none)"),
    AP_INIT_TAKE2("SitemapNewsPublication", sitemap_set_news_publication,
                  NULL, RSRC_CONF, "NAME LANGUAGE: the publication the news "
                  "sitemap names (required with SitemapNewsPath)"),
    AP_INIT_TAKE1("SitemapLLMsPath", set_value, &v_llms_path, RSRC_CONF,
                  "the URL path of llms.txt, ending in .txt (default: "
                  "none)"),
    AP_INIT_TAKE1("SitemapLLMsSummary", set_value, &v_llms_summary,
                  RSRC_CONF, "the summary llms.txt gives (default: none)"),
    AP_INIT_TAKE1("SitemapLLMsTitle", set_value, &v_llms_title, RSRC_CONF,
                  "llms.txt's title (default: the home page's title)"),
    AP_INIT_TAKE1("SitemapLLMsMax", set_count, &v_llms_max, RSRC_CONF,
                  "the most links llms.txt gives, 1 to 50000 (default "
                  "500)"),
    { NULL }
};
