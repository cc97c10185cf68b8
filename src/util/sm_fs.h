/* SPDX-License-Identifier: Apache-2.0 */
/* sm_fs.h: creating and handing over the store's directory and files from
 * a root process without following a link another user planted.
 *
 * The store's directory belongs to httpd's User (the children write
 * there), so anything running as that user can put a symbolic link, a
 * hard link or a FIFO where root expects the store or its journals.  Root
 * (httpd's parent, sitemapctl) therefore walks to the directory one name
 * at a time with openat(O_NOFOLLOW), and changes only what it opened
 * (fchown), after checking that it is a regular file with one link owned
 * by root or by the user it is meant for.  Nothing here follows a link
 * found in a directory someone other than root can write. */
#ifndef SM_FS_H
#define SM_FS_H

#include <apr_errno.h>
#include <apr_pools.h>
#include <sys/types.h>

#define SM_FS_KEEP_ID ((uid_t)-1)   /* do not change an owner */

/* Open the directory dir (an absolute or relative path) for openat.  When
 * create is set, missing directories are made (mode 0750) and each one
 * made is given to uid/gid (SM_FS_KEEP_ID: left as made).  A symbolic link
 * on the way is followed only when it lies in a directory that only root
 * (or we) can write; otherwise APR_EACCES with err saying which link and
 * why.  *fd is the open directory, for the caller to close. */
apr_status_t sm_fs_open_dir(const char *dir, int create, uid_t uid,
                            gid_t gid, int *fd, char *err, apr_size_t errlen);

/* What sm_fs_open_dir(dir, create 1) would meet, with nothing made (a
 * configuration test): APR_SUCCESS when dir exists or its first missing
 * directory could be made by this process (its parent a directory it can
 * write and search, on a file system that takes directories), else why
 * not in err, as sm_fs_open_dir would say it.  Links as sm_fs_open_dir. */
apr_status_t sm_fs_probe_dir(const char *dir, char *err, apr_size_t errlen);

/* The file name in the open directory dirfd (the store or a journal).
 * APR_ENOENT when it does not exist.  Otherwise it must be a regular file
 * with a single link, owned by root or by uid (or, when uid is
 * SM_FS_KEEP_ID, by anyone): an error with err saying what it is instead.
 * When it is, and uid is not SM_FS_KEEP_ID, it is given to uid/gid (the
 * opened file, never the name). */
apr_status_t sm_fs_give_file(int dirfd, const char *name, uid_t uid,
                             gid_t gid, char *err, apr_size_t errlen);

/* The directory part and the file part of path ("." and path when it has
 * no slash; "/" for a file in the root). */
void sm_fs_split(apr_pool_t *p, const char *path, const char **dir,
                 const char **name);

#endif
