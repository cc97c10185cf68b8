/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_indexnow.c: IndexNow's glue: the key file (GET /KEY.txt),
 * the settings resolved at start-up, and one sender thread per store file
 * in each child (src/indexnow/sm_indexnow.c; the store lets one sender at a time
 * send each batch).  The key file is served through the serving layer
 * (mod_sitemap_serve.c). */
#include "mod_sitemap.h"

#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"

#include <apr_hash.h>
#include <apr_strings.h>

#include "indexnow/sm_indexnow.h"

APLOG_USE_MODULE(sitemap);

#define DEFAULT_INTERVAL apr_time_from_sec(10)
#define SENDER_BUSY_TIMEOUT_MS 5000

/* check_config (also `httpd -t`): IndexNow On needs a key. */
int sitemap_indexnow_check(server_rec *s, const sitemap_server_conf *conf)
{
    const char *missing;

    /* A build without IndexNow refuses every endpoint, the default too. */
    if (conf->enabled == 1 && conf->indexnow == 1
        && (missing = sm_indexnow_endpoint_problem(
                s->process->pconf, SM_INDEXNOW_DEFAULT_ENDPOINT)) != NULL) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, "SitemapIndexNow On: %s",
                     missing);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    if (sitemap_indexnow_stale_check(s, conf) != OK)
        return HTTP_INTERNAL_SERVER_ERROR;
    if (conf->enabled == 1 && conf->indexnow == 1 && !conf->indexnow_key) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, "SitemapIndexNow On needs "
                     "SitemapIndexNowKey: 8 to 128 characters of a-z, A-Z, "
                     "0-9 and '-', served at /KEY.txt");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

int sitemap_indexnow_resolve(apr_pool_t *pconf, server_rec *s,
                             sitemap_server_conf *conf)
{
    if (conf->indexnow != 1) {
        conf->site.indexnow = 0;
        return sitemap_indexnow_stale_check(s, conf);
    }
    if (sitemap_indexnow_check(s, conf) != OK)
        return HTTP_INTERNAL_SERVER_ERROR;
    if (!conf->indexnow_endpoint)
        conf->indexnow_endpoint = SM_INDEXNOW_DEFAULT_ENDPOINT;
    if (conf->indexnow_interval < 0)
        conf->indexnow_interval = DEFAULT_INTERVAL;
    if (strncmp(conf->indexnow_endpoint, "http:", 5) == 0)
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, s, "SitemapIndexNowEndpoint"
                     " %s: plain http, for testing only",
                     conf->indexnow_endpoint);
    conf->indexnow_key_path = apr_pstrcat(pconf, "/", conf->indexnow_key,
                                          ".txt", NULL);
    conf->site.indexnow = 1;
    if (conf->indexnow_stale == 1)
        conf->site.indexnow |= SM_SITE_INDEXNOW_STALE;
    return OK;
}

/* One sender per store file in this process, for the vhosts with
 * IndexNow On that use it. */
void sitemap_indexnow_child_init(apr_pool_t *pchild, server_rec *main_s)
{
    apr_hash_t *senders = apr_hash_make(pchild);
    apr_hash_index_t *hi;
    server_rec *s;
    int inited = 0;

    for (s = main_s; s; s = s->next) {
        sitemap_server_conf *conf = SITEMAP_CONF(s);
        sm_indexnow_site site;
        sm_indexnow *in;

        if (conf->enabled != 1 || !conf->site.base || !conf->site.indexnow)
            continue;
        if (!inited) {
            if (sm_indexnow_global_init() != APR_SUCCESS) {
                ap_log_error(APLOG_MARK, APLOG_ERR, 0, main_s, "IndexNow: "
                             "cannot initialise libcurl; nothing is "
                             "submitted by this process");
                return;
            }
            inited = 1;
        }
        in = apr_hash_get(senders, conf->db_path, APR_HASH_KEY_STRING);
        if (!in) {
            if (sm_indexnow_create(&in, pchild, conf->db_path,
                                   SENDER_BUSY_TIMEOUT_MS, &conf->logger)
                != APR_SUCCESS) {
                ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, "IndexNow: cannot "
                             "set up a sender for '%s'", conf->db_shown);
                continue;
            }
            apr_hash_set(senders, conf->db_path, APR_HASH_KEY_STRING, in);
        }
        site.base = conf->site.base;
        site.key = conf->indexnow_key;
        site.endpoint = conf->indexnow_endpoint;
        site.interval = conf->indexnow_interval;
        site.log = &conf->logger;
        sm_indexnow_add_site(in, &site);
    }
    for (hi = apr_hash_first(pchild, senders); hi; hi = apr_hash_next(hi)) {
        apr_status_t rv = sm_indexnow_start(apr_hash_this_val(hi));
        if (rv != APR_SUCCESS)
            ap_log_error(APLOG_MARK, APLOG_ERR, rv, main_s, "IndexNow: cannot "
                         "start the sender thread of this process");
    }
}

/* /KEY.txt is claimed (by sitemap_translate_name) as the sitemap is,
 * before ProxyPass, rewrites and front controllers (a WordPress .htaccess
 * would send it to index.php, a ProxyPass / to a backend that answers 404,
 * and the engines would refuse every submission with 403).  A file that
 * exists at that path in the document root wins: the module never hides
 * what an administrator put there (it must then hold the key). */
int sitemap_indexnow_claim(request_rec *r, const sitemap_server_conf *conf)
{
    apr_finfo_t fi;

    if (!conf->indexnow_key_path || conf->enabled != 1
        || strcmp(r->uri, conf->indexnow_key_path) != 0)
        return 0;
    return apr_stat(&fi, apr_pstrcat(r->pool, ap_document_root(r), r->uri,
                                     NULL), APR_FINFO_TYPE, r->pool)
           != APR_SUCCESS;
}

/* The key, so that search engines can check the site owns it: fixed
 * bytes, no validators, also for a HEAD (as the CSS). */
static int key_head(sitemap_reply *rp)
{
    ap_set_content_type(rp->r, "text/plain; charset=utf-8");
    rp->bytes = rp->conf->indexnow_key;
    return OK;
}

static const sitemap_doc_type key_type = { 0, key_head, NULL, NULL };

/* GET /KEY.txt (r->handler is the key's). */
int sitemap_indexnow_key_handler(request_rec *r)
{
    sitemap_server_conf *conf = SITEMAP_CONF(r->server);

    if (!r->handler || strcmp(r->handler, SITEMAP_KEY_HANDLER) != 0
        || !conf->indexnow_key_path || conf->enabled != 1)
        return DECLINED;
    return sitemap_serve(r, &key_type, 0, NULL);
}
