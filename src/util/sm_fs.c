/* SPDX-License-Identifier: Apache-2.0 */
/* sm_fs.c: see sm_fs.h.  Written against the POSIX *at() calls: APR's file
 * functions take paths only, and a path is what must not be trusted. */
#include "util/sm_fs.h"

#include <apr_strings.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/magic.h>
#include <sys/vfs.h>
#endif

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC)

void sm_fs_split(apr_pool_t *p, const char *path, const char **dir,
                 const char **name)
{
    const char *slash = strrchr(path, '/');

    if (!slash) {
        *dir = ".";
        *name = path;
        return;
    }
    *dir = slash == path ? "/"
                         : apr_pstrmemdup(p, path, (apr_size_t)(slash - path));
    *name = slash + 1;
}

/* Can only root (or we) change what the directory fd holds? */
static int only_root_writes(int fd)
{
    struct stat sb;

    return fstat(fd, &sb) == 0
        && (sb.st_uid == 0 || sb.st_uid == geteuid())
        && !(sb.st_mode & (S_IWGRP | S_IWOTH));
}

/* One step of the walk: the directory name in fd (made when missing and
 * create is set), opened; -1 with err set otherwise. */
static int step(int fd, const char *name, const char *so_far, int create,
                uid_t uid, gid_t gid, char *err, apr_size_t errlen)
{
    struct stat sb;
    int next, made = 0, tries;

    for (tries = 0; tries < 3; tries++) {
        if (fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno != ENOENT || !create)
                goto fail;
            if (mkdirat(fd, name, 0750) != 0) {
                if (errno == EEXIST)
                    continue;       /* made meanwhile: look again */
                goto fail;
            }
            made = 1;
            sb.st_mode = S_IFDIR;
        }
        if (S_ISLNK(sb.st_mode)) {
            if (!only_root_writes(fd)) {
                apr_snprintf(err, errlen, "'%s' is a symbolic link in a "
                             "directory other users can write: not followed",
                             so_far);
                errno = EACCES;
                return -1;
            }
            next = openat(fd, name, DIR_FLAGS);
        }
        else if (!S_ISDIR(sb.st_mode)) {
            errno = ENOTDIR;
            goto fail;
        }
        else
            next = openat(fd, name, DIR_FLAGS | O_NOFOLLOW);
        if (next < 0)
            goto fail;
        if (made && uid != SM_FS_KEEP_ID && fchown(next, uid, gid) != 0) {
            int e = errno;
            close(next);
            errno = e;
            goto fail;
        }
        return next;
    }
    errno = EAGAIN;
fail:
    apr_snprintf(err, errlen, "'%s': %s", so_far, strerror(errno));
    return -1;
}

#ifdef __linux__
/* Kernel file systems whose directories take no new directory, even from
 * root, though access() says they could: mkdir answers ENOENT or EPERM. */
static const char *no_new_dirs(int fd)
{
    struct statfs sf;

    if (fstatfs(fd, &sf) != 0)
        return NULL;
    switch ((unsigned long)sf.f_type) {
    case PROC_SUPER_MAGIC:
        return "proc";
    case SYSFS_MAGIC:
        return "sysfs";
    case DEVPTS_SUPER_MAGIC:
        return "devpts";
    default:
        return NULL;
    }
}
#else
static const char *no_new_dirs(int fd)
{
    (void)fd;
    return NULL;
}
#endif

/* Could this process make the directory missing (shown as path[0..len))
 * in the open directory fd?  APR_SUCCESS, or why not in err. */
static apr_status_t could_make(int fd, const char *path, apr_size_t len,
                               char *err, apr_size_t errlen)
{
    const char *fs = no_new_dirs(fd);
    int e;

    if (fs) {
        apr_snprintf(err, errlen, "'%.*s': %s, and no directory can be made "
                     "there (a %s file system)", (int)len, path,
                     strerror(ENOENT), fs);
        return APR_ENOENT;
    }
    if (faccessat(fd, ".", W_OK | X_OK, 0) == 0)
        return APR_SUCCESS;
    e = errno;
    apr_snprintf(err, errlen, "'%.*s': %s", (int)len, path, strerror(e));
    return APR_FROM_OS_ERROR(e);
}

/* sm_fs_open_dir, or with probe its dry run: nothing is made, and the
 * first missing directory must be one this process could make (*fd -1). */
