/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap.c: the module: configuration life cycle and hook
 * registration.  The work itself is in src/ (the core) and in the other
 * mod_sitemap_*.c glue files. */
#include "mod_sitemap.h"

#include "http_log.h"
#include "http_main.h"
#include "http_core.h"
#include "http_protocol.h"
#include "http_request.h"
#include "ap_mpm.h"
#include "mod_status.h"

#include <apr_strings.h>
#include <apr_hash.h>

#include "util/sm_hash.h"
#include "serve/sm_sitemap.h"


extern const command_rec sitemap_directives[];

static const char *const default_content_types[] = {
    "text/html", "application/xhtml+xml"
};

#define DEFAULT_FLUSH_INTERVAL apr_time_from_sec(1)
#define DEFAULT_EXPIRE         apr_time_from_sec(365 * 86400)
#define DEFAULT_MAX_URLS       APR_INT64_C(10000000)

/* Writer tuning: big enough batches for a crawl, bounded memory. */
#define BATCH_SIZE      1000
#define QUEUE_MAX       20000
#define BUSY_TIMEOUT_MS 5000
#define READER_IDLE     apr_time_from_sec(60)

static void *create_server_conf(apr_pool_t *p, server_rec *s)
{
    sitemap_server_conf *conf = apr_pcalloc(p, sizeof(*conf));
    (void)s;

    conf->enabled = -1;
    conf->db_path = NULL;
    conf->state_dir = NULL;
    conf->base_url = NULL;
    conf->ssl_engine = -1;
    conf->content_types = NULL;
    conf->excludes = apr_array_make(p, 2, sizeof(sm_regex *));
    conf->allow_query = NULL;
    conf->flush_interval = -1;
    conf->expire = -1;
    conf->max_urls = -1;
    conf->sitemap_path = NULL;
    conf->page_size = -1;
    conf->changefreq = apr_array_make(p, 2, sizeof(sm_annotation));
    conf->priority = apr_array_make(p, 2, sizeof(sm_annotation));
    conf->robots = -1;
    conf->robots_extra = NULL;
    conf->robots_fallback = -1;
    conf->cache = -1;
    conf->cache_dir = NULL;
    conf->cache_max = -1;
    conf->read_head = -1;
    conf->stylesheet_on = -1;
    conf->stylesheet_url = NULL;
    conf->text_path = NULL;
    conf->news_path = NULL;
    conf->news_name = NULL;
    conf->news_lang = NULL;
    conf->llms_path = NULL;
    conf->llms_summary = NULL;
    conf->llms_title = NULL;
    conf->llms_max = -1;
    conf->html_path = NULL;
    conf->html_stylesheet = NULL;
    conf->indexnow = -1;
    conf->indexnow_key = NULL;
    conf->indexnow_endpoint = NULL;
    conf->indexnow_interval = -1;
    conf->host_re = NULL;
    conf->hosts_max = -1;
    conf->session_cookies = NULL;
    conf->crawlers = NULL;
    conf->images = -1;
    conf->image_hosts = NULL;
    conf->indexnow_stale = -1;
    conf->named = NULL;
    conf->base_path = NULL;
    return conf;
}

#define MERGE_UNSET(field, unset) \
    (add->field != (unset) ? add->field : base->field)

