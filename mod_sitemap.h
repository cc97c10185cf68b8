/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap.h: what the httpd glue files share: the configuration, the
 * per-process state, the hooks mod_sitemap.c registers, start-up and a
 * request's helpers.  The directive files share mod_sitemap_config.h too,
 * the recording side mod_sitemap_record.h.  Core code lives in src/ and
 * never includes this. */
#ifndef MOD_SITEMAP_H
#define MOD_SITEMAP_H

#include "httpd.h"
#include "http_config.h"

#include <apr_hash.h>

#include "serve/sm_document.h"
#include "util/sm_hot.h"
#include "store/sm_readers.h"
#include "record/sm_recorder.h"
#include "record/sm_rules.h"
#include "serve/sm_rendition.h"
#include "store/sm_store.h"

extern module AP_MODULE_DECLARE_DATA sitemap_module;

/* Per-server (per-vhost) configuration.  Every field starts "unset" (-1 or
 * NULL) so a vhost inherits what it does not set; see merge_server_conf. */
typedef struct {
    int enabled;                        /* Sitemap */
    const char *db_path;                /* SitemapDatabase */
    const char *state_dir;              /* SitemapStateDir (main server) */
    const char *base_url;               /* SitemapBaseURL: its origin,
                                           scheme://host[:port] */
    const char *base_path;              /* and its path ("/blog/"), NULL:
                                           none ("/") */
    server_rec *named;                  /* the server whose ServerName
                                           was set in this struct (NULL:
                                           none); mod_sitemap_base.c */
    int ssl_engine;                     /* SSLEngine: -1 unset, 0 off, 1
                                           on, 2 optional */
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
    int cache;                          /* SitemapCache On|Off (-1 unset) */
    const char *cache_dir;              /* SitemapCache DIR (NULL: beside
                                           the store) */
    apr_off_t cache_max;                /* SitemapCacheMaxSize */
    int read_head;                      /* SitemapReadHead */
    int stylesheet_on;                  /* SitemapStylesheet On|Off (-1:
                                           unset: On), 2: stylesheet_url */
    const char *stylesheet_url;         /* SitemapStylesheet URL */
    const char *text_path;              /* SitemapTextPath */
    const char *html_path;              /* SitemapHTMLPath */
    const char *html_stylesheet;        /* SitemapHTMLStylesheet */
    int indexnow;                       /* SitemapIndexNow */
    const char *indexnow_key;           /* SitemapIndexNowKey */
    const char *indexnow_endpoint;      /* SitemapIndexNowEndpoint */
    apr_interval_time_t indexnow_interval; /* SitemapIndexNowInterval */
    sm_regex *host_re;                  /* SitemapSiteFromHost, anchored
                                           (per vhost: not inherited) */
    int hosts_max;                      /* SitemapSiteFromHostMax */
    apr_array_header_t *session_cookies; /* SitemapSessionCookie (empty:
                                           None, NULL: unset, so the
                                           defaults) */
    struct sm_crawl_list *crawlers;     /* SitemapCrawler (NULL: none) */
    int images;                         /* SitemapImages (-1 unset: Off) */
    apr_array_header_t *image_hosts;    /* SitemapImageHosts, lowercase
                                           (NULL: none) */
    int indexnow_stale;                 /* SitemapIndexNowStale (-1: unset,
                                           Off) */
    const char *news_path;              /* SitemapNewsPath (NULL: none) */
    const char *news_name;              /* SitemapNewsPublication NAME */
    const char *news_lang;              /* and its LANGUAGE */
    const char *llms_path;              /* SitemapLLMsPath (NULL: none) */
    const char *llms_summary;           /* SitemapLLMsSummary */
    const char *llms_title;             /* SitemapLLMsTitle (NULL: the
                                           home page's title) */
    int llms_max;                       /* SitemapLLMsMax (-1 unset) */

    /* Resolved in post_config for vhosts with Sitemap On. */
    sm_site_conf site;
    apr_size_t base_len;                /* strlen(site.base) */
    const char *scope;                  /* the site's directory: "/", or
                                           SitemapBaseURL's path */
    sm_rules rules;
    const apr_array_header_t *sessions; /* session cookie patterns in
                                           force (NULL: none) */
    apr_array_header_t *robots_urls;    /* the Sitemap lines' URLs */
    const char *robots_etag_suffix;     /* appended to robots.txt ETags */
    const char *stylesheet;             /* the PI's href, NULL: none */
    const char *own_css_path;           /* the built-in CSS's URL path, NULL:
                                           not served */
    const char *indexnow_key_path;      /* "/" KEY ".txt" (IndexNow On) */
    apr_time_t loaded;                  /* when this configuration was read */
    const char *db_shown;               /* db_path as logged: a URI's
                                           password masked */
    apr_uint64_t config_tag;            /* what of the config shapes the
                                           XML, hashed into every ETag */
    sm_logger logger;                   /* the core's messages, logged
                                           with this vhost */
    const char *rendition_stem;         /* this site's files in cache_dir */
    /* SitemapSiteFromHost: the vhost's base split around its host name. */
    const char *host_prefix, *host_suffix;
    int host_port;
    /* This process's state for the vhost (see sitemap_process): never
     * NULL once post_config has run. */
    struct sitemap_process *proc;
    /* The second bytes of the module's own URL paths (SitemapPath, the
     * views, the CSS, news, llms.txt, the IndexNow key), a bit each:
     * translate_name looks no further at a URI whose second byte has no
     * bit (sitemap_own_urls_index). */
    apr_uint32_t own_url_second[8];
} sitemap_server_conf;

