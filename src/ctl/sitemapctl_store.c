/* SPDX-License-Identifier: Apache-2.0 */
/* sitemapctl_store.c: opening the store for sitemapctl, and writing to it
 * in turns with the module.
 *
 * Running as root: the store's directory usually belongs to httpd's User, who can put a
 * link where root expects the store or a journal: root opening, creating
 * (SQLite) or chowning through it would hand a root file to that user, and
 * the file's content is theirs: SQLite parsing it as root would lend any
 * flaw in SQLite root's rights.  So sitemapctl, run as root, becomes the
 * owner of a store that is not root's (or of its directory, for a store it
 * creates) for good before it opens the store: real, effective and saved
 * uid and gid and the owner's groups, with no way back (drop_to_owner).
 * What it creates is theirs, and a link they planted leads nowhere they
 * could not go.  export does this in a child, and its root parent writes
 * the files (cmd_export).  The store and
 * its journals must also not be links, hard links or other than regular
 * files (checked without following links, see sm_fs.h). */
#include "config.h"

#include <apr_strings.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>

#include "ctl/sitemapctl.h"
#include "ctl/sm_ctl.h"
#include "util/sm_fs.h"
#include "serve/sm_sitemap.h"

/* Become the store's owner for good: real, effective and saved uid and
 * gid, and the owner's groups (initgroups; only the owner's gid when the
 * uid has no name).  No way back to root: a store another user wrote is
 * parsed by SQLite, and whatever a crafted file could make it do is done
 * with that user's rights only. */
int drop_to_owner(ctl *c)
{
    struct passwd *pw = getpwuid(c->owner_uid);
    uid_t r, e, s;
    int ok;

    ok = (pw ? initgroups(pw->pw_name, c->owner_gid)
             : setgroups(1, &c->owner_gid)) == 0
         && setresgid(c->owner_gid, c->owner_gid, c->owner_gid) == 0
         && setresuid(c->owner_uid, c->owner_uid, c->owner_uid) == 0;
    if (!ok) {
        say("cannot become uid %ld: %s", (long)c->owner_uid, strerror(errno));
        return 0;
    }
    /* Never carry on as root by mistake. */
    if (getresuid(&r, &e, &s) != 0 || r != c->owner_uid || e != r || s != r
        || setuid(0) == 0) {
        say("cannot become uid %ld for good", (long)c->owner_uid);
        _exit(EX_NO_STORE);
    }
    return 1;
}

/* Can the owner reach (search) dir?  Asked of a child that becomes the
 * owner: root itself must not.  0 only when the owner surely cannot (a
 * child that could not become the owner says 1: the caller then tries and
 * fails loudly rather than work as root). */
static int owner_reaches(ctl *c, const char *dir)
{
    pid_t pid;
    int status;

    fflush(NULL);
    if ((pid = fork()) < 0)
        return -1;
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)                    /* (its messages go nowhere) */
            dup2(fd, STDERR_FILENO);
        _exit(!drop_to_owner(c) ? 2
              : faccessat(AT_FDCWD, dir, X_OK, 0) == 0 ? 0 : 1);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 1);
}

/* EX_OK, or EX_NO_STORE (said) when the store is not safe to open.  A
 * command that writes (writing) also takes over a store of root's in a
 * directory of another user's (left by an older sitemapctl or module): it
 * gives the store and its journals to that user first, as the module does
 * at start-up. */
