/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_renditions.c: the sitemap's renditions in httpd (see
 * sm_rendition.h for the files): the directory, made safely by the
 * parent and opened by each child; finding or rendering the rendition a
 * request needs, at most one render per page at a time in a process; and
 * sending it as a file (sendfile or mmap, Content-Length known). */
#include "mod_sitemap.h"

#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "unixd.h"

#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/sm_fs.h"
#include "util/sm_hash.h"
#include "serve/sm_rendition.h"

APLOG_USE_MODULE(sitemap);

#define DEFAULT_CACHE_MAX (APR_INT64_C(1) << 30)
#define RENDER_LOCKS 16
#define TROUBLE_EVERY apr_time_from_sec(60)

/* The loaded module file: a new build (whose writer may make other
 * bytes) never takes an old build's renditions for its own. */
static apr_uint64_t build_tag;
/* Renders in this process, one at a time per stripe of documents. */
static apr_thread_mutex_t *render_locks[RENDER_LOCKS];

static apr_uint64_t module_file_tag(void)
{
    Dl_info dl;
    struct stat sb;
    apr_uint64_t h = SM_HASH_SEED;

    if (dladdr((void *)&sitemap_module, &dl) && dl.dli_fname
        && stat(dl.dli_fname, &sb) == 0) {
        h = sm_hash_u64(h, (apr_uint64_t)sb.st_dev);
        h = sm_hash_u64(h, (apr_uint64_t)sb.st_ino);
        h = sm_hash_u64(h, (apr_uint64_t)sb.st_size);
        h = sm_hash_u64(h, (apr_uint64_t)sb.st_mtim.tv_sec);
        return sm_hash_u64(h, (apr_uint64_t)sb.st_mtim.tv_nsec);
    }
    /* Unknown: renditions of an earlier start are not reused. */
    return sm_hash_u64(h, (apr_uint64_t)apr_time_now());
}

/* Run by the parent, as root: create the directory (and missing parents)
 * and give what it made to the children (User/Group), never following a
 * link another user could have planted (sm_fs_open_dir).  Not being able
 * to is no reason to stop the server: sitemaps are then streamed, as the
 * children log. */
static void prepare_dir(server_rec *s, const char *dir)
{
    char err[512];
    apr_status_t rv = sitemap_prepare_dir(dir, err, sizeof(err));

    if (rv != APR_SUCCESS)
        ap_log_error(APLOG_MARK, APLOG_WARNING, rv, s, "SitemapCache: "
                     "'%s': %s; sitemaps are streamed without renditions",
                     dir, err);
}

/* A site's files in cache_dir: sites (and stores) sharing a directory
 * keep them apart. */
static const char *site_stem(apr_pool_t *p, const sitemap_server_conf *conf,
                             const char *base)
{
    return apr_psprintf(p, "%016" APR_UINT64_T_HEX_FMT,
                        sm_hash_str(sm_hash_str(SM_HASH_SEED, conf->db_path),
                                    base));
}

int sitemap_renditions_post_config(apr_pool_t *pconf, apr_pool_t *ptemp,
                              server_rec *s, sitemap_server_conf *conf,
                              apr_hash_t *prepared)
{
    const char *key;

    if (conf->cache < 0)
        conf->cache = 1;
    if (conf->cache_max < 0)
        conf->cache_max = DEFAULT_CACHE_MAX;
    if (!conf->cache)
        return OK;
    /* A PostgreSQL store has no place here: its renditions go where the
     * default store's would (the stem below keeps them apart). */
    if (!conf->cache_dir)
        conf->cache_dir = apr_pstrcat(pconf, !sm_store_is_file(conf->db_path)
                                             ? sitemap_default_db(pconf, conf)
                                             : conf->db_path,
                                      ".renditions", NULL);
    /* Sites (and stores) sharing a directory keep their files apart. */
    conf->rendition_stem = site_stem(pconf, conf, conf->site.base);
    if (!build_tag)
        build_tag = module_file_tag();
    key = apr_pstrcat(ptemp, "cache:", conf->cache_dir, NULL);
    if (!apr_hash_get(prepared, key, APR_HASH_KEY_STRING)) {
        prepare_dir(s, conf->cache_dir);
        apr_hash_set(prepared, key, APR_HASH_KEY_STRING, "");
    }
    return OK;
}

