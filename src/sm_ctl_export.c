/* sm_ctl_export.c: a site's sitemap files, byte for byte what the module
 * serves (mod_sitemap_handler.c): the same store reads, the same choice of
 * document, the same XML writer and annotations. */
#include "sm_ctl.h"
#include "sm_xml.h"

#include <apr_file_io.h>
#include <apr_strings.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    sm_xml_writer *w;
    const char *base;
    const sm_settings *set;
    apr_int64_t urls;
} doc_ctx;

/* As the handler's one_url. */
static apr_status_t one_url(void *baton, const char *url, apr_time_t lastmod)
{
    doc_ctx *ctx = baton;
    ctx->urls++;
    return sm_xml_url(ctx->w, ctx->base, url, lastmod,
                      sm_annotation_find(ctx->set->changefreq, url),
                      sm_annotation_find(ctx->set->priority, url));
}

typedef apr_status_t sink_fn(void *, const char *, apr_size_t);

/* Wraps the caller's sink to tell its failures from the store's. */
typedef struct {
    sink_fn *sink;
    void *baton;
    apr_status_t failed;
} sink_guard;

static apr_status_t guarded(void *baton, const char *data, apr_size_t len)
{
    sink_guard *g = baton;
    apr_status_t rv = g->sink(g->baton, data, len);
    if (rv != APR_SUCCESS && g->failed == APR_SUCCESS)
        g->failed = rv;
    return rv;
}

/* Write one document of a snapshot already read into info: page > 0 a
 * page, 0 the SitemapPath document. */
static sm_export_status write_doc(apr_pool_t *p, sm_store *st,
                                  const char *base, const sm_settings *set,
                                  const sm_site_info *info, apr_int64_t page,
                                  sink_fn *sink, void *baton,
                                  apr_int64_t *urls, char *err,
                                  apr_size_t errlen)
{
    sink_guard g = { sink, baton, APR_SUCCESS };
    doc_ctx ctx;
    apr_status_t rv;
    int i;

    ctx.w = sm_xml_writer_create(p, guarded, &g);
    ctx.base = base;
    ctx.set = set;
    ctx.urls = 0;
    if (page == 0 && info->pages->nelts == 1)
        page = APR_ARRAY_IDX(info->pages, 0, sm_page_info).page;
    if (page > 0) {
        sm_xml_urlset_begin(ctx.w);
        rv = sm_store_page_urls(st, base, page, one_url, &ctx);
        if (rv == APR_SUCCESS)
            rv = sm_xml_urlset_end(ctx.w);
    }
    else if (info->pages->nelts == 0) {
        sm_xml_urlset_begin(ctx.w);
        sm_xml_url(ctx.w, base, "/", 0, NULL, NULL);
        rv = sm_xml_urlset_end(ctx.w);
    }
    else {
        sm_xml_index_begin(ctx.w);
        for (i = 0; i < info->pages->nelts; i++) {
            const sm_page_info *pi = &APR_ARRAY_IDX(info->pages, i,
                                                    sm_page_info);
            sm_xml_index_entry(ctx.w, base,
                               sm_page_path(p, set->path, pi->page),
                               pi->lastmod);
        }
        rv = sm_xml_index_end(ctx.w);
    }
    if (urls)
        *urls = ctx.urls;
    if (g.failed != APR_SUCCESS)
        return SM_EXPORT_WRITE;     /* the sink said why */
    if (rv != APR_SUCCESS) {
        if (err)
            apr_snprintf(err, errlen, "%s", sm_store_error(st));
        return SM_EXPORT_STORE;
    }
    return SM_EXPORT_OK;
}

static sm_export_status snapshot(apr_pool_t *p, sm_store *st,
                                 const char *base, sm_site_info *info,
                                 char *err, apr_size_t errlen)
{
    if (sm_store_read_begin(st) != APR_SUCCESS
        || sm_store_site_info(st, p, base, 0, info) != APR_SUCCESS) {
        if (err)
            apr_snprintf(err, errlen, "%s", sm_store_error(st));
        sm_store_read_end(st);
        return SM_EXPORT_STORE;
    }
    if (!info->known) {
        sm_store_read_end(st);
        return SM_EXPORT_UNKNOWN_SITE;
    }
    return SM_EXPORT_OK;
}