static apr_status_t walk(const char *dir, int create, int probe, uid_t uid,
                         gid_t gid, int *fd, char *err, apr_size_t errlen)
{
    char path[PATH_MAX], *name, *end;
    apr_size_t len = strlen(dir);
    int cur;

    if (len == 0 || len >= sizeof(path)) {
        apr_snprintf(err, errlen, "'%s': %s", dir, strerror(ENAMETOOLONG));
        return APR_ENAMETOOLONG;
    }
    memcpy(path, dir, len + 1);
    if ((cur = open(path[0] == '/' ? "/" : ".", DIR_FLAGS)) < 0) {
        apr_snprintf(err, errlen, "'%s': %s", dir, strerror(errno));
        return APR_FROM_OS_ERROR(errno);
    }
    /* path[0..end) names the directory cur, for messages. */
    for (name = path; *name; name = end) {
        int next;
        char saved;

        while (*name == '/')
            name++;
        if (!*name)
            break;
        for (end = name; *end && *end != '/'; end++)
            ;
        saved = *end;
        *end = '\0';
        if (strcmp(name, ".") == 0)
            next = dup(cur);
        else
            next = step(cur, name, path, create, uid, gid, err, errlen);
        *end = saved;
        if (next < 0) {
            apr_status_t rv = APR_FROM_OS_ERROR(errno);
            if (probe && errno == ENOENT) {
                rv = could_make(cur, path, (apr_size_t)(end - path), err,
                                errlen);
                *fd = -1;
            }
            close(cur);
            return rv;
        }
        close(cur);
        cur = next;
    }
    *fd = cur;
    return APR_SUCCESS;
}

apr_status_t sm_fs_open_dir(const char *dir, int create, uid_t uid,
                            gid_t gid, int *fd, char *err, apr_size_t errlen)
{
    return walk(dir, create, 0, uid, gid, fd, err, errlen);
}

apr_status_t sm_fs_probe_dir(const char *dir, char *err, apr_size_t errlen)
{
    int fd = -1;
    apr_status_t rv = walk(dir, 0, 1, SM_FS_KEEP_ID, SM_FS_KEEP_ID, &fd,
                           err, errlen);

    if (fd >= 0)
        close(fd);
    return rv;
}

apr_status_t sm_fs_give_file(int dirfd, const char *name, uid_t uid,
                             gid_t gid, char *err, apr_size_t errlen)
{
    struct stat before, sb;
    int fd;

    if (fstatat(dirfd, name, &before, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return APR_ENOENT;
        apr_snprintf(err, errlen, "%s", strerror(errno));
        return APR_FROM_OS_ERROR(errno);
    }
    /* Looked at before it is opened: opening a FIFO or a device can block
     * or act. */
    if (S_ISLNK(before.st_mode)) {
        apr_snprintf(err, errlen, "it is a symbolic link");
        return APR_EACCES;
    }
    if (!S_ISREG(before.st_mode)) {
        apr_snprintf(err, errlen, "it is not a regular file");
        return APR_EACCES;
    }
    fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY
                             | O_CLOEXEC);
    if (fd < 0) {
        apr_snprintf(err, errlen, "%s", errno == ELOOP
                     ? "it is a symbolic link" : strerror(errno));
        return APR_FROM_OS_ERROR(errno);
    }
    if (fstat(fd, &sb) != 0 || sb.st_dev != before.st_dev
        || sb.st_ino != before.st_ino || !S_ISREG(sb.st_mode)) {
        apr_snprintf(err, errlen, "it was replaced while being checked");
        close(fd);
        return APR_EACCES;
    }
    if (sb.st_nlink != 1) {
        /* A hard link to a file elsewhere: chowning it would give that
         * file away. */
        apr_snprintf(err, errlen, "it has %lu hard links (a store file has "
                     "one)", (unsigned long)sb.st_nlink);
        close(fd);
        return APR_EACCES;
    }
    if (uid != SM_FS_KEEP_ID && sb.st_uid != 0 && sb.st_uid != uid) {
        apr_snprintf(err, errlen, "it belongs to uid %lu, neither root nor "
                     "uid %lu", (unsigned long)sb.st_uid, (unsigned long)uid);
        close(fd);
        return APR_EACCES;
    }
    if (uid != SM_FS_KEEP_ID && (sb.st_uid != uid || sb.st_gid != gid)
        && fchown(fd, uid, gid) != 0) {
        apr_status_t rv = APR_FROM_OS_ERROR(errno);
        apr_snprintf(err, errlen, "cannot change its owner: %s",
                     strerror(errno));
        close(fd);
        return rv;
    }
    close(fd);
    return APR_SUCCESS;
}