/* What one process holds for a vhost, apart from its configuration: made
 * for every vhost in post_config (its own, so that each child has its own
 * copy after the fork, zeroed while the vhost has no recorder); the parent
 * fills in the shared counters, child_init the rest.  Nothing here is
 * merged, inherited or read by -t. */
typedef struct sitemap_process {
    /* The recorder counters of db_path, in shared memory (post_config,
     * mod_sitemap_status.c). */
    sm_recorder_shared *shared;
    /* This process's writer and readers for db_path (child_init). */
    sm_recorder *recorder;
    sm_readers *readers;
    sm_rend_dir *renditions;            /* cache_dir, opened (child_init);
                                           NULL when it cannot be used */
    const char *cache_error;            /* and then why */
    struct sm_sites *hosts;             /* SitemapSiteFromHost's sites */
    /* The site's robots.txt rules (mod_sitemap_disallow.c, child_init),
     * and when this process last looked whether they changed. */
    struct sitemap_disallow *disallow;
    apr_time_t disallow_checked;
    /* SitemapCrawler's claims, in shared memory (mod_sitemap_crawl.c):
     * per crawler SITEMAP_CRAWL_COUNTS counters (verified, unverified,
     * pending), since the server (re)started; NULL: not counted. */
    apr_uint32_t *crawl_counts;
    /* The crawlers' coverage figures read last (mod_sitemap_crawl_cache.c),
     * NULL: none configured. */
    struct sitemap_crawl_cache *crawl_cache;
} sitemap_process;
#define SITEMAP_CRAWL_COUNTS 3

/* ---- hooks: registered in mod_sitemap.c's register_hooks ---------- */

/* Start-up (mod_sitemap_prepare.c: the checks -t makes too; the status
 * page's shared counters after our post_config, handed to the recorders
 * after our child_init). */
int sitemap_check_config(apr_pool_t *pconf, apr_pool_t *plog,
                         apr_pool_t *ptemp, server_rec *main_s);
int sitemap_status_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                               apr_pool_t *ptemp, server_rec *main_s);
void sitemap_status_child_init(apr_pool_t *pchild, server_rec *main_s);
/* Zeroed shared memory made at post_config (mod_sitemap_status.c), or
 * NULL, logged as "cannot create the shared memory of what". */
void *sitemap_shared_zeroed(apr_pool_t *pconf, server_rec *main_s,
                            apr_size_t size, const char *what);
void sitemap_crawl_child_init(apr_pool_t *pchild, server_rec *main_s);
int sitemap_crawl_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                              apr_pool_t *ptemp, server_rec *main_s);
/* translate_name and map_to_storage: every URL the module serves
 * (mod_sitemap_serve.c). */
int sitemap_translate_name(request_rec *r);
int sitemap_map_to_storage(request_rec *r);
/* post_perdir_config: the stand-in's lookups as a visitor's request
 * (mod_sitemap_authz.c). */
