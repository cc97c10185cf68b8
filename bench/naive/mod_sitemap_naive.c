/* SPDX-License-Identifier: Apache-2.0 */
/* bench/naive/mod_sitemap_naive.c: the naive design, for comparison only.
 *
 * What a first attempt at "record every page into SQLite" looks like: in
 * log_transaction, every 200 GET of an HTML page is upserted into SQLite
 * synchronously, in the request's thread, one autocommit transaction per
 * request.  One connection per process (opened in child_init), shared by
 * the process's threads under a mutex.  The store gets the same durability
 * settings as mod_sitemap's (WAL, synchronous=NORMAL, 5 s busy timeout),
 * so the comparison is about the design, not about fsync.
 *
 * Built only by bench/run; never installed.
 *
 *   LoadModule naive_sitemap_module .../mod_sitemap_naive.so
 *   NaiveSitemapDatabase /path/naive.db
 *   NaiveSitemapBaseURL http://bench.example
 */
#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"

#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <sqlite3.h>

module AP_MODULE_DECLARE_DATA naive_sitemap_module;

typedef struct {
    const char *db_path;
    const char *base;
} naive_conf;

static sqlite3 *db;
static sqlite3_stmt *upsert;
static apr_thread_mutex_t *lock;

static void *create_conf(apr_pool_t *p, server_rec *s)
{
    (void)s;
    return apr_pcalloc(p, sizeof(naive_conf));
}

static const char *set_db(cmd_parms *cmd, void *dconf, const char *arg)
{
    naive_conf *conf = ap_get_module_config(cmd->server->module_config,
                                            &naive_sitemap_module);
    (void)dconf;
    conf->db_path = ap_server_root_relative(cmd->pool, arg);
    return NULL;
}

static const char *set_base(cmd_parms *cmd, void *dconf, const char *arg)
{
    naive_conf *conf = ap_get_module_config(cmd->server->module_config,
                                            &naive_sitemap_module);
    (void)dconf;
    conf->base = arg;
    return NULL;
}

static void child_init(apr_pool_t *p, server_rec *s)
{
    naive_conf *conf = ap_get_module_config(s->module_config,
                                            &naive_sitemap_module);

    if (!conf->db_path)
        return;
    apr_thread_mutex_create(&lock, APR_THREAD_MUTEX_DEFAULT, p);
    if (sqlite3_open_v2(conf->db_path, &db, SQLITE_OPEN_READWRITE
                        | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL)
        != SQLITE_OK) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, "naive: cannot open %s: %s",
                     conf->db_path, sqlite3_errmsg(db));
        return;
    }
    sqlite3_busy_timeout(db, 5000);
    sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                 "CREATE TABLE IF NOT EXISTS urls(site TEXT NOT NULL,"
                 " url TEXT NOT NULL, first_seen INTEGER NOT NULL,"
                 " last_seen INTEGER NOT NULL, PRIMARY KEY(site, url))",
                 NULL, NULL, NULL);
    if (sqlite3_prepare_v2(db, "INSERT INTO urls(site, url, first_seen,"
                           " last_seen) VALUES (?1, ?2, ?3, ?3)"
                           " ON CONFLICT(site, url) DO UPDATE"
                           " SET last_seen = excluded.last_seen",
                           -1, &upsert, NULL) != SQLITE_OK) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, "naive: %s",
                     sqlite3_errmsg(db));
        upsert = NULL;
    }
}

static int log_transaction(request_rec *r)
{
    naive_conf *conf = ap_get_module_config(r->server->module_config,
                                            &naive_sitemap_module);
    request_rec *last = r;
    int rc;

    if (!upsert || !conf->base || r->main || r->method_number != M_GET)
        return DECLINED;
    while (last->next)
        last = last->next;
    if (last->status != HTTP_OK || !last->content_type
        || strncasecmp(last->content_type, "text/html", 9) != 0)
        return DECLINED;

    apr_thread_mutex_lock(lock);
    sqlite3_bind_text(upsert, 1, conf->base, -1, SQLITE_STATIC);
    sqlite3_bind_text(upsert, 2, r->unparsed_uri, -1, SQLITE_STATIC);
    sqlite3_bind_int64(upsert, 3, apr_time_sec(r->request_time));
    rc = sqlite3_step(upsert);
    sqlite3_reset(upsert);
    apr_thread_mutex_unlock(lock);
    if (rc != SQLITE_DONE)
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "naive: upsert %s: %s",
                      r->unparsed_uri, sqlite3_errmsg(db));
    return OK;
}

static void register_hooks(apr_pool_t *p)
{
    (void)p;
    ap_hook_child_init(child_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_log_transaction(log_transaction, NULL, NULL, APR_HOOK_MIDDLE);
}

static const command_rec directives[] = {
    AP_INIT_TAKE1("NaiveSitemapDatabase", set_db, NULL, RSRC_CONF,
                  "the SQLite file"),
    AP_INIT_TAKE1("NaiveSitemapBaseURL", set_base, NULL, RSRC_CONF,
                  "the site's base URL"),
    { NULL }
};

AP_DECLARE_MODULE(naive_sitemap) = {
    STANDARD20_MODULE_STUFF,
    NULL, NULL, create_conf, NULL, directives, register_hooks, 0
};