static void *merge_server_conf(apr_pool_t *p, void *basev, void *addv)
{
    sitemap_server_conf *base = basev, *add = addv;
    sitemap_server_conf *conf = apr_pcalloc(p, sizeof(*conf));

    conf->enabled = MERGE_UNSET(enabled, -1);
    conf->db_path = MERGE_UNSET(db_path, NULL);
    conf->state_dir = MERGE_UNSET(state_dir, NULL);
    conf->base_url = MERGE_UNSET(base_url, NULL);
    conf->base_path = add->base_url ? add->base_path : base->base_path;
    /* The vhost's own ServerName only (see mod_sitemap_base.c). */
    conf->named = add->named;
    conf->ssl_engine = MERGE_UNSET(ssl_engine, -1);
    conf->content_types = MERGE_UNSET(content_types, NULL);
    conf->excludes = apr_array_append(p, base->excludes, add->excludes);
    conf->allow_query = MERGE_UNSET(allow_query, NULL);
    conf->session_cookies = MERGE_UNSET(session_cookies, NULL);
    conf->flush_interval = MERGE_UNSET(flush_interval, -1);
    conf->expire = MERGE_UNSET(expire, -1);
    conf->max_urls = MERGE_UNSET(max_urls, -1);
    conf->sitemap_path = MERGE_UNSET(sitemap_path, NULL);
    conf->page_size = MERGE_UNSET(page_size, -1);
    /* First match wins: the vhost's own rules come first. */
    conf->changefreq = apr_array_append(p, add->changefreq, base->changefreq);
    conf->priority = apr_array_append(p, add->priority, base->priority);
    conf->robots = MERGE_UNSET(robots, -1);
    conf->robots_extra = MERGE_UNSET(robots_extra, NULL);
    conf->robots_fallback = MERGE_UNSET(robots_fallback, -1);
    conf->cache = MERGE_UNSET(cache, -1);
    conf->cache_dir = add->cache != -1 ? add->cache_dir : base->cache_dir;
    conf->cache_max = MERGE_UNSET(cache_max, -1);
    conf->read_head = MERGE_UNSET(read_head, -1);
    conf->stylesheet_on = MERGE_UNSET(stylesheet_on, -1);
    conf->stylesheet_url = add->stylesheet_on != -1 ? add->stylesheet_url
                                                    : base->stylesheet_url;
    conf->text_path = MERGE_UNSET(text_path, NULL);
    conf->news_path = MERGE_UNSET(news_path, NULL);
    conf->news_name = MERGE_UNSET(news_name, NULL);
    conf->news_lang = MERGE_UNSET(news_lang, NULL);
    conf->llms_path = MERGE_UNSET(llms_path, NULL);
    conf->llms_summary = MERGE_UNSET(llms_summary, NULL);
    conf->llms_title = MERGE_UNSET(llms_title, NULL);
    conf->llms_max = MERGE_UNSET(llms_max, -1);
    conf->html_path = MERGE_UNSET(html_path, NULL);
    conf->html_stylesheet = MERGE_UNSET(html_stylesheet, NULL);
    conf->indexnow = MERGE_UNSET(indexnow, -1);
    conf->indexnow_key = MERGE_UNSET(indexnow_key, NULL);
    conf->indexnow_endpoint = MERGE_UNSET(indexnow_endpoint, NULL);
    conf->indexnow_interval = MERGE_UNSET(indexnow_interval, -1);
    /* Per vhost: a mass host is opted in where it is declared only. */
    conf->host_re = add->host_re;
    conf->hosts_max = MERGE_UNSET(hosts_max, -1);
    /* The vhost's own crawlers, else the main server's. */
    conf->crawlers = MERGE_UNSET(crawlers, NULL);
    conf->images = MERGE_UNSET(images, -1);
    conf->image_hosts = MERGE_UNSET(image_hosts, NULL);
    conf->indexnow_stale = MERGE_UNSET(indexnow_stale, -1);
    return conf;
}

/* A hash of everything in the configuration that shapes the XML, so that
 * ETags change when the configuration does. */
static apr_uint64_t hash_annotations(apr_uint64_t h,
                                     const apr_array_header_t *list)
{
    int i;
    for (i = 0; i < list->nelts; i++) {
        const sm_annotation *a = &APR_ARRAY_IDX(list, i, sm_annotation);
        h = sm_hash_str(h, sm_regex_pattern(a->re));
        h = sm_hash_str(h, a->value);
    }
    return sm_hash_str(h, "");
}

static apr_uint64_t config_tag(const sitemap_server_conf *conf)
{
    apr_uint64_t h = SM_HASH_SEED;
    h = sm_hash_str(h, conf->site.base);
    h = sm_hash_str(h, conf->sitemap_path);
    h = hash_annotations(h, conf->changefreq);
    h = hash_annotations(h, conf->priority);
    /* SitemapImages On adds image:image to every <url> that has some. */
    if (conf->images == 1)
        h = sm_hash_str(h, "images");
    return sm_hash_str(h, conf->stylesheet ? conf->stylesheet : "");
}

