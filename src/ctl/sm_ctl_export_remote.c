/* SPDX-License-Identifier: Apache-2.0 */
/* sm_ctl_export_remote.c: the two sides of a split export (see
 * sm_ctl_export_remote.h): the socket's framing, and the root parent that
 * writes the files its child, the store's owner, makes.
 *
 * The parent trusts the child no more than the store's owner: it writes
 * only under the directory the administrator named (never one the child
 * names), only single names without a slash below the URL directory (no
 * "." or ".." anywhere), and through sm_ctl_export.c's own handling (no
 * link followed below that directory, temporary files created
 * exclusively, then renamed). */
#include "ctl/sm_ctl_export_remote.h"

#include <apr_strings.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int write_all(int fd, const void *data, apr_size_t len)
{
    const char *at = data;

    while (len) {
        ssize_t n = send(fd, at, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        at += n;
        len -= (apr_size_t)n;
    }
    return 0;
}

/* 1 when len bytes were read, 0 at the end (none read), -1 on an error or
 * an end within them. */
static int read_all(int fd, void *data, apr_size_t len)
{
    char *at = data;
    apr_size_t got = 0;

    while (got < len) {
        ssize_t n = read(fd, at + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) {
            if (got == 0)
                return 0;
            errno = EPIPE;
            return -1;
        }
        got += (apr_size_t)n;
    }
    return 1;
}

int sm_xr_send(int fd, int type, const void *data, apr_size_t len)
{
    unsigned char t = (unsigned char)type;
    uint32_t n = (uint32_t)len;

    if (len > XR_MAX) {
        errno = EMSGSIZE;
        return -1;
    }
    return write_all(fd, &t, 1) == 0 && write_all(fd, &n, sizeof(n)) == 0
           && write_all(fd, data, len) == 0 ? 0 : -1;
}

/* A reply (status, bytes); the length bounded. */
static int read_frame(apr_pool_t *p, int fd, uint32_t *head, char **data,
                      apr_size_t *len)
{
    uint32_t n;
    int rc;

    if ((rc = read_all(fd, head, sizeof(*head))) <= 0)
        return rc;
    if (read_all(fd, &n, sizeof(n)) != 1)
        return -1;
    if (n > XR_MAX) {
        errno = EMSGSIZE;
        return -1;
    }
    *data = apr_palloc(p, (apr_size_t)n + 1);
    if (n && read_all(fd, *data, n) != 1)
        return -1;
    (*data)[n] = '\0';
    *len = n;
    return 1;
}

sm_export_status sm_xr_call(apr_pool_t *p, int fd, int type,
                            const void *data, apr_size_t len, char **reply,
                            apr_size_t *rlen)
{
    uint32_t status;

    if (sm_xr_send(fd, type, data, len) != 0
        || read_frame(p, fd, &status, reply, rlen) != 1) {
        *reply = apr_psprintf(p, "the root process that writes the export "
                              "went away: %s", strerror(errno ? errno
                                                             : EPIPE));
        *rlen = strlen(*reply);
        return SM_EXPORT_WRITE;
    }
    return (sm_export_status)status;
}

static int reply(int fd, sm_export_status es, const char *data,
                 apr_size_t len)
{
    uint32_t s = (uint32_t)es, n = (uint32_t)len;

    return write_all(fd, &s, sizeof(s)) == 0
           && write_all(fd, &n, sizeof(n)) == 0
           && write_all(fd, data, len) == 0 ? 0 : -1;
}

static int reply_error(int fd, const char *err)
{
    return reply(fd, SM_EXPORT_WRITE, err, strlen(err));
}

/* One name of a directory entry: not empty, no slash, not . or .. */
static int plain_name(const char *s, apr_size_t len)
{
    return len > 0 && len < 256 && !memchr(s, '/', len)
           && !memchr(s, '\0', len) && strcmp(s, ".") != 0
           && strcmp(s, "..") != 0;
}

/* A URL directory: starts and ends with a slash, no . or .. segment. */
static int plain_urldir(apr_pool_t *p, const char *s, apr_size_t len)
{
    char *copy, *seg, *state;

    if (len == 0 || len > 4096 || memchr(s, '\0', len) || s[0] != '/'
        || s[len - 1] != '/')
        return 0;
    copy = apr_pstrmemdup(p, s, len);
    for (seg = apr_strtok(copy, "/", &state); seg;
         seg = apr_strtok(NULL, "/", &state))
        if (strcmp(seg, ".") == 0 || strcmp(seg, "..") == 0)
            return 0;
    return 1;
}

typedef struct {
    apr_pool_t *p;
    int sock;
    const char *dir;            /* as the administrator named it */
    int dfd;                    /* the URL directory under it, or -1 */
    const char *dirpath;
    int fd;                     /* the file being written, or -1 */
    const char *tmp, *name;
    int failed;                 /* errno of a failed write to it, or 0 */
    char err[512];
} server;

static void drop_file(server *sv)
{
    if (sv->fd >= 0) {
        close(sv->fd);
        unlinkat(sv->dfd, sv->tmp, 0);
    }
    sv->fd = -1;
}

static int on_open(server *sv, const char *data, apr_size_t len)
{
    /* Another directory (the news sitemap's, llms.txt's) once no file
     * is open in this one. */
    if (sv->fd >= 0 || !plain_urldir(sv->p, data, len))
        return reply_error(sv->sock, "export: a bad directory request");
    if (sv->dfd >= 0) {
        close(sv->dfd);
        sv->dfd = -1;
    }
    sv->dfd = sm_export_open_dir(sv->p, sv->dir, data, sv->err,
                                 sizeof(sv->err));
    if (sv->dfd < 0)
        return reply_error(sv->sock, sv->err);
    sv->dirpath = apr_pstrcat(sv->p, sv->dir, data, NULL);
    return reply(sv->sock, SM_EXPORT_OK, "", 0);
}

static int on_file(server *sv, const char *data, apr_size_t len)
{
    if (sv->dfd < 0 || sv->fd >= 0 || !plain_name(data, len))
        return reply_error(sv->sock, "export: a bad file request");
    sv->name = apr_pstrmemdup(sv->p, data, len);
    sv->failed = 0;
    sv->fd = sm_export_create_temporary(sv->p, sv->dfd, sv->name, &sv->tmp);
    if (sv->fd < 0) {
        sm_export_sys_error(sv->err, sizeof(sv->err),
                            "create a temporary file for",
                            apr_pstrcat(sv->p, sv->dirpath, sv->name, NULL));
        return reply_error(sv->sock, sv->err);
    }
    return reply(sv->sock, SM_EXPORT_OK, "", 0);
}

static void on_chunk(server *sv, const char *data, apr_size_t len)
{
    while (sv->fd >= 0 && !sv->failed && len) {
        ssize_t n = write(sv->fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            sv->failed = n < 0 ? errno : EIO;
            break;
        }
        data += n;
        len -= (apr_size_t)n;
    }
}

static int on_end(server *sv)
{
    const char *path;
    int fd = sv->fd;

    if (fd < 0)
        return reply_error(sv->sock, "export: no file to finish");
    path = apr_pstrcat(sv->p, sv->dirpath, sv->name, NULL);
    sv->fd = -1;
    if (close(fd) != 0 && !sv->failed)
        sv->failed = errno;
    if (!sv->failed && renameat(sv->dfd, sv->tmp, sv->dfd, sv->name) != 0)
        sv->failed = errno;
    if (sv->failed) {
        errno = sv->failed;
        sm_export_sys_error(sv->err, sizeof(sv->err), "write", path);
        unlinkat(sv->dfd, sv->tmp, 0);
        return reply_error(sv->sock, sv->err);
    }
    return reply(sv->sock, SM_EXPORT_OK, "", 0);
}

static int on_stale(server *sv, const char *data, apr_size_t len)
{
    const char *end = data + len, *path, *urldir, *at;
    sm_site_info info;
    sm_settings set;
    sm_export_result res;
    apr_array_header_t *out;
    sm_export_status es;
    int i;

    /* (NUL-terminated fields; the frame is NUL-terminated past len) */
    path = data;
    urldir = path + strlen(path) + 1;
    if (sv->dfd < 0 || sv->fd >= 0 || len == 0 || data[len - 1] != '\0'
        || urldir >= end || !plain_urldir(sv->p, urldir, strlen(urldir)))
        return reply_error(sv->sock, "export: a bad request");
    memset(&info, 0, sizeof(info));
    memset(&set, 0, sizeof(set));
    memset(&res, 0, sizeof(res));
    set.path = path;
    info.pages = apr_array_make(sv->p, 64, sizeof(sm_page_info));
    for (at = urldir + strlen(urldir) + 1; at < end; at += strlen(at) + 1) {
        sm_page_info *pi = apr_array_push(info.pages);
        memset(pi, 0, sizeof(*pi));
        pi->page = apr_atoi64(at);
    }
    res.removed = apr_array_make(sv->p, 1, sizeof(char *));
    es = sm_export_remove_stale(sv->p, sv->dfd, sv->dirpath, urldir, &set,
                                &info, &res, sv->err, sizeof(sv->err));
    if (es != SM_EXPORT_OK)
        return reply_error(sv->sock, sv->err);
    out = apr_array_make(sv->p, 256, 1);
    for (i = 0; i < res.removed->nelts; i++) {
        const char *r = APR_ARRAY_IDX(res.removed, i, const char *);
        do
            APR_ARRAY_PUSH(out, char) = *r;
        while (*r++);
    }
    return reply(sv->sock, SM_EXPORT_OK, out->elts, (apr_size_t)out->nelts);
}

sm_export_status sm_ctl_export_serve(apr_pool_t *p, int sock, const char *dir,
                                     char *err, apr_size_t errlen)
{
    apr_size_t dlen = strlen(dir);
    server sv;
    int rc = 0;

    memset(&sv, 0, sizeof(sv));
    sv.sock = sock;
    sv.dfd = -1;
    sv.fd = -1;
    while (dlen > 1 && dir[dlen - 1] == '/')
        dlen--;
    sv.dir = apr_pstrmemdup(p, dir, dlen);
    if (strcmp(sv.dir, "/") == 0)
        sv.dir = "";
    for (;;) {
        apr_pool_t *scratch;
        unsigned char type;
        uint32_t n;
        char *data;
        int got;

        if ((got = read_all(sock, &type, 1)) == 0)
            break;                      /* the child is done */
        if (got < 0 || read_all(sock, &n, sizeof(n)) != 1 || n > XR_MAX) {
            rc = -1;
            break;
        }
        apr_pool_create(&scratch, p);
        sv.p = scratch;
        data = apr_palloc(scratch, (apr_size_t)n + 1);
        if (n && read_all(sock, data, n) != 1) {
            apr_pool_destroy(scratch);
            rc = -1;
            break;
        }
        data[n] = '\0';
        sv.p = type == XR_OPEN || type == XR_FILE ? p : scratch;
        switch (type) {
        case XR_OPEN:  rc = on_open(&sv, data, n); break;
        case XR_FILE:  rc = on_file(&sv, data, n); break;
        case XR_CHUNK: on_chunk(&sv, data, n); break;
        case XR_END:   rc = on_end(&sv); break;
        case XR_ABORT: drop_file(&sv); break;
        case XR_STALE: rc = on_stale(&sv, data, n); break;
        default:       rc = -1; break;
        }
        apr_pool_destroy(scratch);
        if (rc != 0)
            break;
    }
    drop_file(&sv);
    if (sv.dfd >= 0)
        close(sv.dfd);
    if (rc != 0) {
        if (err)
            apr_snprintf(err, errlen, "the export's reading process sent "
                         "a request that could not be answered");
        return SM_EXPORT_WRITE;
    }
    return SM_EXPORT_OK;
}
