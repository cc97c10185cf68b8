/* mod_sitemap.h: what the httpd glue files share.  Core code lives in src/
 * and never includes this. */
#ifndef MOD_SITEMAP_H
#define MOD_SITEMAP_H

#include "httpd.h"
#include "http_config.h"

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

    /* Resolved in post_config for vhosts with Sitemap On. */
    sm_site_conf site;
    sm_rules rules;
    /* This process's writer for db_path (set in child_init). */
    sm_recorder *recorder;
} sitemap_server_conf;

#define SITEMAP_CONF(s) \
    ((sitemap_server_conf *)ap_get_module_config((s)->module_config, \
                                                 &sitemap_module))

#endif
