/* SPDX-License-Identifier: Apache-2.0 */
/* sm_ctl_export.c: a site's sitemap files, byte for byte what the module
 * serves (mod_sitemap_handler.c): the same store reads, the same choice of
 * document, the same XML writer and annotations. */
#include "serve/sm_css.h"
#include "ctl/sm_ctl.h"
#include "ctl/sm_ctl_export_remote.h"
#include "serve/sm_document.h"

#include <apr_file_io.h>
#include <apr_general.h>
#include <apr_strings.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* sitemapctl export --images: the <url>s carry their stored images, as
 * the module's do with SitemapImages On. */
static int export_images;

void sm_ctl_export_images(int on)
{
    export_images = on;
}

/* Write one document of a snapshot already read into info: page > 0 a
 * page, 0 the SitemapPath document; chosen and written by the module's
 * own code (sm_document.c). */
static sm_export_status write_doc(apr_pool_t *p, sm_store *st,
                                  const char *base, const sm_settings *set,
                                  const sm_site_info *info, apr_int64_t page,
                                  sink_fn *sink, void *baton,
                                  sm_export_result *res, char *err,
                                  apr_size_t errlen)
{
    sink_guard g = { sink, baton, APR_SUCCESS };
    sm_doc_site site = { base, set->path, set->changefreq, set->priority,
                          set->stylesheet, 0, export_images };
    sm_doc_stats stats;
    sm_doc doc;
    apr_status_t rv;

    sm_doc_choose(info, page, &doc);
    if (doc.kind == SM_DOC_NONE)
        return SM_EXPORT_NO_PAGE;
    rv = sm_doc_write(p, st, &site, &doc, info, guarded, &g, &stats);
    if (res && page == 0) {
        res->index_entries_left_out = doc.overflow;
    }
    else if (res) {
        /* Counted in the page files (the SitemapPath document of a one-page
         * site is that page again). */
        res->urls += stats.urls;
        res->rows_skipped += stats.skipped;
        if (stats.skipped && !res->first_skipped)
            res->first_skipped = apr_pstrdup(p, stats.first_skipped);
        res->alternates_skipped += stats.alternates_skipped;
        res->urls_dropped += stats.urls_dropped;
        res->alternates_dropped += stats.alternates_dropped;
    }
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

    if ((es = snapshot(p, st, base, &info, err, errlen)) != SM_EXPORT_OK)
        return es;
    es = write_doc(p, st, base, set, &info, which, sink, baton, NULL, err,
                   errlen);
    sm_store_read_end(st);
    return es;
}

/* ---- files ------------------------------------------------------------------
 *
 * sitemapctl may run as root and write into a directory another user can
 * write (a document root).  Nothing is opened by a path name that user could
 * redirect: the SitemapPath's directory is opened once, each directory
 * under the export directory with O_NOFOLLOW, and every file is made
 * relative to that opened directory (openat, renameat, unlinkat) under an
 * unpredictable temporary name created with O_EXCL|O_NOFOLLOW, then renamed
 * over the final name (a rename replaces a planted link, it never writes
 * through one).  APR has no *at() calls, hence POSIX here. */

static sm_export_status write_error(char *err, apr_size_t errlen,
                                    const char *what, const char *path,
                                    apr_status_t rv)
{
    char msg[120];
    if (err)
        apr_snprintf(err, errlen, "cannot %s %s: %s", what, path,
                     apr_strerror(rv, msg, sizeof(msg)));
    return SM_EXPORT_WRITE;
}

/* The same for a failed system call (errno). */
sm_export_status sm_export_sys_error(char *err, apr_size_t errlen,
                                     const char *what, const char *path)
{
    return write_error(err, errlen, what, path, APR_FROM_OS_ERROR(errno));
}
#define sys_error sm_export_sys_error

/* The socket to the root parent that writes the files (a child that
 * became the store's owner), or -1: this process writes them. */
static int remote_fd = -1;

void sm_ctl_export_remote(int fd)
{
    remote_fd = fd;
}

typedef struct {
    int fd;
    int remote;             /* fd is the socket to the parent */
    const char *path;       /* for messages */
    char *err;
    apr_size_t errlen;
    char buf[65536];
    apr_size_t used;
} file_sink;