sm_export_status sm_ctl_document(apr_pool_t *p, sm_store *st,
                                 const char *base, const sm_settings *set,
                                 apr_int64_t which, sink_fn *sink,
                                 void *baton, char *err, apr_size_t errlen)
{
    sm_site_info info;
    sm_export_status es;
    int i, found = which == 0;

    if ((es = snapshot(p, st, base, &info, err, errlen)) != SM_EXPORT_OK)
        return es;
    for (i = 0; i < info.pages->nelts && !found; i++)
        found = APR_ARRAY_IDX(info.pages, i, sm_page_info).page == which;
    es = found ? write_doc(p, st, base, set, &info, which, sink, baton, NULL,
                           err, errlen)
               : SM_EXPORT_NO_PAGE;
    sm_store_read_end(st);
    return es;
}

/* ---- files ------------------------------------------------------------------ */

typedef struct {
    apr_file_t *f;
    const char *path;
    char *err;
    apr_size_t errlen;
} file_sink;

static apr_status_t to_file(void *baton, const char *data, apr_size_t len)
{
    file_sink *fs = baton;
    apr_status_t rv = apr_file_write_full(fs->f, data, len, NULL);
    if (rv != APR_SUCCESS && fs->err) {
        char msg[120];
        apr_snprintf(fs->err, fs->errlen, "cannot write %s: %s", fs->path,
                     apr_strerror(rv, msg, sizeof(msg)));
    }
    return rv;
}

static sm_export_status write_file(apr_pool_t *p, sm_store *st,
                                   const char *base, const sm_settings *set,
                                   const sm_site_info *info, apr_int64_t page,
                                   const char *dir, const char *urlpath,
                                   sm_export_result *res, char *err,
                                   apr_size_t errlen)
{
    const char *path = apr_pstrcat(p, dir, urlpath, NULL);
    const char *tmp = apr_psprintf(p, "%s.tmp%ld", path, (long)getpid());
    const char *slash = strrchr(path, '/');
    file_sink fs = { NULL, tmp, err, errlen };
    apr_int64_t urls = 0;
    sm_export_status es;
    apr_status_t rv;
    char msg[120];

    if (slash && slash != path) {
        const char *parent = apr_pstrmemdup(p, path,
                                            (apr_size_t)(slash - path));
        rv = apr_dir_make_recursive(parent, APR_FPROT_OS_DEFAULT, p);
        if (rv != APR_SUCCESS) {
            if (err)
                apr_snprintf(err, errlen, "cannot create the directory "
                             "%s: %s", parent,
                             apr_strerror(rv, msg, sizeof(msg)));
            return SM_EXPORT_WRITE;
        }
    }
    rv = apr_file_open(&fs.f, tmp, APR_FOPEN_WRITE | APR_FOPEN_CREATE
                       | APR_FOPEN_TRUNCATE | APR_FOPEN_BUFFERED,
                       APR_FPROT_OS_DEFAULT, p);
    if (rv != APR_SUCCESS) {
        if (err)
            apr_snprintf(err, errlen, "cannot create %s: %s", tmp,
                         apr_strerror(rv, msg, sizeof(msg)));
        return SM_EXPORT_WRITE;
    }
    es = write_doc(p, st, base, set, info, page, to_file, &fs, &urls, err,
                   errlen);
    if (es == SM_EXPORT_OK && (rv = apr_file_close(fs.f)) != APR_SUCCESS) {
        fs.f = NULL;
        if (err)
            apr_snprintf(err, errlen, "cannot write %s: %s", tmp,
                         apr_strerror(rv, msg, sizeof(msg)));
        es = SM_EXPORT_WRITE;
    }
    else if (es != SM_EXPORT_OK) {
        apr_file_close(fs.f);
    }
    if (es == SM_EXPORT_OK
        && (rv = apr_file_rename(tmp, path, p)) != APR_SUCCESS) {
        if (err)
            apr_snprintf(err, errlen, "cannot rename %s to %s: %s", tmp,
                         path, apr_strerror(rv, msg, sizeof(msg)));
        es = SM_EXPORT_WRITE;
    }
    if (es != SM_EXPORT_OK) {
        apr_file_remove(tmp, p);
        return es;
    }
    res->files++;
    if (page > 0) {
        res->pages++;
        res->urls += urls;
    }
    APR_ARRAY_PUSH(res->paths, const char *) = path;
    return SM_EXPORT_OK;
}