/* The URLs robots.txt advertises: our sitemap, then SitemapRobotsExtra,
 * each once; and the ETag suffix that says so. */
static void robots_lines(apr_pool_t *p, sitemap_server_conf *conf)
{
    apr_array_header_t *urls = apr_array_make(p, 2, sizeof(char *));
    apr_uint64_t h = SM_HASH_SEED;
    int i, j;

    if (conf->robots < 0)
        conf->robots = 1;
    if (conf->robots_fallback < 0)
        conf->robots_fallback = 1;
    APR_ARRAY_PUSH(urls, const char *) =
        apr_pstrcat(p, conf->site.base, conf->sitemap_path, NULL);
    /* the news sitemap's own line, second (sitemap_robots_urls) */
    if (conf->news_path)
        APR_ARRAY_PUSH(urls, const char *) =
            apr_pstrcat(p, conf->site.base, conf->news_path, NULL);
    for (i = 0; conf->robots_extra && i < conf->robots_extra->nelts; i++) {
        const char *url = APR_ARRAY_IDX(conf->robots_extra, i, const char *);
        for (j = 0; j < urls->nelts; j++)
            if (strcmp(url, APR_ARRAY_IDX(urls, j, const char *)) == 0)
                break;
        if (j == urls->nelts)
            APR_ARRAY_PUSH(urls, const char *) = url;
    }
    for (i = 0; i < urls->nelts; i++)
        h = sm_hash_str(h, APR_ARRAY_IDX(urls, i, const char *));
    conf->robots_urls = urls;
    conf->robots_etag_suffix = apr_psprintf(p, "sitemap%08x",
                                            (unsigned)(h ^ (h >> 32)));
}

/* ---- logging from the core ---------------------------------------------- */

/* The core logs with the vhost it works for (its baton), so that the
 * vhost's ErrorLog and LogLevel apply. */
static void log_to_httpd(void *baton, sm_log_level level, apr_status_t rv,
                         const char *msg)
{
    static const int levels[] = {
        [SM_LOG_ERR] = APLOG_ERR, [SM_LOG_WARN] = APLOG_WARNING,
        [SM_LOG_INFO] = APLOG_INFO, [SM_LOG_DEBUG] = APLOG_DEBUG
    };
    ap_log_error(APLOG_MARK, levels[level], rv, (server_rec *)baton, "%s",
                 msg);
}

/* The most detailed core level s logs (LogLevel, sitemap:LEVEL included):
 * the core does not even format a message above it. */
static sm_log_level core_log_max(const server_rec *s)
{
    int level = ap_get_server_module_loglevel(s, APLOG_MODULE_INDEX);

    return level >= APLOG_DEBUG ? SM_LOG_DEBUG
         : level >= APLOG_INFO ? SM_LOG_INFO
         : level >= APLOG_WARNING ? SM_LOG_WARN : SM_LOG_ERR;
}

/* ---- start-up ------------------------------------------------------------ */

/* SitemapStateDir, or the build's: the default store's directory, and
 * where a store given as a URI keeps its changes not written at a stop
 * and its renditions. */
static const char *state_dir(const sitemap_server_conf *conf)
{
    return conf->state_dir ? conf->state_dir : SITEMAP_STATEDIR;
}

const char *sitemap_default_db(apr_pool_t *p, const sitemap_server_conf *conf)
{
    return apr_pstrcat(p, state_dir(conf), "/sitemap.db", NULL);
}

/* Where a URI store's changes not written at a stop are kept
 * (sm_recorder_conf.spill_path): a URI names no place on this machine, so
 * in the state directory, as the renditions; one name per store (its URI
 * without the password), which its next writer reads back. */
static const char *pg_spill_path(apr_pool_t *p,
                                 const sitemap_server_conf *conf)
{
    return apr_psprintf(p, "%s/pg-%016" APR_UINT64_T_HEX_FMT,
                        state_dir(conf),
                        sm_hash_str(SM_HASH_SEED, conf->db_shown));
}

/* A PostgreSQL store: create its schema now when the role may, and say at
 * start-up what is wrong when it cannot be used.  Never fatal: the
 * children keep trying, and the site is served meanwhile. */