void sitemap_renditions_child_init(apr_pool_t *pchild, server_rec *s,
                              sitemap_server_conf *conf, apr_hash_t *opened)
{
    sm_rend_dir *d;
    char err[256];
    int i;

    if (conf->cache != 1)
        return;
    if (!render_locks[0])
        for (i = 0; i < RENDER_LOCKS; i++)
            if (apr_thread_mutex_create(&render_locks[i],
                                        APR_THREAD_MUTEX_DEFAULT, pchild)
                != APR_SUCCESS)
                return;     /* conf->proc->renditions stays NULL: streaming */
    /* One directory, one handle (the first vhost's size bound); it is
     * opened for each use, so thousands of vhosts hold no descriptors. */
    d = apr_hash_get(opened, conf->cache_dir, APR_HASH_KEY_STRING);
    if (!d) {
        apr_status_t rv = sm_rend_dir_open(&d, pchild, conf->cache_dir,
                                           conf->cache_max, err,
                                           sizeof(err));
        if (rv != APR_SUCCESS) {
            conf->proc->cache_error = apr_pstrdup(pchild, err);
            ap_log_error(APLOG_MARK, APLOG_DEBUG, rv, s, "SitemapCache %s: "
                         "%s", conf->cache_dir, err);
            return;
        }
        apr_hash_set(opened, conf->cache_dir, APR_HASH_KEY_STRING, d);
    }
    conf->proc->renditions = d;
}

/* Renditions that cannot be used: said at most once a minute per process
 * (a race only says it twice). */
static void trouble(request_rec *r, const sitemap_server_conf *conf,
                    apr_status_t rv, const char *what)
{
    static apr_time_t last;
    apr_time_t now = apr_time_now();

    if (last && now - last < TROUBLE_EVERY)
        return;
    last = now;
    ap_log_rerror(APLOG_MARK, APLOG_WARNING, rv, r, "SitemapCache %s: %s; "
                  "sitemaps are streamed without renditions", conf->cache_dir,
                  what);
}

/* The files of one document of one site: a mass vhost's hosts share the
 * vhost's configuration, so the site's base is in the name. */
static const char *rendition_stem(apr_pool_t *p,
                                  const sitemap_server_conf *conf,
                                  const sitemap_doc_req *dr)
{
    const char *stem = conf->rendition_stem;
    const sm_doc *doc = dr->doc;

    if (conf->host_re)
        stem = site_stem(p, conf, dr->site->base);
    switch (doc->kind) {
    case SM_DOC_URLSET:
        return apr_psprintf(p, "%s-p%" APR_INT64_T_FMT, stem,
                            doc->page->page);
    case SM_DOC_INDEX:
        return apr_pstrcat(p, stem, "-index", NULL);
    default:
        return apr_pstrcat(p, stem, "-root", NULL);
    }
}

typedef struct {
    sm_rend_writer *w;
    apr_status_t rv;        /* the first failure writing the files */
} file_sink;

static apr_status_t to_files(void *baton, const char *data, apr_size_t len)
{
    file_sink *fs = baton;
    apr_status_t rv = sm_rend_write(fs->w, data, len);
    if (rv != APR_SUCCESS && fs->rv == APR_SUCCESS)
        fs->rv = rv;
    return rv;
}

/* What a render writes: a document's bytes to sink, in pool p. */
typedef struct {
    apr_status_t (*write)(void *baton, apr_pool_t *p, sm_sink *sink,
                          void *sink_baton);
    void *baton;
} rend_source;

/* The sitemap's documents (sm_document.c). */
typedef struct {
    sm_store *st;
    const sitemap_doc_req *dr;
    sm_doc_stats *stats;
} doc_source;

static apr_status_t write_doc(void *baton, apr_pool_t *p, sm_sink *sink,
                              void *sink_baton)
{
    doc_source *ds = baton;

    return sm_doc_write(p, ds->st, ds->dr->site, ds->dr->doc, ds->dr->info,
                        sink, sink_baton, ds->stats);
}

