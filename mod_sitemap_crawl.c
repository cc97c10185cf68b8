/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_crawl.c: crawl coverage's glue (issue 36; the core is
 * src/crawl): SitemapCrawler, the ranges files read at start-up (and by
 * -t), a crawler's fetch noted in log_transaction, and the verified,
 * unverified and pending claims counted per vhost and crawler in shared
 * memory for the status page.
 *
 * The request path: sm_crawl_precheck first (no regex, no allocation), so
 * an ordinary visitor's request costs a few dozen instructions more; the
 * patterns and the verification only for a User-Agent that may be a
 * crawler's.  No DNS lookup runs here: a dns: source is answered from
 * this process's cache, filled off the request path. */
#include "mod_sitemap.h"
#include "mod_sitemap_config.h"
#include "mod_sitemap_record.h"

#include "http_core.h"
#include "http_log.h"
#include "http_main.h"

#include <apr_atomic.h>
#include <apr_shm.h>
#include <apr_strings.h>

#include "crawl/sm_crawl.h"

APLOG_USE_MODULE(sitemap);

const char *sitemap_add_crawler(cmd_parms *cmd, void *dconf, int argc,
                                char *const argv[])
{
    const char *err = sitemap_in_server_only(cmd);
    sitemap_server_conf *conf = SITEMAP_CONF(cmd->server);
    (void)dconf;

    if (err)
        return err;
    if (!conf->crawlers)
        conf->crawlers = sm_crawl_list_make(cmd->pool);
    return sm_crawl_add(conf->crawlers, cmd->pool, argc, argv);
}

int sitemap_crawl_open(apr_pool_t *p, server_rec *s,
                       sitemap_server_conf *conf)
{
    const char *err;

    if (!conf->crawlers)
        return OK;
    if ((err = sm_crawl_list_open(conf->crawlers, p, apr_time_now()))) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, "%s", err);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}