static int prepare_pg(apr_pool_t *p, server_rec *s, const char *uri,
                      const char *shown, const sm_logger *log)
{
    const char *spills = pg_spill_path(p, SITEMAP_CONF(s));
    sm_store *st;
    char err[512];
    apr_status_t rv;

    if (sitemap_prepare_dir(apr_pstrndup(p, spills, (apr_size_t)
                                         (strrchr(spills, '/') - spills)),
                            err, sizeof(err)) != APR_SUCCESS)
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s, "SitemapDatabase "
                     "'%s': changes not written at a stop cannot be kept in "
                     "%s: %s", shown, spills, err);
    rv = sm_store_open(&st, p, uri, SM_STORE_CREATE, BUSY_TIMEOUT_MS, log,
                       err, sizeof(err));

    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, "SitemapDatabase: '%s': "
                     "%s; pages are served, recording waits for the store",
                     shown, err);
        return OK;
    }
    sm_store_close(st);
    return OK;
}

/* At start-up (the dry run, whose errors reach the terminal): refuse a
 * store path that cannot hold a store. */
static int check_db_locations(apr_pool_t *ptemp, server_rec *main_s)
{
    server_rec *s;

    for (s = main_s; s; s = s->next) {
        sitemap_server_conf *conf = SITEMAP_CONF(s);
        const char *problem;
        /* (a PostgreSQL URI names no place on this machine) */
        if (conf->enabled != 1
            || (conf->db_path && !sm_store_is_file(conf->db_path)))
            continue;
        problem = sitemap_db_location_problem(ptemp, conf->db_path
                                                     ? conf->db_path
                                                     : sitemap_default_db(
                                                           ptemp, conf));
        if (problem) {
            ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, "%s", problem);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    return OK;
}

/* post_config, step 1: a vhost that sets none of our directives shares
 * the main server's config struct; it needs its own, since its base URL
 * differs.  And each vhost's own per-process state, so that the pointer
 * is never NULL. */
static void own_confs(apr_pool_t *pconf, server_rec *main_s)
{
    server_rec *s;

    for (s = main_s->next; s; s = s->next) {
        if (SITEMAP_CONF(s) == SITEMAP_CONF(main_s))
            ap_set_module_config(s->module_config, &sitemap_module,
                                 apr_pmemdup(pconf, SITEMAP_CONF(main_s),
                                             sizeof(sitemap_server_conf)));
    }
    for (s = main_s; s; s = s->next)
        SITEMAP_CONF(s)->proc = apr_pcalloc(pconf, sizeof(sitemap_process));
}

/* Step 2: the defaults of what was not set, and the core's logger. */
static void resolve_defaults(apr_pool_t *pconf, server_rec *s,
                             sitemap_server_conf *conf)
{
    int i;

    conf->logger.fn = log_to_httpd;
    conf->logger.baton = s;
    conf->logger.max = core_log_max(s);
    if (!conf->db_path)
        conf->db_path = sitemap_default_db(pconf, conf);
    conf->db_shown = sm_uri_mask(pconf, conf->db_path);
    if (!conf->content_types) {
        conf->content_types = apr_array_make(pconf, 2, sizeof(char *));
        for (i = 0; i < 2; i++)
            APR_ARRAY_PUSH(conf->content_types, const char *) =
                default_content_types[i];
    }
    if (conf->flush_interval < 0)
        conf->flush_interval = DEFAULT_FLUSH_INTERVAL;
    if (conf->expire < 0)
        conf->expire = DEFAULT_EXPIRE;
    conf->sitemap_path = sitemap_effective_path(pconf, conf);
    conf->scope = conf->base_path ? conf->base_path : "/";
    if (conf->page_size < 0)
        conf->page_size = SM_PAGE_MAX_URLS;
    if (conf->read_head < 0)
        conf->read_head = 1;
}

/* Step 3: the site the core sees: its base, limits, stylesheet and the
 * settings kept in the store.  OK or 500. */
static int resolve_site(apr_pool_t *pconf, server_rec *main_s, server_rec *s,
                        sitemap_server_conf *conf)
{
    const char *err = NULL;

    /* (checked by sitemap_check_sites, also with -t) */
    conf->site.base = sitemap_vhost_base(pconf, main_s, s, &err);
    if (!conf->site.base) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, "%s", err);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    conf->base_len = strlen(conf->site.base);
    /* The shortest <loc> is the root's, base + "/". */
    if (conf->base_len + 1 < SM_LOC_MIN_LEN)
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s, "SitemapBaseURL %s:"
                     " the root's <loc>, %s/, has %d characters, fewer "
                     "than the %d the official schema (sitemap.xsd, "
                     "tLoc) requires: validators will refuse the "
                     "sitemap; use a longer host name", conf->site.base,
                     conf->site.base, (int)conf->base_len + 1,
                     SM_LOC_MIN_LEN);
    conf->site.page_size = conf->page_size;
    /* An index lists at most 50,000 pages: the default cap shrinks
     * with small pages; a cap set by hand must fit. */
    if (conf->max_urls < 0) {
        conf->max_urls = (apr_int64_t)conf->page_size * 50000;
        if (conf->max_urls > DEFAULT_MAX_URLS)
            conf->max_urls = DEFAULT_MAX_URLS;
    }
    /* The module's CSS is served when the XML or the HTML site map
     * uses it. */
    if (conf->stylesheet_on == 2)
        conf->stylesheet = conf->stylesheet_url;
    if ((conf->stylesheet_on != 0 && conf->stylesheet_on != 2)
        || (conf->html_path && !conf->html_stylesheet))
        conf->own_css_path = sm_stylesheet_default(pconf,
                                                   conf->sitemap_path);
    if (conf->stylesheet_on != 0 && conf->stylesheet_on != 2)
        conf->stylesheet = conf->own_css_path;
    conf->site.max_urls = conf->max_urls;
    conf->site.expire = conf->expire;
    conf->site.settings = sm_settings_format(pconf, conf->sitemap_path,
                                             conf->page_size,
                                             conf->changefreq,
                                             conf->priority,
                                             conf->stylesheet);
    return OK;
}