int sitemap_authz_stand_in(request_rec *r);
/* insert_filter: sitemap_insert_filters (mod_sitemap_serve.c) calls the
 * first two in a vhost with Sitemap On, for a main request; the Vary
 * filter's hook runs last. */
void sitemap_insert_filters(request_rec *r);
void sitemap_robots_insert_filter(request_rec *r);
void sitemap_head_insert_filter(request_rec *r);
void sitemap_vary_insert_filter(request_rec *r);
/* handler: every document the module claimed (mod_sitemap_serve.c, which
 * dispatches the key file to mod_sitemap_indexnow.c); robots.txt's
 * fallback (mod_sitemap_robots.c). */
int sitemap_handler(request_rec *r);
int sitemap_indexnow_key_handler(request_rec *r);
int sitemap_robots_fallback(request_rec *r);
/* log_transaction (mod_sitemap_record.c). */
int sitemap_log_transaction(request_rec *r);
/* mod_status's status_hook: a line per site. */
int sitemap_status_line(request_rec *r, int flags);
/* The output filters' registration (not hooks). */
void sitemap_robots_register(apr_pool_t *p);
void sitemap_head_register(apr_pool_t *p);
void sitemap_http_register(apr_pool_t *p);

/* ---- start-up: resolving and preparing the configuration ----------- */

/* The store of a vhost without SitemapDatabase: sitemap.db in
 * SitemapStateDir, or in the build's directory (SITEMAP_STATEDIR; Debian:
 * /var/lib/apache2/sitemap).  A store given as a URI keeps its renditions
 * beside that path too. */
const char *sitemap_default_db(apr_pool_t *p,
                               const sitemap_server_conf *conf);

/* SitemapSessionCookie's built-in list (mod_sitemap_config_rules.c). */
const apr_array_header_t *sitemap_default_session_cookies(apr_pool_t *p);
/* Why the store's path cannot hold a store (exists and is not a regular
 * file, below a non-directory), or NULL. */
const char *sitemap_db_location_problem(apr_pool_t *p, const char *path);
/* The site's base URL and scope (mod_sitemap_base.c).  The observers
 * of httpd's own ServerName and SSLEngine (they only note that the
 * directive was given, then let its module handle it). */
const char *sitemap_note_server_name(cmd_parms *cmd, void *dconf,
                                     const char *arg);
const char *sitemap_note_ssl_engine(cmd_parms *cmd, void *dconf,
                                    const char *arg);
/* The vhost's base (scheme://host[:port], no path) from SitemapBaseURL or
 * its own scheme, ServerName and port; NULL with *err saying why (a name
 * httpd guessed, a name that is no URL host). */
const char *sitemap_vhost_base(apr_pool_t *p, server_rec *main_s,
                               server_rec *s, const char **err);
/* SitemapPath as configured, or its default in the site's scope. */
const char *sitemap_effective_path(apr_pool_t *p,
                                   const sitemap_server_conf *conf);
/* Every check of a Sitemap On vhost that needs the whole configuration
 * (base, scope, limits): at start-up, -t and every restart.  OK, or 500
 * after logging what is wrong. */
int sitemap_check_sites(apr_pool_t *ptemp, server_rec *main_s);
/* The User can reach and write every store's directory (fatal at
 * start-up and with -t, logged at a restart). */
int sitemap_check_store_places(apr_pool_t *ptemp, server_rec *main_s);
/* The anonymous visitor's address (mod_sitemap_authz.c). */
apr_status_t sitemap_authz_init(apr_pool_t *pconf);
/* A directory for the children (renditions, a URI store's spills): made
 * when missing (with its missing parents) without following a link
 * (sm_fs_open_dir), and given to the server's User when we are root (a
 * server not started as root makes it as the user its children are). */
apr_status_t sitemap_prepare_dir(const char *dir, char *err, apr_size_t len);
/* Give a SQLite store's files to the User; a missing store goes on
 * missing (created by sitemap_create_stores, the first 64 in one process
 * as the User, the others by the children's writers: a fork per store
 * cost 9 ms each, 9 s for 1,000 new vhosts). */