/* Remove the page files in the SitemapPath's directory that are not pages
 * of this snapshot: what the module would answer 404 for. */
static sm_export_status remove_stale(apr_pool_t *p, const char *dir,
                                     const sm_settings *set,
                                     const sm_site_info *info,
                                     sm_export_result *res, char *err,
                                     apr_size_t errlen)
{
    const char *slash = strrchr(set->path, '/');
    const char *urldir = apr_pstrmemdup(p, set->path,
                                        (apr_size_t)(slash - set->path) + 1);
    const char *fsdir = apr_pstrcat(p, dir, urldir, NULL);
    apr_finfo_t fi;
    apr_dir_t *d;
    char msg[120];
    apr_status_t rv;
    int i;

    if (apr_dir_open(&d, fsdir, p) != APR_SUCCESS)
        return SM_EXPORT_OK;
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d)
           == APR_SUCCESS) {
        apr_int64_t n;
        int current = 0;

        if (fi.filetype != APR_REG)
            continue;
        n = sm_name_parse(set->path, apr_pstrcat(p, urldir, fi.name, NULL));
        if (n <= 0)
            continue;
        for (i = 0; i < info->pages->nelts && !current; i++)
            current = APR_ARRAY_IDX(info->pages, i, sm_page_info).page == n;
        if (current)
            continue;
        rv = apr_file_remove(apr_pstrcat(p, fsdir, fi.name, NULL), p);
        if (rv != APR_SUCCESS) {
            if (err)
                apr_snprintf(err, errlen, "cannot remove the stale page %s%s:"
                             " %s", fsdir, fi.name,
                             apr_strerror(rv, msg, sizeof(msg)));
            apr_dir_close(d);
            return SM_EXPORT_WRITE;
        }
        APR_ARRAY_PUSH(res->removed, const char *) =
            apr_pstrcat(p, fsdir, fi.name, NULL);
    }
    apr_dir_close(d);
    return SM_EXPORT_OK;
}

sm_export_status sm_ctl_export(apr_pool_t *p, sm_store *st, const char *base,
                               const sm_settings *set, const char *dir,
                               sm_export_result *res, char *err,
                               apr_size_t errlen)
{
    sm_site_info info;
    sm_export_status es;
    apr_size_t dlen = strlen(dir);
    int i;

    memset(res, 0, sizeof(*res));
    res->paths = apr_array_make(p, 4, sizeof(char *));
    res->removed = apr_array_make(p, 1, sizeof(char *));
    while (dlen > 1 && dir[dlen - 1] == '/')
        dlen--;
    dir = apr_pstrmemdup(p, dir, dlen);
    if (strcmp(dir, "/") == 0)
        dir = "";
    if ((es = snapshot(p, st, base, &info, err, errlen)) != SM_EXPORT_OK)
        return es;
    res->index_kind = info.pages->nelts == 1 ? "urlset"
                    : info.pages->nelts == 0 ? "root" : "index";
    es = write_file(p, st, base, set, &info, 0, dir, set->path, res, err,
                    errlen);
    for (i = 0; es == SM_EXPORT_OK && i < info.pages->nelts; i++) {
        apr_int64_t n = APR_ARRAY_IDX(info.pages, i, sm_page_info).page;
        es = write_file(p, st, base, set, &info, n, dir,
                        sm_page_path(p, set->path, n), res, err, errlen);
    }
    sm_store_read_end(st);
    if (es == SM_EXPORT_OK)
        es = remove_stale(p, dir, set, &info, res, err, errlen);
    return es;
}