/* Step 4: the recording rules.  OK or 500. */
static int resolve_rules(apr_pool_t *pconf, server_rec *s,
                         sitemap_server_conf *conf)
{
    const char *err = NULL;

    conf->rules.content_types = conf->content_types;
    conf->rules.excludes = conf->excludes;
    if (strcmp(conf->scope, "/") != 0) {
        /* A site under a path records only what is under it (its
         * characters, checked by SitemapBaseURL, hold no "\E"). */
        apr_array_header_t *ex = apr_array_copy(pconf, conf->excludes);
        sm_regex *re = sm_regex_compile(pconf, apr_pstrcat(pconf,
                                        "^(?!\\Q", conf->scope,
                                        "\\E)", NULL), &err);
        if (!re) {
            ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, "SitemapBaseURL:"
                         " the scope %s: %s", conf->scope, err);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
        APR_ARRAY_PUSH(ex, sm_regex *) = re;
        conf->rules.excludes = ex;
    }
    conf->rules.allow_query = conf->allow_query;
    conf->sessions = conf->session_cookies
                     ? (conf->session_cookies->nelts
                        ? conf->session_cookies : NULL)
                     : sitemap_default_session_cookies(pconf);
    return OK;
}

/* Step 5: the store, once per db_path (prepared): its directory and file
 * for the User, or a PostgreSQL store's schema.  OK; DECLINED when the
 * path cannot hold a store (logged; the site has no renditions then);
 * else an HTTP status that stops the start. */
static int prepare_store(apr_pool_t *ptemp, server_rec *s,
                         sitemap_server_conf *conf, apr_hash_t *prepared,
                         apr_array_header_t *missing)
{
    const char *problem;
    int rc;

    if (apr_hash_get(prepared, conf->db_path, APR_HASH_KEY_STRING))
        return OK;
    problem = !sm_store_is_file(conf->db_path) ? NULL
        : sitemap_db_location_problem(ptemp, conf->db_path);
    if (problem) {
        /* Found at a restart (a start checks in its dry run): the
         * restart goes on, a store fault never stops the site (the
         * children log it and keep trying). */
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, "%s; pages are "
                     "served, recording waits for the store", problem);
        apr_hash_set(prepared, conf->db_path, APR_HASH_KEY_STRING, "");
        return DECLINED;
    }
    rc = !sm_store_is_file(conf->db_path)
         ? prepare_pg(ptemp, s, conf->db_path, conf->db_shown,
                      &conf->logger)
         : sitemap_prepare_database(ptemp, s, conf->db_path,
                                    &conf->logger, missing);
    if (rc != OK)
        return rc;
    apr_hash_set(prepared, conf->db_path, APR_HASH_KEY_STRING, "");
    return OK;
}