/* Render src into both renditions of stem (made for key). */
static apr_status_t render(request_rec *r, const sitemap_server_conf *conf,
                           const rend_source *src, const sm_rend_key *key,
                           const char *stem)
{
    apr_time_t t0 = apr_time_now();
    apr_pool_t *p;
    file_sink fs;
    apr_off_t plain, gzip;
    apr_status_t rv;
    int removed = 0, scanned = 0;

    /* The writer's buffers and zlib's state go as soon as it is done. */
    if ((rv = apr_pool_create(&p, r->pool)) != APR_SUCCESS)
        return rv;
    /* A site made from a Host (anyone can invent one) is evicted first. */
    fs.rv = sm_rend_writer_create(&fs.w, conf->proc->renditions, p, stem,
                                  key, conf->host_re ? SM_REND_HOST_SITE
                                                          : SM_REND_SITE);
    if (fs.rv == APR_SUCCESS) {
        rv = src->write(src->baton, p, to_files, &fs);
        if (rv == APR_SUCCESS)
            fs.rv = rv = sm_rend_commit(fs.w);
    }
    else {
        rv = fs.rv;
    }
    if (fs.rv != APR_SUCCESS)
        trouble(r, conf, fs.rv, "cannot write a rendition");
    if (rv == APR_SUCCESS) {
        sm_rend_sizes(fs.w, &plain, &gzip);
        sm_rend_evict(conf->proc->renditions, p, &removed, &scanned);
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, "rendered %s as %s: %"
                      APR_OFF_T_FMT " bytes, %" APR_OFF_T_FMT " gzip, in %"
                      APR_TIME_T_FMT " us; %d old files evicted, %d "
                      "directory entries read", r->uri, stem, plain, gzip,
                      apr_time_now() - t0, removed, scanned);
    }
    apr_pool_destroy(p);
    return rv;
}

/* The rendition of stem made for key (the build folded in), from the
 * directory or rendered now from src. */
static apr_status_t rendition_of(request_rec *r,
                                 const sitemap_server_conf *conf,
                                 const char *stem, const sm_rend_key *want,
                                 int gzip, const rend_source *src,
                                 sitemap_file *out)
{
    sm_rend_enc enc = gzip ? SM_REND_GZIP : SM_REND_PLAIN;
    sm_rend_key key = *want;
    apr_thread_mutex_t *lock;
    apr_status_t rv;

    if (!conf->proc->renditions) {
        trouble(r, conf, 0, conf->proc->cache_error ? conf->proc->cache_error
                                              : "cannot be opened");
        return APR_ENOENT;
    }
    key.b = sm_hash_u64(key.b, build_tag);
    if (sm_rend_open(conf->proc->renditions, r->pool, stem, enc, &key, &out->f,
                     &out->offset, &out->length) == APR_SUCCESS)
        return APR_SUCCESS;
    /* Not rendered for this snapshot yet: one thread of this process
     * renders it, the others wait and take its files. */
    lock = render_locks[sm_hash_str(SM_HASH_SEED, stem) % RENDER_LOCKS];
    apr_thread_mutex_lock(lock);
    rv = sm_rend_open(conf->proc->renditions, r->pool, stem, enc, &key,
                      &out->f, &out->offset, &out->length);
    if (rv != APR_SUCCESS) {
        rv = render(r, conf, src, &key, stem);
        if (rv == APR_SUCCESS)
            rv = sm_rend_open(conf->proc->renditions, r->pool, stem, enc, &key,
                              &out->f, &out->offset, &out->length);
    }
    apr_thread_mutex_unlock(lock);
    return rv;
}

apr_status_t sitemap_rendition(request_rec *r, const sitemap_server_conf *conf,
                               sm_store *st, const sitemap_doc_req *dr,
                               sitemap_file *out, sm_doc_stats *stats)
{
    doc_source ds;
    rend_source src;

    memset(stats, 0, sizeof(*stats));
    ds.st = st;
    ds.dr = dr;
    ds.stats = stats;
    src.write = write_doc;
    src.baton = &ds;
    return rendition_of(r, conf, rendition_stem(r->pool, conf, dr), &dr->key,
                        dr->gzip, &src, out);
}

apr_status_t sitemap_rendition_named(request_rec *r,
                                     const sitemap_server_conf *conf,
                                     const char *base, const char *which,
                                     const sm_rend_key *key, int gzip,
                                     sitemap_render_fn *write, void *baton,
                                     sitemap_file *out)
{
    const char *stem = conf->host_re ? site_stem(r->pool, conf, base)
                                     : conf->rendition_stem;
    rend_source src;

    src.write = write;
    src.baton = baton;
    return rendition_of(r, conf, apr_pstrcat(r->pool, stem, "-", which,
                                             NULL), key, gzip, &src, out);
}

int sitemap_send_file(request_rec *r, const sitemap_file *file)
{
    conn_rec *c = r->connection;
    apr_bucket_brigade *bb = apr_brigade_create(r->pool, c->bucket_alloc);
    apr_status_t rv;

    ap_set_content_length(r, file->length);
    apr_brigade_insert_file(bb, file->f, file->offset, file->length,
                            r->pool);
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(c->bucket_alloc));
    rv = ap_pass_brigade(r->output_filters, bb);
    return rv == APR_SUCCESS || c->aborted ? OK : AP_FILTER_ERROR;
}