int sitemap_prepare_database(apr_pool_t *p, server_rec *s, const char *path,
                             const sm_logger *log,
                             apr_array_header_t *missing);
apr_array_header_t *sitemap_missing_stores(apr_pool_t *p);
void sitemap_create_stores(server_rec *s, apr_array_header_t *missing);
/* SitemapSiteFromHost's start-up work for one vhost (the base split) and
 * a child's registry; an HTTP status (OK or 500) / APR status. */
int sitemap_hosts_check(server_rec *s, const sitemap_server_conf *conf);
int sitemap_hosts_post_config(apr_pool_t *p, server_rec *s,
                              sitemap_server_conf *conf);
apr_status_t sitemap_hosts_child_init(apr_pool_t *p,
                                      sitemap_server_conf *conf);
/* IndexNow (mod_sitemap_indexnow.c): the checks, the key's path, the
 * sender of each child. */
int sitemap_indexnow_check(server_rec *s, const sitemap_server_conf *conf);
/* SitemapIndexNowStale On refused without IndexNow (mod_sitemap_crawl.c):
 * OK, or 500 with the error logged. */
int sitemap_indexnow_stale_check(server_rec *s,
                                 const sitemap_server_conf *conf);
/* SitemapCrawler's ranges files read (mod_sitemap_crawl.c): OK, or 500
 * with the error logged. */
int sitemap_crawl_open(apr_pool_t *p, server_rec *s,
                       sitemap_server_conf *conf);
/* The crawlers' coverage cache (mod_sitemap_crawl_cache.c): made per
 * vhost at child_init; out gets one sm_coverage per crawler, read from st
 * when the cache's are too old. */
void sitemap_crawl_cache_init(apr_pool_t *pchild, sitemap_server_conf *conf);
void sitemap_crawl_coverage(const sitemap_server_conf *conf, sm_store *st,
                            apr_time_t now, sm_coverage *out);
int sitemap_indexnow_resolve(apr_pool_t *pconf, server_rec *s,
                              sitemap_server_conf *conf);
void sitemap_indexnow_child_init(apr_pool_t *pchild, server_rec *main_s);
/* The renditions' directory (mod_sitemap_renditions.c). */
int sitemap_renditions_post_config(apr_pool_t *pconf, apr_pool_t *ptemp,
                              server_rec *s, sitemap_server_conf *conf,
                              apr_hash_t *prepared);
void sitemap_renditions_child_init(apr_pool_t *pchild, server_rec *s,
                              sitemap_server_conf *conf, apr_hash_t *opened);
/* The site's own robots.txt rules (mod_sitemap_disallow.c). */
typedef struct sitemap_disallow sitemap_disallow;
apr_status_t sitemap_disallow_child_init(apr_pool_t *pchild,
                                         sitemap_server_conf *conf);

/* ---- a request's helpers ---------------------------------------------- */

/* 404 for a site with no URL recorded yet, saying so (a sitemap that
 * listed a placeholder would list a URL nobody has seen answer 200). */
int sitemap_nothing_yet(request_rec *r);

/* Was r served from a file as it is (the default handler), rather than by
 * a script?  (mod_sitemap_record.c) */
int sitemap_served_as_file(const request_rec *r);
/* The body of a robots.txt this process served (an application's). */
void sitemap_disallow_learn(request_rec *r, const char *body,
                            apr_size_t len);
/* Would an anonymous visitor from elsewhere, asking for orig's URL, be
 * served where last was?  (mod_sitemap_authz.c) */
int sitemap_anonymous_allowed(request_rec *orig, const request_rec *last);
/* The request's site: the vhost's own (&conf->site), or with
 * SitemapSiteFromHost the site of r's Host when it is allowed and has a
 * place in this process, else NULL.  mod_sitemap_hosts.c. */
const sm_site_conf *sitemap_site(request_rec *r,
                                 const sitemap_server_conf *conf);
/* As sitemap_site, taking a place for an allowed Host that has none (NULL
 * when the places are all taken): only for a page about to be recorded. */
const sm_site_conf *sitemap_site_claim(request_rec *r,
                                       const sitemap_server_conf *conf);
/* As sitemap_site, or for an allowed Host without a place a site made in
 * r's pool, not placed: for reading the store (the sitemap, its views). */