/* Start-up, in the parent: resolve every Sitemap On vhost's
 * configuration, then prepare its store and renditions. */
static int sitemap_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                               apr_pool_t *ptemp, server_rec *main_s)
{
    apr_hash_t *prepared = apr_hash_make(ptemp);
    apr_array_header_t *missing = sitemap_missing_stores(ptemp);
    server_rec *s;
    (void)plog;

    /* httpd reads its configuration twice at start-up: the first pass is a
     * dry run, so nothing is created then. */
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG)
        return sitemap_check_sites(ptemp, main_s) == OK
               && check_db_locations(ptemp, main_s) == OK
               ? sitemap_check_store_places(ptemp, main_s)
               : HTTP_INTERNAL_SERVER_ERROR;
    if (sitemap_authz_init(pconf) != APR_SUCCESS) {
        /* Without it nothing is recorded (see sitemap_anonymous_allowed). */
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, main_s, "cannot make the "
                     "address of an anonymous visitor: nothing is recorded");
    }
    sitemap_authz_conf_check(pconf, main_s);
    own_confs(pconf, main_s);

    for (s = main_s; s; s = s->next) {
        sitemap_server_conf *conf = SITEMAP_CONF(s);
        int rc;

        if (conf->enabled != 1)
            continue;
        resolve_defaults(pconf, s, conf);
        if (resolve_site(pconf, main_s, s, conf) != OK
            || resolve_rules(pconf, s, conf) != OK)
            return HTTP_INTERNAL_SERVER_ERROR;
        conf->config_tag = config_tag(conf);
        conf->loaded = apr_time_now();
        robots_lines(pconf, conf);
        if (sitemap_indexnow_resolve(pconf, s, conf) != OK
            || sitemap_hosts_post_config(pconf, s, conf) != OK
            || sitemap_crawl_open(pconf, s, conf) != OK)
            return HTTP_INTERNAL_SERVER_ERROR;
        sitemap_own_urls_index(conf);
        rc = prepare_store(ptemp, s, conf, prepared, missing);
        if (rc == DECLINED)
            continue;
        if (rc != OK)
            return rc;
        if (sitemap_renditions_post_config(pconf, ptemp, s, conf, prepared) != OK)
            return HTTP_INTERNAL_SERVER_ERROR;
    }
    sitemap_create_stores(main_s, missing);
    return OK;
}

/* The writer's thread closes readers idle for READER_IDLE, so that only the
 * sites being read keep connections (and their caches) open. */
static void close_idle_readers(void *baton, apr_time_t now)
{
    const apr_array_header_t *reader_v = baton;
    int i;

    for (i = 0; i < reader_v->nelts; i++)
        sm_readers_close_idle(APR_ARRAY_IDX(reader_v, i, sm_readers *), now);
}

/* What a child makes once and shares among its vhosts: one writer
 * (queue, memory of written URLs, thread), one recorder and one set of
 * readers per store file (or URI). */
typedef struct {
    apr_pool_t *pool;
    sm_writer *writer;
    apr_hash_t *recorders, *readers, *renditions;
    apr_array_header_t *reader_v;   /* every sm_readers, for the upkeep */
    sm_recorder *any;               /* one recorder, to start the thread */
    int threads;                    /* readers kept idle at most */
} child_state;

/* The recorder of conf's store in this process, made for its first vhost
 * (and the writer with the first): NULL when it cannot be. */