int guard_store(ctl *c, int become_owner, int writing)
{
    static const char *const journals[] = { "", "-wal", "-shm" };
    const char *dir, *name;
    struct stat sb, dsb;
    char err[512];
    int dirfd, take_over, fresh;
    apr_size_t i;

    if (geteuid() != 0 || c->as_owner)
        return EX_OK;
    sm_fs_split(c->pool, c->db, &dir, &name);
    if (sm_fs_open_dir(dir, 0, SM_FS_KEEP_ID, SM_FS_KEEP_ID, &dirfd, err,
                       sizeof(err)) != APR_SUCCESS) {
        say("cannot open the store %s: %s", c->db, err);
        return EX_NO_STORE;
    }
    if (fstat(dirfd, &dsb) != 0) {
        say("cannot open the store %s: %s", c->db, strerror(errno));
        close(dirfd);
        return EX_NO_STORE;
    }
    if ((fresh = fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0))
        sb = dsb;                       /* a new store: the directory's */
    take_over = become_owner && writing && sb.st_uid == 0 && dsb.st_uid != 0;
    if (take_over)
        sb = dsb;
    if (become_owner && sb.st_uid != 0) {
        c->owner_uid = sb.st_uid;
        c->owner_gid = sb.st_gid;
        /* Refused, not opened as root, when the owner cannot reach the
         * directory (a 0700 parent of root's): an existing store's
         * content is the owner's (SQLite parsing it as root would lend
         * any flaw root's rights), and the owner may still hold a
         * descriptor or a working directory in it, which the parent does
         * not shut.  Nor opened as the owner through a descriptor of
         * root's: SQLite opens the store and its journals by their full
         * path, through the parents the owner cannot search. */
        if (owner_reaches(c, dir) == 0) {
            say("refusing the store %s as root: %s belongs to uid %ld, who "
                "cannot reach %s (a parent directory shuts it out); as "
                "root, sitemapctl opens another user's store only as that "
                "user: let uid %ld search the parent directories, or give "
                "%s to root", c->db, fresh || take_over
                ? "its directory" : "it", (long)c->owner_uid, dir,
                (long)c->owner_uid, fresh || take_over ? "the directory"
                : "the store and its directory");
            close(dirfd);
            return EX_NO_STORE;
        }
    }
    for (i = 0; i < sizeof(journals) / sizeof(journals[0]); i++) {
        const char *f = apr_pstrcat(c->pool, name, journals[i], NULL);
        apr_status_t rv = sm_fs_give_file(dirfd, f, take_over ? dsb.st_uid
                                          : SM_FS_KEEP_ID, take_over
                                          ? dsb.st_gid : SM_FS_KEEP_ID,
                                          err, sizeof(err));
        if (rv != APR_SUCCESS && !APR_STATUS_IS_ENOENT(rv)) {
            say("refusing the store %s as root: %s%s: %s", c->db, c->db,
                journals[i], err);
            close(dirfd);
            return EX_NO_STORE;
        }
    }
    close(dirfd);
    if (!become_owner || sb.st_uid == 0)
        return EX_OK;
    if (!drop_to_owner(c))
        return EX_NO_STORE;
    c->as_owner = 1;
    return EX_OK;
}

/* Can we write the store and create its journals beside it?  (errno says
 * why not.) */
static int can_write(ctl *c)
{
    const char *dir, *name;

    sm_fs_split(c->pool, c->db, &dir, &name);
    return faccessat(AT_FDCWD, c->db, R_OK | W_OK, AT_EACCESS) == 0
        && faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) == 0;
}

int open_store(ctl *c, int mode, sm_store **st)
{
    char err[512];
    struct stat sb;
    int flags = mode == OPEN_READ ? SM_STORE_READONLY
              : mode == OPEN_CREATE ? SM_STORE_CREATE | SM_STORE_BULK : 0;
    int rc;

    if (!sm_store_is_file(c->uri)) {
        /* A database, not a file: the schema is created when missing
         * (import, add), as the module does. */
        if (sm_store_open(st, c->pool, c->uri, flags, BUSY_TIMEOUT_MS,
                          &logger, err, sizeof(err)) != APR_SUCCESS) {
            say("cannot open the store %s: %s", c->db, err);
            return EX_NO_STORE;
        }
        return EX_OK;
    }
    if ((rc = guard_store(c, 1, mode != OPEN_READ)) != EX_OK)
        return rc;
    if (stat(c->db, &sb) != 0) {
        if (errno != ENOENT || mode != OPEN_CREATE) {
            say("cannot open the store %s: %s", c->db, strerror(errno));
            return EX_NO_STORE;
        }
        say("%s does not exist: creating a new store", c->db);
    }
    else if (!S_ISREG(sb.st_mode)) {
        say("cannot open the store %s: not a regular file", c->db);
        return EX_NO_STORE;
    }
    else if (mode != OPEN_READ && !can_write(c)) {
        /* SQLite would open it read-only and fail at the first write. */
        say("cannot open the store %s for writing: %s", c->db,
            strerror(errno));
        return EX_NO_STORE;
    }
    else if (mode != OPEN_READ && sb.st_size > 0) {
        /* Opening read-write switches the file to WAL mode before its
         * schema is looked at: make sure first, read-only, that it is a
         * store (an empty file becomes one, as the module does). */
        apr_pool_t *probe;
        sm_store *ro;
        apr_status_t rv;

        apr_pool_create(&probe, c->pool);
        rv = sm_store_open(&ro, probe, c->db,
                           SM_STORE_READONLY | SM_STORE_PROBE,
                           BUSY_TIMEOUT_MS, &logger, err, sizeof(err));
        apr_pool_destroy(probe);
        if (rv != APR_SUCCESS) {
            say("cannot open the store %s: %s", c->db, err);
            return EX_NO_STORE;
        }
    }
    if (sm_store_open(st, c->pool, c->db, flags, BUSY_TIMEOUT_MS,
                      &logger, err, sizeof(err)) != APR_SUCCESS) {
        say("cannot open the store %s: %s", c->db, err);
        return EX_NO_STORE;
    }
    return EX_OK;
}