const sm_site_conf *sitemap_site_to_read(request_rec *r,
                                         const sitemap_server_conf *conf);
/* As sitemap_site_to_read, but a site without a place only when the store
 * has URLs of it (robots.txt's Sitemap line). */
const sm_site_conf *sitemap_site_listed(request_rec *r,
                                        const sitemap_server_conf *conf);
/* Is base this SitemapSiteFromHost vhost's prefix + an allowed name in
 * normal form + suffix (the base of one of its hosts' sites)?  name
 * (SM_HOST_MAX + 1 bytes) gets the name. */
int sitemap_hosts_owns_base(const sitemap_server_conf *conf,
                            const char *base, char *name);
/* The URLs robots.txt lists for site (conf->robots_urls for the vhost's
 * own). */
apr_array_header_t *sitemap_robots_urls(request_rec *r,
                                        const sitemap_server_conf *conf,
                                        const sm_site_conf *site);
/* Look the request's URL up ahead in the recorder's memory
 * (mod_sitemap_record.c). */
void sitemap_record_prefetch(const request_rec *r,
                             const sitemap_server_conf *conf);
/* Claim r for one of our handlers (named "sitemap..."): not a file. */
int sitemap_claim(request_rec *r, const char *handler);
/* If-None-Match and If-Match with every tag an encoding filter suffixed
 * ("-gzip") given back as its handler made it too (sm_etag.h): for what
 * the module answers and for robots.txt, before their conditions. */
void sitemap_decode_etags(request_rec *r);
/* On a 304: the ETag the client holds, when it holds the encoded one
 * (mod_deflate leaves a 304's ETag alone). */
void sitemap_etag_as_sent(request_rec *r);
/* The methods of every document the module answers: DECLINED for GET and
 * HEAD (answer them); else OK, answered: OPTIONS 200 with Allow and no
 * body, the others 405 with Allow. */
#define SITEMAP_ALLOW "GET, HEAD, OPTIONS"
int sitemap_methods(request_rec *r);
/* A 304 sent through the output filters (mod_cache sees it): OK or
 * AP_FILTER_ERROR. */
int sitemap_not_modified(request_rec *r);

/* ---- renditions (mod_sitemap_renditions.c) ------------------------------- */

typedef struct {
    const sm_doc_site *site;
    const sm_doc *doc;
    const sm_site_info *info;   /* the snapshot doc was chosen from */
    sm_rend_key key;            /* what makes its bytes */
    int gzip;                   /* the gzip rendition is wanted */
} sitemap_doc_req;
typedef struct {
    apr_file_t *f;
    apr_off_t offset, length;
} sitemap_file;
/* The rendition of a document, from the cache or rendered now from st
 * (inside the read snapshot dr->info came from); stats says what a render
 * left out (zero when none was needed).  Any failure: stream it. */
apr_status_t sitemap_rendition(request_rec *r, const sitemap_server_conf *conf,
                               sm_store *st, const sitemap_doc_req *dr,
                               sitemap_file *out, sm_doc_stats *stats);
/* The same for a document of the module other than the sitemap's (the
 * news sitemap, llms.txt): which names it among the site's files (the
 * stem's suffix), key is what makes its bytes (a hash of everything it is
 * written from: a key no longer asked for is never served), write renders
 * it into sink.  Any failure: stream it. */
typedef apr_status_t sitemap_render_fn(void *baton, apr_pool_t *p,
                                       sm_sink *sink, void *sink_baton);
apr_status_t sitemap_rendition_named(request_rec *r,
                                     const sitemap_server_conf *conf,
                                     const char *base, const char *which,
                                     const sm_rend_key *key, int gzip,
                                     sitemap_render_fn *write, void *baton,
                                     sitemap_file *out);
/* Send a rendition as the response's body. */
int sitemap_send_file(request_rec *r, const sitemap_file *file);

/* ---- The serving layer (mod_sitemap_serve.c) ------------------------------
 * Every document the module answers (the sitemap, its text and HTML views,
 * the CSS, the status page, the IndexNow key file) is a sitemap_doc_type
 * served by sitemap_serve: the methods, a read snapshot of the site when
 * the document reads the store, the validators and what they answer (304,
 * HEAD), a store fault as the one 503, the body (fixed bytes, a rendition
 * file, or streamed through a sink), and the snapshot closed once. */