static sm_recorder *child_recorder(child_state *cs, server_rec *s,
                                   sitemap_server_conf *conf)
{
    sm_recorder *rec = apr_hash_get(cs->recorders, conf->db_path,
                                    APR_HASH_KEY_STRING);
    apr_status_t rv;

    if (rec)
        return rec;
    {
        sm_recorder_conf rc = {
            conf->db_shown, conf->flush_interval, BATCH_SIZE, QUEUE_MAX,
            BUSY_TIMEOUT_MS, &conf->logger, conf->db_path,
            !sm_store_is_file(conf->db_path)
            ? pg_spill_path(cs->pool, conf) : NULL,
            cs->writer, 0, 0, 0, 0
        };
        rv = sm_recorder_create(&rec, cs->pool, &rc);
    }
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, "SitemapDatabase "
                     "'%s': cannot set up recording in this process",
                     conf->db_shown);
        return NULL;
    }
    apr_hash_set(cs->recorders, conf->db_path, APR_HASH_KEY_STRING, rec);
    cs->any = rec;
    return rec;
}

/* The readers of conf's store in this process: NULL when they cannot be
 * made. */
static sm_readers *child_readers(child_state *cs, server_rec *s,
                                 sitemap_server_conf *conf)
{
    sm_readers *readers = apr_hash_get(cs->readers, conf->db_path,
                                       APR_HASH_KEY_STRING);
    apr_status_t rv;

    if (readers)
        return readers;
    rv = sm_readers_create(&readers, cs->pool, conf->db_path, cs->threads,
                           READER_IDLE, &conf->logger);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, "SitemapDatabase "
                     "'%s': cannot set up readers in this process",
                     conf->db_shown);
        return NULL;
    }
    apr_hash_set(cs->readers, conf->db_path, APR_HASH_KEY_STRING, readers);
    APR_ARRAY_PUSH(cs->reader_v, sm_readers *) = readers;
    return readers;
}

/* One vhost's state in this process (conf->proc). */
static void child_vhost(child_state *cs, server_rec *s,
                        sitemap_server_conf *conf)
{
    sitemap_process *proc = conf->proc;
    sm_recorder *rec = child_recorder(cs, s, conf);

    if (!rec)
        return;
    sm_recorder_add_site(rec, &conf->site);
    proc->recorder = rec;
    if (sitemap_hosts_child_init(cs->pool, conf) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, "SitemapSiteFromHost: "
                     "cannot set up the sites in this process");
        proc->recorder = NULL;
        return;
    }
    sitemap_renditions_child_init(cs->pool, s, conf, cs->renditions);
    if (sitemap_disallow_child_init(cs->pool, conf) != APR_SUCCESS)
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, "cannot set up the "
                     "robots.txt rules in this process: URLs are "
                     "listed without them");
    proc->readers = child_readers(cs, s, conf);
}

static void sitemap_child_init(apr_pool_t *pchild, server_rec *main_s)
{
    child_state cs = { 0 };
    server_rec *s;

    cs.pool = pchild;
    cs.recorders = apr_hash_make(pchild);
    cs.readers = apr_hash_make(pchild);
    cs.renditions = apr_hash_make(pchild);
    cs.reader_v = apr_array_make(pchild, 4, sizeof(sm_readers *));
    /* A reader per request thread at most is kept idle. */
    cs.threads = 1;
    ap_mpm_query(AP_MPMQ_MAX_THREADS, &cs.threads);
    if (cs.threads < 1)
        cs.threads = 1;

    for (s = main_s; s; s = s->next) {
        sitemap_server_conf *conf = SITEMAP_CONF(s);

        if (conf->enabled != 1 || !conf->site.base)
            continue;
        if (!cs.writer) {
            apr_status_t rv = sm_writer_create(&cs.writer, pchild,
                                               BATCH_SIZE, QUEUE_MAX);
            if (rv != APR_SUCCESS) {
                ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, "cannot set up "
                             "recording in this process");
                return;
            }
        }
        child_vhost(&cs, s, conf);
    }
    if (cs.writer)
        sm_writer_upkeep(cs.writer, close_idle_readers, cs.reader_v);
    sitemap_indexnow_child_init(pchild, main_s);
    if (cs.any) {
        apr_status_t rv = sm_recorder_start(cs.any);
        if (rv != APR_SUCCESS)
            ap_log_error(APLOG_MARK, APLOG_ERR, rv, main_s, "cannot start the "
                         "sitemap writer thread; URLs are written when the "
                         "queue fills and at exit");
    }
}