static apr_status_t flush_file(file_sink *fs)
{
    apr_size_t off = 0;

    if (fs->remote && fs->used) {
        if (sm_xr_send(fs->fd, XR_CHUNK, fs->buf, fs->used) != 0) {
            apr_status_t rv = APR_FROM_OS_ERROR(errno);
            write_error(fs->err, fs->errlen, "write", fs->path, rv);
            return rv;
        }
        fs->used = 0;
        return APR_SUCCESS;
    }
    while (off < fs->used) {
        ssize_t n = write(fs->fd, fs->buf + off, fs->used - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            apr_status_t rv = n < 0 ? APR_FROM_OS_ERROR(errno) : APR_EGENERAL;
            write_error(fs->err, fs->errlen, "write", fs->path, rv);
            return rv;
        }
        off += (apr_size_t)n;
    }
    fs->used = 0;
    return APR_SUCCESS;
}

static apr_status_t to_file(void *baton, const char *data, apr_size_t len)
{
    file_sink *fs = baton;
    apr_status_t rv;

    while (len) {
        apr_size_t take = sizeof(fs->buf) - fs->used;
        if (take > len)
            take = len;
        memcpy(fs->buf + fs->used, data, take);
        fs->used += take;
        data += take;
        len -= take;
        if (fs->used == sizeof(fs->buf)
            && (rv = flush_file(fs)) != APR_SUCCESS)
            return rv;
    }
    return APR_SUCCESS;
}

/* Create name in the directory dfd under a fresh random name, exclusively
 * and without following links.  The file's name is put in *tmp. */