#define SITEMAP_XML_HANDLER "sitemap"
#define SITEMAP_VIEW_HANDLER "sitemap-view"
#define SITEMAP_STATUS_HANDLER "sitemap-status"
#define SITEMAP_KEY_HANDLER "sitemap-indexnow-key"
typedef struct sitemap_reply sitemap_reply;
typedef struct {
    int reads_store;            /* 1: a read snapshot of the site */
    /* The headers, and the validators in the reply (the snapshot open):
     * OK, or the status answered instead. */
    int (*head)(sitemap_reply *rp);
    /* NULL, or the body as a file (also for a HEAD): APR_SUCCESS, or any
     * failure to stream it instead. */
    apr_status_t (*file)(sitemap_reply *rp, sitemap_file *out);
    /* The body, to sink: the sink's failure or the store's. */
    apr_status_t (*body)(sitemap_reply *rp, sm_sink *sink, void *baton);
} sitemap_doc_type;
struct sitemap_reply {
    request_rec *r;
    sitemap_server_conf *conf;
    apr_int64_t name;           /* the page read (sm_name_parse) */
    void *ctx;                  /* the document's own */
    /* The read snapshot (reads_store), and the document chosen in it. */
    const sm_site_conf *own;
    sm_store *st;
    sm_site_info info;
    sm_doc doc;
    sm_doc_site site;
    /* What head says: ETag from tag and tag_suffix when tagged,
     * Last-Modified mtime unless 0, the body gzip-compressed when
     * streamed, or bytes (also for a HEAD, with their length). */
    int tagged;
    apr_uint64_t tag;
    const char *tag_suffix;
    apr_time_t mtime;
    int gzip;
    const char *bytes;
};
/* Answer r as a document of type (name: the page its URL names): the
 * status for the handler to return. */
int sitemap_serve(request_rec *r, const sitemap_doc_type *type,
                  apr_int64_t name, void *ctx);
/* A read snapshot of conf's store, NULL with err set when there is none;
 * sitemap_read_end lets it go (ok 0: after a fault, the reader dropped). */
sm_store *sitemap_read_begin(const sitemap_server_conf *conf, char *err,
                             apr_size_t len);
void sitemap_read_end(const sitemap_server_conf *conf, sm_store *st, int ok);
/* The documents' own parts: is r's URL one of theirs (the one
 * translate_name asks), and their handlers (the one handler hook
 * dispatches on r->handler). */
int sitemap_views_claim(const sitemap_server_conf *conf, const char *uri);
/* After post_config resolved conf's paths: own_url_second (above). */
void sitemap_own_urls_index(sitemap_server_conf *conf);
int sitemap_status_claim(request_rec *r);
int sitemap_indexnow_claim(request_rec *r, const sitemap_server_conf *conf);
int sitemap_xml_serve(request_rec *r);
/* The news sitemap and llms.txt (mod_sitemap_news.c): is uri one of
 * them, their handler, SitemapNewsPublication's setter, and what start-up
 * and -t refuse of their directives (NULL: nothing). */
#define SITEMAP_NEWS_HANDLER "sitemap-news"
int sitemap_news_claim(const sitemap_server_conf *conf, const char *uri);
int sitemap_news_serve(request_rec *r);
const char *sitemap_set_news_publication(cmd_parms *cmd, void *dconf,
                                         const char *name, const char *lang);
const char *sitemap_news_conf_problem(apr_pool_t *p,
                                      const sitemap_server_conf *conf);
int sitemap_views_serve(request_rec *r);
int sitemap_status_serve(request_rec *r);

/* Does nothing in the configuration that applies to the visitor's
 * requests from orig to last look at who asks (so the anonymous re-check
 * is his own answer)?  The configuration is read at start-up
 * (mod_sitemap_authz_conf.c). */
void sitemap_authz_conf_check(apr_pool_t *pconf, server_rec *s);
int sitemap_authz_client_blind(const request_rec *orig,
                               const request_rec *last);

#define SITEMAP_CONF(s) \
    ((sitemap_server_conf *)ap_get_module_config((s)->module_config, \
                                                 &sitemap_module))

#endif