/* Every hook of the module, in the order httpd runs them: at start-up,
 * then a request's way through (docs/design.md).  Hooks of one kind and
 * one position run in the order they are registered here. */
static void register_hooks(apr_pool_t *p)
{
    /* At load, before any store is opened. */
    sm_store_init();
    /* The output filters' names (not hooks: inserted per request below). */
    sitemap_robots_register(p);
    sitemap_head_register(p);
    sitemap_http_register(p);

    /* Checks that need the whole configuration, also with -t. */
    ap_hook_check_config(sitemap_check_config, NULL, NULL, APR_HOOK_MIDDLE);
    /* Resolve each site, prepare its store and renditions (parent). */
    ap_hook_post_config(sitemap_post_config, NULL, NULL, APR_HOOK_MIDDLE);
    /* The crawlers' counters' shared memory (mod_sitemap_crawl.c). */
    ap_hook_post_config(sitemap_crawl_post_config, NULL, NULL,
                        APR_HOOK_MIDDLE);
    /* Then the counters' shared memory, for the resolved stores. */
    ap_hook_post_config(sitemap_status_post_config, NULL, NULL,
                        APR_HOOK_LAST);
    /* A child's writer, recorders, readers, renditions and sites. */
    ap_hook_child_init(sitemap_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    /* The crawlers' DNS cache and its thread (mod_sitemap_crawl.c). */
    ap_hook_child_init(sitemap_crawl_child_init, NULL, NULL,
                       APR_HOOK_MIDDLE);
    /* Then hand the recorders their shared counters. */
    ap_hook_child_init(sitemap_status_child_init, NULL, NULL, APR_HOOK_LAST);

    /* Claim the module's URLs before mod_rewrite (APR_HOOK_FIRST) or a
     * proxy can take them: the sitemap and its pages, the views and the
     * CSS, the status page's metrics and the IndexNow key file
     * (mod_sitemap_serve.c). */
    ap_hook_translate_name(sitemap_translate_name, NULL, NULL,
                           APR_HOOK_REALLY_FIRST);
    /* What we claimed is no file: skip the directory walk. */
    ap_hook_map_to_storage(sitemap_map_to_storage, NULL, NULL,
                           APR_HOOK_FIRST);
    /* The anonymous stand-in's lookups run header_parser as a visit. */
    ap_hook_post_perdir_config(sitemap_authz_stand_in, NULL, NULL,
                               APR_HOOK_REALLY_FIRST);
    /* Add the Sitemap line to whatever serves robots.txt (and restore
     * its ETags), and read each recordable page's <head> as it is served:
     * one hook (sitemap_insert_filters), */
    ap_hook_insert_filter(sitemap_insert_filters, NULL, NULL,
                          APR_HOOK_MIDDLE);
    /* and, last, name each field of Vary once after the encoders. */
    ap_hook_insert_filter(sitemap_vary_insert_filter, NULL, NULL,
                          APR_HOOK_LAST);
    /* Serve every document the module claimed (mod_sitemap_serve.c), */
    ap_hook_handler(sitemap_handler, NULL, NULL, APR_HOOK_MIDDLE);
    /* and a permissive robots.txt when nothing else answered it. */
    ap_hook_handler(sitemap_robots_fallback, NULL, NULL, APR_HOOK_LAST);
    /* Decide whether the response is a page to record, and queue it. */
    ap_hook_log_transaction(sitemap_log_transaction, NULL, NULL,
                            APR_HOOK_MIDDLE);
    /* A line per site in mod_status's page, when it is loaded. */
    APR_OPTIONAL_HOOK(ap, status_hook, sitemap_status_line, NULL, NULL,
                      APR_HOOK_MIDDLE);
}

AP_DECLARE_MODULE(sitemap) = {
    STANDARD20_MODULE_STUFF,
    NULL,                   /* per-directory config: none */
    NULL,
    create_server_conf,
    merge_server_conf,
    sitemap_directives,
    register_hooks,
    0                       /* flags */
};