int sm_export_create_temporary(apr_pool_t *p, int dfd, const char *name,
                               const char **tmp)
{
    int tries;

    for (tries = 0; tries < 16; tries++) {
        unsigned char r[8];
        int fd;

        if (apr_generate_random_bytes(r, sizeof(r)) != APR_SUCCESS) {
            errno = EIO;
            return -1;
        }
        *tmp = apr_psprintf(p, ".%s.%02x%02x%02x%02x%02x%02x%02x%02x.tmp",
                            name, r[0], r[1], r[2], r[3], r[4], r[5], r[6],
                            r[7]);
        fd = openat(dfd, *tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW
                    | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

/* What a file is filled with (see replace_file). */
typedef sm_export_status fill_fn(void *ctx, file_sink *fs);

/* A reply's error text into err. */
static sm_export_status remote_error(sm_export_status es, const char *reply,
                                     char *err, apr_size_t errlen)
{
    if (es != SM_EXPORT_OK && err)
        apr_cpystrn(err, reply, errlen);
    return es;
}

/* replace_file through the parent. */
static sm_export_status replace_remote(apr_pool_t *p, const char *path,
                                       const char *name, fill_fn *fill,
                                       void *ctx, file_sink *fs,
                                       sm_export_result *res, char *err,
                                       apr_size_t errlen)
{
    sm_export_status es;
    apr_size_t rlen;
    char *reply;

    es = sm_xr_call(p, remote_fd, XR_FILE, name, strlen(name), &reply, &rlen);
    if (es != SM_EXPORT_OK)
        return remote_error(es, reply, err, errlen);
    fs->fd = remote_fd;
    fs->remote = 1;
    fs->path = path;
    fs->err = err;
    fs->errlen = errlen;
    fs->used = 0;
    es = fill(ctx, fs);
    if (es == SM_EXPORT_OK && flush_file(fs) != APR_SUCCESS)
        es = SM_EXPORT_WRITE;
    if (es != SM_EXPORT_OK) {
        sm_xr_send(remote_fd, XR_ABORT, "", 0);
        return es;
    }
    es = sm_xr_call(p, remote_fd, XR_END, "", 0, &reply, &rlen);
    if (es != SM_EXPORT_OK)
        return remote_error(es, reply, err, errlen);
    res->files++;
    APR_ARRAY_PUSH(res->paths, const char *) = path;
    return SM_EXPORT_OK;
}

/* Replace the file name in the directory dfd (dirpath for messages) by
 * what fill writes: into a new temporary file, renamed over the name once
 * complete. */
static sm_export_status replace_file(apr_pool_t *p, int dfd,
                                     const char *dirpath, const char *name,
                                     fill_fn *fill, void *ctx,
                                     sm_export_result *res, char *err,
                                     apr_size_t errlen)
{
    const char *path = apr_pstrcat(p, dirpath, name, NULL), *tmp;
    file_sink *fs = apr_palloc(p, sizeof(*fs));
    sm_export_status es;

    if (remote_fd >= 0)
        return replace_remote(p, path, name, fill, ctx, fs, res, err, errlen);
    if ((fs->fd = sm_export_create_temporary(p, dfd, name, &tmp)) < 0)
        return sys_error(err, errlen, "create a temporary file for", path);
    fs->remote = 0;
    fs->path = path;
    fs->err = err;
    fs->errlen = errlen;
    fs->used = 0;
    es = fill(ctx, fs);
    if (es == SM_EXPORT_OK && flush_file(fs) != APR_SUCCESS)
        es = SM_EXPORT_WRITE;
    if (close(fs->fd) != 0 && es == SM_EXPORT_OK)
        es = sys_error(err, errlen, "write", path);
    if (es == SM_EXPORT_OK && renameat(dfd, tmp, dfd, name) != 0)
        es = sys_error(err, errlen, "replace", path);
    if (es != SM_EXPORT_OK) {
        unlinkat(dfd, tmp, 0);
        return es;
    }
    res->files++;
    APR_ARRAY_PUSH(res->paths, const char *) = path;
    return SM_EXPORT_OK;
}

typedef struct {
    apr_pool_t *p;
    sm_store *st;
    const char *base;
    const sm_settings *set;
    const sm_site_info *info;
    apr_int64_t page;
    sm_export_result *res;
    char *err;
    apr_size_t errlen;
} doc_fill;

static sm_export_status fill_doc(void *ctx, file_sink *fs)
{
    doc_fill *d = ctx;
    return write_doc(d->p, d->st, d->base, d->set, d->info, d->page, to_file,
                     fs, d->res, d->err, d->errlen);
}

/* Write one document as the file name in the directory dfd. */
static sm_export_status write_file(apr_pool_t *p, sm_store *st,
                                   const char *base, const sm_settings *set,
                                   const sm_site_info *info, apr_int64_t page,
                                   int dfd, const char *dirpath,
                                   const char *name, sm_export_result *res,
                                   char *err, apr_size_t errlen)
{
    doc_fill d = { p, st, base, set, info, page, res, err, errlen };
    sm_export_status es = replace_file(p, dfd, dirpath, name, fill_doc, &d,
                                       res, err, errlen);

    if (es == SM_EXPORT_OK && page > 0)
        res->pages++;
    return es;
}

static sm_export_status fill_css(void *ctx, file_sink *fs)
{
    (void)ctx;
    return to_file(fs, sm_css, strlen(sm_css)) == APR_SUCCESS
           ? SM_EXPORT_OK : SM_EXPORT_WRITE;
}

/* What fill_named writes into a file. */
typedef struct {
    sm_export_writer *write;
    void *baton;
    sm_store *st;
    char *err;
    apr_size_t errlen;
} named_fill;

static sm_export_status fill_named(void *ctx, file_sink *fs)
{
    named_fill *n = ctx;
    sink_guard g = { to_file, fs, APR_SUCCESS };
    apr_status_t rv = n->write(n->baton, guarded, &g);

    if (g.failed != APR_SUCCESS)
        return SM_EXPORT_WRITE;     /* the sink said why */
    if (rv != APR_SUCCESS) {
        if (n->err)
            apr_snprintf(n->err, n->errlen, "%s", sm_store_error(n->st));
        return SM_EXPORT_STORE;
    }
    return SM_EXPORT_OK;
}

/* dir as sm_ctl_export takes it: no trailing '/', "" for the root. */
static const char *clean_dir(apr_pool_t *p, const char *dir)
{
    apr_size_t dlen = strlen(dir);

    while (dlen > 1 && dir[dlen - 1] == '/')
        dlen--;
    dir = apr_pstrmemdup(p, dir, dlen);
    return strcmp(dir, "/") == 0 ? "" : dir;
}

sm_export_status sm_ctl_export_named(apr_pool_t *p, sm_store *st,
                                     const char *dir, const char *urlpath,
                                     sm_export_writer *write, void *baton,
                                     sm_export_result *res, char *err,
                                     apr_size_t errlen)
{
    const char *slash = strrchr(urlpath, '/');
    const char *urldir = apr_pstrmemdup(p, urlpath,
                                        (apr_size_t)(slash - urlpath) + 1);
    named_fill n = { write, baton, st, err, errlen };
    sm_export_status es;
    int dfd = -1;

    dir = clean_dir(p, dir);
    if (remote_fd >= 0) {
        char *reply;
        apr_size_t rlen;

        es = sm_xr_call(p, remote_fd, XR_OPEN, urldir, strlen(urldir),
                        &reply, &rlen);
        if (es != SM_EXPORT_OK)
            return remote_error(es, reply, err, errlen);
    }
    else if ((dfd = sm_export_open_dir(p, dir, urldir, err, errlen)) < 0)
        return SM_EXPORT_WRITE;
    es = replace_file(p, dfd, apr_pstrcat(p, dir, urldir, NULL), slash + 1,
                      fill_named, &n, res, err, errlen);
    if (dfd >= 0)
        close(dfd);
    return es;
}

/* Open the directory of the SitemapPath under dir, creating what is
 * missing: dir itself as named (the administrator's choice), every
 * directory below it without following a link.  Returns the descriptor,
 * or -1 with err set. */
int sm_export_open_dir(apr_pool_t *p, const char *dir, const char *urldir,
                       char *err, apr_size_t errlen)
{
    char *rest = apr_pstrdup(p, urldir), *seg, *state;
    const char *done = *dir ? dir : "/";
    apr_status_t rv;
    int dfd;

    if ((rv = apr_dir_make_recursive(done, APR_FPROT_OS_DEFAULT, p))
        != APR_SUCCESS) {
        write_error(err, errlen, "create the directory", done, rv);
        return -1;
    }
    if ((dfd = open(done, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        sys_error(err, errlen, "open the directory", done);
        return -1;
    }
    for (seg = apr_strtok(rest, "/", &state); seg;
         seg = apr_strtok(NULL, "/", &state)) {
        int next;

        done = apr_pstrcat(p, done, strcmp(done, "/") ? "/" : "", seg, NULL);
        if (mkdirat(dfd, seg, 0777) != 0 && errno != EEXIST) {
            sys_error(err, errlen, "create the directory", done);
            close(dfd);
            return -1;
        }
        next = openat(dfd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW
                      | O_CLOEXEC);
        if (next < 0) {
            sys_error(err, errlen, "open the directory (a link is never "
                      "followed)", done);
            close(dfd);
            return -1;
        }
        close(dfd);
        dfd = next;
    }
    return dfd;
}

/* Remove the page files in the SitemapPath's directory (dfd) that are not
 * pages of this snapshot: what the module would answer 404 for. */
sm_export_status sm_export_remove_stale(apr_pool_t *p, int dfd,
                                        const char *dirpath,
                                        const char *urldir,
                                        const sm_settings *set,
                                        const sm_site_info *info,
                                        sm_export_result *res, char *err,
                                        apr_size_t errlen)
{
    sm_export_status es = SM_EXPORT_OK;
    struct dirent *de;
    DIR *d;
    int fd, i;

    if ((fd = dup(dfd)) < 0 || !(d = fdopendir(fd))) {
        if (fd >= 0)
            close(fd);
        return sys_error(err, errlen, "read the directory", dirpath);
    }
    while ((de = readdir(d)) != NULL) {
        struct stat sb;
        apr_int64_t n;
        int current = 0;

        n = sm_name_parse(set->path, apr_pstrcat(p, urldir, de->d_name,
                                                 NULL));
        /* the SitemapPath document goes too when the site has no URL */
        if (n < 0 || (n == SM_NAME_INDEX && info->pages->nelts))
            continue;
        for (i = 0; i < info->pages->nelts && !current; i++)
            current = APR_ARRAY_IDX(info->pages, i, sm_page_info).page == n;
        if (current || fstatat(dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW)
            || !S_ISREG(sb.st_mode))
            continue;
        if (unlinkat(dfd, de->d_name, 0) != 0) {
            es = sys_error(err, errlen, "remove the stale page",
                           apr_pstrcat(p, dirpath, de->d_name, NULL));
            break;
        }
        APR_ARRAY_PUSH(res->removed, const char *) =
            apr_pstrcat(p, dirpath, de->d_name, NULL);
    }
    closedir(d);
    return es;
}

/* s and its NUL at the end of the bytes a. */
static void put_str(apr_array_header_t *a, const char *s)
{
    do
        APR_ARRAY_PUSH(a, char) = *s;
    while (*s++);
}

/* remove_stale through the parent: it says what it removed. */
static sm_export_status stale_remote(apr_pool_t *p, const sm_settings *set,
                                     const char *urldir,
                                     const sm_site_info *info,
                                     sm_export_result *res, char *err,
                                     apr_size_t errlen)
{
    apr_array_header_t *req = apr_array_make(p, 256, 1);
    sm_export_status es;
    char *reply, *at;
    apr_size_t rlen;
    int i;

    put_str(req, set->path);
    put_str(req, urldir);
    for (i = 0; i < info->pages->nelts; i++)
        put_str(req, apr_psprintf(p, "%" APR_INT64_T_FMT, (apr_int64_t)
                                  APR_ARRAY_IDX(info->pages, i,
                                                sm_page_info).page));
    es = sm_xr_call(p, remote_fd, XR_STALE, req->elts, (apr_size_t)req->nelts,
                    &reply, &rlen);
    if (es != SM_EXPORT_OK)
        return remote_error(es, reply, err, errlen);
    for (at = reply; at < reply + rlen; at += strlen(at) + 1)
        if (*at)
            APR_ARRAY_PUSH(res->removed, const char *) = at;
    return SM_EXPORT_OK;
}

sm_export_status sm_ctl_export(apr_pool_t *p, sm_store *st, const char *base,
                               const sm_settings *set, const char *dir,
                               sm_export_result *res, char *err,
                               apr_size_t errlen)
{
    sm_site_info info;
    sm_export_status es;
    const char *slash = strrchr(set->path, '/');
    const char *urldir = apr_pstrmemdup(p, set->path,
                                        (apr_size_t)(slash - set->path) + 1);
    const char *dirpath;
    int i, dfd;

    memset(res, 0, sizeof(*res));
    res->paths = apr_array_make(p, 4, sizeof(char *));
    res->removed = apr_array_make(p, 1, sizeof(char *));
    dir = clean_dir(p, dir);
    dirpath = apr_pstrcat(p, dir, urldir, NULL);
    if ((es = snapshot(p, st, base, &info, err, errlen)) != SM_EXPORT_OK)
        return es;
    if (remote_fd >= 0) {
        char *reply;
        apr_size_t rlen;

        dfd = -1;
        es = sm_xr_call(p, remote_fd, XR_OPEN, urldir, strlen(urldir),
                        &reply, &rlen);
        if (es != SM_EXPORT_OK) {
            sm_store_read_end(st);
            return remote_error(es, reply, err, errlen);
        }
    }
    else if ((dfd = sm_export_open_dir(p, dir, urldir, err, errlen)) < 0) {
        sm_store_read_end(st);
        return SM_EXPORT_WRITE;
    }
    res->index_kind = info.pages->nelts == 1 ? "urlset"
                    : info.pages->nelts == 0 ? "empty" : "index";
    /* No URL yet: no document, as the module answers 404 (a placeholder
     * would list a URL nobody has seen answer 200). */
    es = info.pages->nelts == 0 ? SM_EXPORT_OK
         : write_file(p, st, base, set, &info, 0, dfd, dirpath, slash + 1,
                      res, err, errlen);
    for (i = 0; es == SM_EXPORT_OK && i < info.pages->nelts; i++) {
        apr_int64_t n = APR_ARRAY_IDX(info.pages, i, sm_page_info).page;
        es = write_file(p, st, base, set, &info, n, dfd, dirpath,
                        strrchr(sm_page_path(p, set->path, n), '/') + 1,
                        res, err, errlen);
    }
    sm_store_read_end(st);
    /* The documents name the module's own stylesheet (SitemapStylesheet
     * On): it goes beside them, where the module serves it. */
    if (es == SM_EXPORT_OK && set->stylesheet
        && strcmp(set->stylesheet, sm_stylesheet_default(p, set->path)) == 0)
        es = replace_file(p, dfd, dirpath, SM_STYLESHEET_NAME, fill_css, NULL,
                          res, err, errlen);
    if (es == SM_EXPORT_OK && remote_fd >= 0)
        es = stale_remote(p, set, urldir, &info, res, err, errlen);
    else if (es == SM_EXPORT_OK)
        es = sm_export_remove_stale(p, dfd, dirpath, urldir, set, &info, res,
                                    err, errlen);
    if (dfd >= 0)
        close(dfd);
    return es;
}