/* The store open for reading, a read begun and the site's row (which must
 * exist); on anything else the exit status, said, and nothing left open
 * but the store (closed with the process). */
int open_site_read(ctl *c, sm_store **st, sm_site_row *row)
{
    int rc;

    if ((rc = open_store(c, OPEN_READ, st)) != EX_OK)
        return rc;
    if (sm_store_read_begin(*st) != APR_SUCCESS) {
        say("%s: %s", c->db, sm_store_error(*st));
        return EX_STORE;
    }
    if ((rc = site_row(c, *st, row, 1)) != EX_OK)
        sm_store_read_end(*st);
    return rc;
}

/* The site's row; EX_UNKNOWN_SITE (said) when it has none. */
int site_row(ctl *c, sm_store *st, sm_site_row *row, int must_exist)
{
    if (sm_store_site_row(st, c->pool, c->site, row) != APR_SUCCESS) {
        say("%s: %s", c->db, sm_store_error(st));
        return EX_STORE;
    }
    if (!row->known && must_exist) {
        say("the store %s has no site %s (`%s stats %s` lists its sites)",
            c->db, c->site, progname, c->db);
        return EX_UNKNOWN_SITE;
    }
    return EX_OK;
}

/* The site as sitemapctl writes to it: the stored page size, no limit on
 * URLs, and no settings (those are the module's to store). */
sm_site_conf *site_conf(ctl *c, const sm_site_row *row)
{
    sm_site_conf *site = apr_pcalloc(c->pool, sizeof(*site));

    site->base = c->site;
    site->page_size = row->known && row->page_size > 0 ? row->page_size
                    : c->page_size ? c->page_size : SM_PAGE_MAX_URLS;
    if (row->known && c->page_size && c->page_size != row->page_size)
        say("warning: --page-size %d ignored: the site's page size in the "
            "store is %d", c->page_size, row->page_size);
    site->max_urls = 0;
    site->expire = 0;
    site->settings = NULL;
    return site;
}

/* Apply changes in transactions of BATCH, with a PAUSE after each one.  A
 * writer waiting on SQLite's lock (the module's) sleeps at most 100 ms
 * between two tries, so a pause longer than that lets it in: it never
 * waits for more than one of our transactions (a fraction of a second). */
/* pg: a meter to move after each transaction, or NULL. */
int apply_all(ctl *c, sm_store *st, const sm_change *changes, int n,
                     sm_apply_stats *total, sm_progress *pg)
{
    int off;

    memset(total, 0, sizeof(*total));
    for (off = 0; off < n; off += BATCH) {
        int k = n - off < BATCH ? n - off : BATCH;
        sm_apply_stats s;

        if (sm_store_apply(st, changes + off, k, &s) != APR_SUCCESS) {
            say("writing to %s failed after %d of %d changes (the last "
                "transaction changed nothing): %s", c->db, off, n,
                sm_store_error(st));
            return EX_STORE;
        }
        total->added += s.added;
        total->updated += s.updated;
        total->touched += s.touched;
        total->removed += s.removed;
        total->refused_full += s.refused_full;
        if (pg)
            sm_progress_update(pg, off + k, 0, apr_time_now());
        if (off + k < n)
            apr_sleep(PAUSE);
    }
    return EX_OK;
}

/* The URLs of the arguments, normalised; EX_USAGE (said) if one is not
 * valid: nothing is changed then. */
int arg_urls(ctl *c, const command *cmd, const char ***urls)
{
    int i;

    *urls = apr_palloc(c->pool, sizeof(char *) * (apr_size_t)c->args->nelts);
    for (i = 0; i < c->args->nelts; i++) {
        const char *in = APR_ARRAY_IDX(c->args, i, const char *);
        const char *err = sm_ctl_url(c->pool, c->site, in, NULL,
                                     &(*urls)[i]);
        if (err)
            return usage_error(cmd, "%s", err);
    }
    return EX_OK;
}
