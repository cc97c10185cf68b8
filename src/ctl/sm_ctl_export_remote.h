/* SPDX-License-Identifier: Apache-2.0 */
/* sm_ctl_export_remote.h: export split in two processes (sitemapctl run as
 * root with a store of another user's): a child that has become the
 * store's owner reads the store and makes the documents; its root parent
 * writes the files, in the directory the administrator named, with
 * sm_ctl_export.c's own file handling.  They talk over a socket: each
 * request is a type byte, a 4-byte length and that many bytes; every
 * request but XR_CHUNK and XR_ABORT gets a reply, a 4-byte
 * sm_export_status, a 4-byte length and that many bytes (the error, or
 * what XR_STALE removed: NUL-separated paths). */
#ifndef SM_CTL_EXPORT_REMOTE_H
#define SM_CTL_EXPORT_REMOTE_H

#include "ctl/sm_ctl.h"

enum {
    XR_OPEN = 'O',      /* the URL directory (urldir) under the target */
    XR_FILE = 'F',      /* a file name in it: a new temporary file */
    XR_CHUNK = 'C',     /* bytes of that file */
    XR_END = 'E',       /* complete: rename it over the name */
    XR_ABORT = 'A',     /* failed: remove it */
    XR_STALE = 'X'      /* SitemapPath NUL urldir NUL page numbers (decimal,
                           NUL-terminated): remove stale page files */
};

/* The most a request or reply may carry. */
#define XR_MAX (64 * 1024 * 1024)

/* 0, or -1 (errno set). */
int sm_xr_send(int fd, int type, const void *data, apr_size_t len);

/* Send a request and read its reply into *reply (NUL-terminated, from p;
 * *rlen its length).  SM_EXPORT_WRITE with *reply saying why when the
 * other side went away. */
sm_export_status sm_xr_call(apr_pool_t *p, int fd, int type,
                            const void *data, apr_size_t len, char **reply,
                            apr_size_t *rlen);

/* sm_ctl_export.c's file handling, for the parent. */
int sm_export_open_dir(apr_pool_t *p, const char *dir, const char *urldir,
                       char *err, apr_size_t errlen);
int sm_export_create_temporary(apr_pool_t *p, int dfd, const char *name,
                               const char **tmp);
sm_export_status sm_export_remove_stale(apr_pool_t *p, int dfd,
                                        const char *dirpath,
                                        const char *urldir,
                                        const sm_settings *set,
                                        const sm_site_info *info,
                                        sm_export_result *res, char *err,
                                        apr_size_t errlen);
sm_export_status sm_export_sys_error(char *err, apr_size_t errlen,
                                     const char *what, const char *path);

#endif
