/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_config.h: what the directive files share
 * (mod_sitemap_config*.c).  The table is in mod_sitemap_config.c; the
 * directives of a common kind (On|Off, duration, count, size, a checked
 * value or list of values) are read there from a sitemap_value each, the
 * others have a setter of their own in mod_sitemap_config_site.c or
 * mod_sitemap_config_rules.c. */
#ifndef MOD_SITEMAP_CONFIG_H
#define MOD_SITEMAP_CONFIG_H

#include "mod_sitemap.h"

/* Every directive's context check: anywhere but in a directory section. */
const char *sitemap_in_server_only(cmd_parms *cmd);

/* mod_sitemap_config_site.c */
const char *sitemap_set_state_dir(cmd_parms *cmd, void *dconf,
                                  const char *arg);
const char *sitemap_set_database(cmd_parms *cmd, void *dconf,
                                 const char *arg);
const char *sitemap_set_base_url(cmd_parms *cmd, void *dconf,
                                 const char *arg);
const char *sitemap_set_site_from_host(cmd_parms *cmd, void *dconf,
                                       const char *arg);
const char *sitemap_set_cache(cmd_parms *cmd, void *dconf, const char *arg);
const char *sitemap_set_stylesheet(cmd_parms *cmd, void *dconf,
                                   const char *arg);

/* mod_sitemap_config_rules.c */
/* NULL for a media type (type/subtype, no parameters), else "". */
const char *sitemap_media_type_problem(apr_pool_t *p, const char *arg);
const char *sitemap_add_exclude(cmd_parms *cmd, void *dconf,
                                const char *arg);
const char *sitemap_add_session_cookie(cmd_parms *cmd, void *dconf,
                                       const char *arg);
const char *sitemap_add_changefreq(cmd_parms *cmd, void *dconf,
                                   const char *pattern, const char *word);
const char *sitemap_add_priority(cmd_parms *cmd, void *dconf,
                                 const char *pattern, const char *value);

/* mod_sitemap_images.c */
const char *sitemap_image_host_problem(apr_pool_t *p, const char *arg);

/* mod_sitemap_crawl.c */
const char *sitemap_add_crawler(cmd_parms *cmd, void *dconf, int argc,
                                char *const argv[]);

#endif
