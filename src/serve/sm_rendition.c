/* SPDX-License-Identifier: Apache-2.0 */
/* sm_rendition.c: see sm_rendition.h.  APR has no O_NOFOLLOW nor *at()
 * calls, and safety against planted symlinks needs both, so the files are
 * handled with POSIX calls on a directory descriptor; APR only wraps the
 * opened file for the caller (file buckets, sendfile). */
#include "serve/sm_rendition.h"
#include "util/sm_gzip.h"
#include "util/sm_hash.h"
#include "serve/sm_rend_index.h"

#include <apr_atomic.h>
#include <apr_portable.h>
#include <apr_strings.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Bump when the header layout changes. */
static const char magic[8] = "SMREND1";
#define BUF_SIZE (64 * 1024)
#define TMP_PREFIX ".tmp-"
#define ATIME_STEP 60

/* The directory is opened for each use, not held open: a server with
 * thousands of vhosts, one directory each, would otherwise hold a
 * descriptor per vhost in every process. */
struct sm_rend_dir {
    const char *path;
    apr_off_t max_bytes;
    sm_rend_index *ix;      /* this process's, shared by its threads */
};

/* The directory, opened now (never through a link); -1 with errno. */
static int dir_fd(const sm_rend_dir *d)
{
    return open(d->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* What the header holds besides the key: the header layout and the zlib
 * that made the gzip bytes (another zlib may compress differently). */
static apr_uint64_t format_tag(void)
{
    return sm_hash_str(sm_hash_str(SM_HASH_SEED, magic), zlibVersion());
}

/* The key part of the header (SM_REND_KEY_BYTES); the kind follows it
 * (sm_rendition.h), outside what sm_rend_open compares. */
static void header_make(unsigned char *h, const sm_rend_key *key,
                        sm_rend_enc enc, apr_off_t body)
{
    apr_uint64_t v[5];

    v[0] = key->a;
    v[1] = key->b;
    v[2] = format_tag();
    v[3] = (apr_uint64_t)enc;
    v[4] = (apr_uint64_t)body;
    memset(h, 0, SM_REND_KEY_BYTES);
    memcpy(h, magic, sizeof(magic));
    memcpy(h + 8, v, sizeof(v));
}

apr_status_t sm_rend_dir_open(sm_rend_dir **out, apr_pool_t *p,
                              const char *path, apr_off_t max_bytes,
                              char *err, apr_size_t errlen)
{
    sm_rend_dir *d = apr_pcalloc(p, sizeof(*d));
    struct stat sb;
    int e, fd;

    if (mkdir(path, 0750) != 0 && errno != EEXIST) {
        e = errno;
        apr_snprintf(err, errlen, "cannot create the directory: %s",
                     strerror(e));
        return e;
    }
    d->path = apr_pstrdup(p, path);
    d->max_bytes = max_bytes;
    if ((e = sm_rend_index_create(&d->ix, p, d->path)) != APR_SUCCESS) {
        apr_snprintf(err, errlen, "cannot make its index's lock");
        return e;
    }
    fd = dir_fd(d);
    if (fd < 0) {
        e = errno;
        apr_snprintf(err, errlen, "cannot open the directory%s: %s",
                     e == ELOOP || e == ENOTDIR ? " (a symlink or not a "
                     "directory)" : "", strerror(e));
        return e;
    }
    if (fstat(fd, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        close(fd);
        apr_snprintf(err, errlen, "not a directory");
        return APR_ENOTDIR;
    }
    close(fd);
    *out = d;
    return APR_SUCCESS;
}

const char *sm_rend_dir_path(const sm_rend_dir *d)
{
    return d->path;
}

static const char *final_name(apr_pool_t *p, const char *stem,
                              sm_rend_enc enc)
{
    return apr_pstrcat(p, stem, enc == SM_REND_GZIP ? ".xml.gz" : ".xml",
                       NULL);
}

/* The file's descriptor closed with the pool that holds the apr_file_t. */
static apr_status_t fd_cleanup(void *data)
{
    return apr_file_close(data);
}

apr_status_t sm_rend_open(sm_rend_dir *d, apr_pool_t *p, const char *stem,
                          sm_rend_enc enc, const sm_rend_key *key,
                          apr_file_t **f, apr_off_t *offset,
                          apr_off_t *length)
{
    unsigned char want[SM_REND_KEY_BYTES], got[SM_REND_KEY_BYTES];
    apr_uint64_t body;
    struct stat sb;
    apr_os_file_t fd;
    apr_status_t rv;
    int dfd = dir_fd(d), e;

    if (dfd < 0)
        return errno;
    fd = openat(dfd, final_name(p, stem, enc),
                O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    e = errno;
    close(dfd);
    if (fd < 0)
        return e == ENOENT || e == ELOOP ? APR_ENOENT : e;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)
        || sb.st_size < SM_REND_HEADER
        || pread(fd, got, SM_REND_KEY_BYTES, 0) != SM_REND_KEY_BYTES) {
        close(fd);
        return APR_ENOENT;
    }
    memcpy(&body, got + 8 + 4 * sizeof(apr_uint64_t), sizeof(body));
    header_make(want, key, enc, (apr_off_t)body);
    if (memcmp(want, got, SM_REND_KEY_BYTES) != 0
        || (apr_uint64_t)sb.st_size != SM_REND_HEADER + body) {
        close(fd);
        return APR_ENOENT;
    }
    if (sb.st_atime + ATIME_STEP < time(NULL)) {
        struct timespec ts[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };
        (void)futimens(fd, ts);     /* LRU order only: failure is harmless */
    }
    if ((rv = apr_os_file_put(f, &fd, APR_FOPEN_READ
                                      | APR_FOPEN_SENDFILE_ENABLED, p))
        != APR_SUCCESS) {
        close(fd);
        return rv;
    }
    apr_pool_cleanup_register(p, *f, fd_cleanup, apr_pool_cleanup_null);
    *offset = SM_REND_HEADER;
    *length = (apr_off_t)body;
    return APR_SUCCESS;
}

/* ---- writing ------------------------------------------------------------ */

typedef struct {
    int fd;
    const char *tmp;        /* its temporary name in the directory */
    const char *name;       /* and its final one */
    apr_off_t body;         /* body bytes written */
    apr_size_t used;
    char buf[BUF_SIZE];
} out_file;

struct sm_rend_writer {
    sm_rend_dir *d;
    int dfd;                /* the directory, open while writing */
    sm_rend_key key;
    sm_rend_kind kind;
    sm_gzip *gz;
    int committed;
    out_file out[2];        /* indexed by sm_rend_enc */
};

static apr_status_t write_all(int fd, const char *data, apr_size_t len)
{
    while (len) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        data += n;
        len -= (apr_size_t)n;
    }
    return APR_SUCCESS;
}

static apr_status_t out_flush(out_file *o)
{
    apr_status_t rv = write_all(o->fd, o->buf, o->used);
    o->used = 0;
    return rv;
}

static apr_status_t out_append(out_file *o, const char *data, apr_size_t len)
{
    apr_status_t rv;

    o->body += (apr_off_t)len;
    if (o->used + len <= BUF_SIZE) {
        memcpy(o->buf + o->used, data, len);
        o->used += len;
        return APR_SUCCESS;
    }
    if ((rv = out_flush(o)) != APR_SUCCESS)
        return rv;
    if (len >= BUF_SIZE)
        return write_all(o->fd, data, len);
    memcpy(o->buf, data, len);
    o->used = len;
    return APR_SUCCESS;
}

static apr_status_t gz_to_file(void *baton, const char *data, apr_size_t len)
{
    sm_rend_writer *w = baton;
    return out_append(&w->out[SM_REND_GZIP], data, len);
}

static apr_status_t writer_cleanup(void *data)
{
    sm_rend_writer *w = data;
    int i;

    for (i = 0; i < 2; i++) {
        if (w->out[i].fd >= 0)
            close(w->out[i].fd);
        w->out[i].fd = -1;
        if (!w->committed && w->out[i].tmp)
            (void)unlinkat(w->dfd, w->out[i].tmp, 0);
    }
    if (w->dfd >= 0)
        close(w->dfd);
    w->dfd = -1;
    return APR_SUCCESS;
}

apr_status_t sm_rend_writer_create(sm_rend_writer **out, sm_rend_dir *d,
                                   apr_pool_t *p, const char *stem,
                                   const sm_rend_key *key,
                                   sm_rend_kind kind)
{
    static apr_uint32_t counter;
    sm_rend_writer *w = apr_palloc(p, sizeof(*w));
    static const char zero[SM_REND_HEADER];
    apr_uint32_t n = apr_atomic_inc32(&counter);
    apr_status_t rv;
    int i;

    w->d = d;
    w->dfd = -1;
    w->key = *key;
    w->kind = kind;
    w->committed = 0;
    w->gz = NULL;
    for (i = 0; i < 2; i++) {
        w->out[i].fd = -1;
        w->out[i].tmp = NULL;
        w->out[i].name = final_name(p, stem, (sm_rend_enc)i);
        w->out[i].body = 0;
        w->out[i].used = 0;
    }
    apr_pool_cleanup_register(p, w, writer_cleanup, apr_pool_cleanup_null);
    if ((w->dfd = dir_fd(d)) < 0)
        return errno;
    for (i = 0; i < 2; i++) {
        const char *tmp = apr_psprintf(p, TMP_PREFIX "%ld-%u-%s",
                                       (long)getpid(), (unsigned)n,
                                       w->out[i].name);
        w->out[i].fd = openat(w->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL
                                          | O_NOFOLLOW | O_CLOEXEC, 0640);
        if (w->out[i].fd < 0)
            return errno;
        w->out[i].tmp = tmp;
        /* The header is written last: until then the file is no
         * rendition of anything. */
        if ((rv = write_all(w->out[i].fd, zero, sizeof(zero)))
            != APR_SUCCESS)
            return rv;
    }
    if ((rv = sm_gzip_create(&w->gz, p, SM_GZIP_LEVEL, gz_to_file, w))
        != APR_SUCCESS)
        return rv;
    *out = w;
    return APR_SUCCESS;
}

apr_status_t sm_rend_write(void *baton, const char *data, apr_size_t len)
{
    sm_rend_writer *w = baton;
    apr_status_t rv = out_append(&w->out[SM_REND_PLAIN], data, len);
    return rv == APR_SUCCESS ? sm_gzip_write(w->gz, data, len) : rv;
}

apr_status_t sm_rend_commit(sm_rend_writer *w)
{
    unsigned char h[SM_REND_KEY_BYTES + 1];
    const char *tmp[2], *name[2];
    apr_off_t size[2];
    apr_status_t rv;
    int i;

    if ((rv = sm_gzip_finish(w->gz)) != APR_SUCCESS)
        return rv;
    for (i = 0; i < 2; i++) {
        out_file *o = &w->out[i];
        if ((rv = out_flush(o)) != APR_SUCCESS)
            return rv;
        header_make(h, &w->key, (sm_rend_enc)i, o->body);
        h[SM_REND_KEY_BYTES] = (unsigned char)w->kind;
        if (pwrite(o->fd, h, sizeof(h), 0) != (ssize_t)sizeof(h))
            return errno ? errno : APR_EGENERAL;
        if (close(o->fd) != 0) {
            o->fd = -1;
            return errno;
        }
        o->fd = -1;
        tmp[i] = o->tmp;
        name[i] = o->name;
        size[i] = SM_REND_HEADER + o->body;
    }
    if ((rv = sm_rend_index_commit(w->d->ix, w->dfd, tmp, name, size,
                                   w->kind)) != APR_SUCCESS)
        return rv;
    w->committed = 1;
    return APR_SUCCESS;
}

void sm_rend_sizes(const sm_rend_writer *w, apr_off_t *plain,
                   apr_off_t *gzip)
{
    *plain = w->out[SM_REND_PLAIN].body;
    *gzip = w->out[SM_REND_GZIP].body;
}

/* ---- eviction ----------------------------------------------------------- */

/* Without an index: the directory read, the least recently used first. */
typedef struct {
    const char *name;
    struct timespec atime;
    apr_off_t size;
} entry;

typedef struct {
    apr_pool_t *p;
    apr_array_header_t *files;
    apr_off_t total;
} scan_ctx;

static int older_first(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    if (a->atime.tv_sec != b->atime.tv_sec)
        return a->atime.tv_sec < b->atime.tv_sec ? -1 : 1;
    return a->atime.tv_nsec < b->atime.tv_nsec ? -1
         : a->atime.tv_nsec > b->atime.tv_nsec;
}

static int collect(void *baton, int dfd, const char *name,
                   const struct stat *sb)
{
    scan_ctx *c = baton;
    entry *e = apr_array_push(c->files);

    (void)dfd;
    e->name = apr_pstrdup(c->p, name);
    e->atime = sb->st_atim;
    e->size = (apr_off_t)sb->st_size;
    c->total += e->size;
    return 0;
}

static apr_status_t evict_by_scan(sm_rend_dir *d, int dfd, apr_pool_t *p,
                                  int *gone, int *scanned)
{
    scan_ctx c;
    apr_status_t rv;
    int i;

    c.p = p;
    c.files = apr_array_make(p, 64, sizeof(entry));
    c.total = 0;
    if ((rv = sm_rend_scan(dfd, collect, &c, gone, scanned)) != APR_SUCCESS)
        return rv;
    if (c.total <= d->max_bytes)
        return APR_SUCCESS;
    qsort(c.files->elts, (size_t)c.files->nelts, sizeof(entry), older_first);
    for (i = 0; i < c.files->nelts && c.total > d->max_bytes; i++) {
        entry *e = &APR_ARRAY_IDX(c.files, i, entry);
        if (unlinkat(dfd, e->name, 0) == 0) {
            c.total -= e->size;
            (*gone)++;
        }
    }
    return APR_SUCCESS;
}

apr_status_t sm_rend_evict(sm_rend_dir *d, apr_pool_t *p, int *removed,
                           int *scanned)
{
    int dfd, gone = 0, read = 0;
    apr_status_t rv;

    if ((dfd = dir_fd(d)) < 0)
        return errno;
    rv = sm_rend_index_evict(d->ix, dfd, d->max_bytes, &gone, &read);
    if (rv == APR_ENOTIMPL)
        rv = evict_by_scan(d, dfd, p, &gone, &read);
    close(dfd);
    if (removed)
        *removed = gone;
    if (scanned)
        *scanned = read;
    return rv;
}
