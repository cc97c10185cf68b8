/* mod_sitemap.h: what the httpd glue files share.  Core code lives in src/
 * and never includes this. */
#ifndef MOD_SITEMAP_H
#define MOD_SITEMAP_H

#include "httpd.h"
#include "http_config.h"

#include "sm_hot.h"
#include "sm_recorder.h"
#include "sm_rules.h"
#include "sm_store.h"

extern module AP_MODULE_DECLARE_DATA sitemap_module;

/* Per-server (per-vhost) configuration.  Every field starts "unset" (-1 or
 * NULL) so a vhost inherits what it does not set; see merge_server_conf. */
typedef struct {
    int enabled;                        /* Sitemap */
    const char *db_path;                /* SitemapDatabase */
    const char *base_url;               /* SitemapBaseURL */
    apr_array_header_t *content_types;  /* SitemapContentTypes */
    apr_array_header_t *excludes;       /* SitemapExclude: added to the
                                           main server's list */
    apr_array_header_t *allow_query;    /* SitemapAllowQuery */
    apr_interval_time_t flush_interval; /* SitemapFlushInterval */
    apr_interval_time_t expire;         /* SitemapExpire */
    apr_int64_t max_urls;               /* SitemapMaxURLs */
    const char *sitemap_path;           /* SitemapPath */
    int page_size;                      /* SitemapPageSize */
    apr_array_header_t *changefreq;     /* SitemapChangefreq: sm_annotation,
                                           the vhost's before the main's */
    apr_array_header_t *priority;       /* SitemapPriority: likewise */
    int robots;                         /* SitemapRobots */
    apr_array_header_t *robots_extra;   /* SitemapRobotsExtra */
    int robots_fallback;                /* SitemapRobotsFallback */

    /* Resolved in post_config for vhosts with Sitemap On. */
    sm_site_conf site;
    apr_size_t base_len;                /* strlen(site.base) */
    sm_rules rules;
    apr_array_header_t *robots_urls;    /* the Sitemap lines' URLs */
    const char *robots_etag_suffix;     /* appended to robots.txt ETags */
    apr_time_t loaded;                  /* when this configuration was read */
    const char *db_shown;               /* db_path as logged: a URI's
                                           password masked */
    apr_uint64_t config_tag;            /* what of the config shapes the
                                           XML, hashed into every ETag */
    sm_logger logger;                   /* the core's messages, logged
                                           with this vhost */
    /* This process's writer and readers for db_path (child_init). */
    sm_recorder *recorder;
    struct apr_reslist_t *readers;
} sitemap_server_conf;

/* Hooks implemented by the glue files, registered in mod_sitemap.c. */
int sitemap_check_config(apr_pool_t *pconf, apr_pool_t *plog,
                         apr_pool_t *ptemp, server_rec *main_s);
apr_status_t sitemap_authz_init(apr_pool_t *pconf);
int sitemap_anonymous_allowed(request_rec *r);
int sitemap_prepare_database(apr_pool_t *p, server_rec *s, const char *path,
                             const sm_logger *log);
int sitemap_log_transaction(request_rec *r);
int sitemap_translate_name(request_rec *r);
void sitemap_record_prefetch(const request_rec *r,
                             const sitemap_server_conf *conf);
int sitemap_map_to_storage(request_rec *r);
int sitemap_handler(request_rec *r);
void sitemap_robots_register(apr_pool_t *p);
apr_status_t sitemap_readers_create(struct apr_reslist_t **out,
                                    apr_pool_t *pchild, const char *path);

#define SITEMAP_CONF(s) \
    ((sitemap_server_conf *)ap_get_module_config((s)->module_config, \
                                                 &sitemap_module))

#endif
