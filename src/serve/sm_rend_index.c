/* SPDX-License-Identifier: Apache-2.0 */
/* sm_rend_index.c: see sm_rend_index.h.  Files are handled as in
 * sm_rendition.c: relative to a directory descriptor, never through a
 * link. */
#include "serve/sm_rend_index.h"

#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define INDEX_NAME ".index"
#define TMP_PREFIX ".tmp-"
#define TMP_MAX_AGE 3600
#define BUSY_MS 5000

enum { Q_PUT, Q_META, Q_RENDERED, Q_SWEPT, Q_VICTIM, Q_USED, Q_DEL, Q_N };

static const char *const queries[Q_N] = {
    "INSERT INTO rend(name, size, keep, used) VALUES (?1, ?2, ?3, ?4) "
    "ON CONFLICT(name) DO UPDATE SET size = excluded.size, "
    "keep = excluded.keep, used = excluded.used",
    "SELECT total, files, renders FROM meta",
    "UPDATE meta SET renders = renders + 1",
    "UPDATE meta SET renders = 0",
    "SELECT name, size, used FROM rend ORDER BY keep, used LIMIT 1",
    "UPDATE rend SET used = ?2 WHERE name = ?1",
    "DELETE FROM rend WHERE name = ?1",
};

/* keep: 0 for a host-made site's file (removed first), 1 otherwise; used:
 * nanoseconds since the epoch.  The triggers keep meta's total and
 * count; renders counts commits since the directory was last read. */
static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=OFF;"
    "CREATE TABLE IF NOT EXISTS rend(name TEXT PRIMARY KEY,"
    " size INTEGER NOT NULL, keep INTEGER NOT NULL,"
    " used INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS rend_lru ON rend(keep, used);"
    "CREATE TABLE IF NOT EXISTS meta(id INTEGER PRIMARY KEY CHECK (id = 1),"
    " total INTEGER NOT NULL, files INTEGER NOT NULL,"
    " renders INTEGER NOT NULL);"
    "CREATE TRIGGER IF NOT EXISTS rend_add AFTER INSERT ON rend BEGIN"
    " UPDATE meta SET total = total + new.size, files = files + 1; END;"
    "CREATE TRIGGER IF NOT EXISTS rend_del AFTER DELETE ON rend BEGIN"
    " UPDATE meta SET total = total - old.size, files = files - 1; END;"
    "CREATE TRIGGER IF NOT EXISTS rend_size AFTER UPDATE OF size ON rend"
    " BEGIN UPDATE meta SET total = total - old.size + new.size; END;";

struct sm_rend_index {
    const char *path;           /* DIR/.index */
    apr_thread_mutex_t *lock;   /* one transaction at a time here */
    sqlite3 *db;                /* this process's connection, or NULL */
    sqlite3_stmt *q[Q_N];
    dev_t dev;                  /* the file db has open */
    ino_t ino;
    int scanned;                /* entries read since the last evict */
};

typedef struct {
    apr_int64_t total, files, renders;
} meta;

static apr_int64_t ns_of(const struct timespec *t)
{
    return (apr_int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static apr_int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return ns_of(&t);
}

/* ---- reading the directory ---------------------------------------------- */

static int is_rendition_name(const char *name)
{
    apr_size_t n = strlen(name);
    if (name[0] == '.')
        return 0;
    return (n > 4 && strcmp(name + n - 4, ".xml") == 0)
        || (n > 7 && strcmp(name + n - 7, ".xml.gz") == 0);
}

apr_status_t sm_rend_scan(int dfd, sm_rend_visit_fn fn, void *baton,
                          int *removed, int *scanned)
{
    time_t now = time(NULL);
    struct dirent *de;
    int fd;
    DIR *dir;

    if ((fd = dup(dfd)) < 0 || !(dir = fdopendir(fd))) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return e;
    }
    rewinddir(dir);
    while ((de = readdir(dir))) {
        struct stat sb;
        int tmp = strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0;

        (*scanned)++;
        if (!tmp && !is_rendition_name(de->d_name))
            continue;
        if (fstatat(dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (tmp) {
            if (S_ISREG(sb.st_mode) && sb.st_mtime + TMP_MAX_AGE < now
                && unlinkat(dfd, de->d_name, 0) == 0)
                (*removed)++;
            continue;
        }
        if (!S_ISREG(sb.st_mode)) {
            /* Never ours: a rename would replace it; removing the entry
             * itself (not what a symlink points at) is safe. */
            if (!S_ISDIR(sb.st_mode) && unlinkat(dfd, de->d_name, 0) == 0)
                (*removed)++;
            continue;
        }
        if (fn(baton, dfd, de->d_name, &sb))
            break;
    }
    closedir(dir);
    return APR_SUCCESS;
}

/* ---- the connection ------------------------------------------------------ */

static void ix_close(sm_rend_index *ix)
{
    int i;

    for (i = 0; i < Q_N; i++) {
        sqlite3_finalize(ix->q[i]);
        ix->q[i] = NULL;
    }
    sqlite3_close(ix->db);
    ix->db = NULL;
}

static apr_status_t ix_cleanup(void *data)
{
    ix_close(data);
    return APR_SUCCESS;
}

/* A damaged index is removed: the next use builds another. */
static void ix_check(sm_rend_index *ix, int dfd, int rc)
{
    if ((rc & 0xff) != SQLITE_CORRUPT && (rc & 0xff) != SQLITE_NOTADB)
        return;
    ix_close(ix);
    (void)unlinkat(dfd, INDEX_NAME, 0);
    (void)unlinkat(dfd, INDEX_NAME "-wal", 0);
    (void)unlinkat(dfd, INDEX_NAME "-shm", 0);
}

/* Run a statement to its end (reset either way); its result code. */
static int run(sqlite3_stmt *q)
{
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        ;
    sqlite3_reset(q);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int meta_read(sm_rend_index *ix, meta *m)
{
    sqlite3_stmt *q = ix->q[Q_META];
    int rc = sqlite3_step(q);

    if (rc == SQLITE_ROW) {
        m->total = sqlite3_column_int64(q, 0);
        m->files = sqlite3_column_int64(q, 1);
        m->renders = sqlite3_column_int64(q, 2);
        rc = SQLITE_OK;
    }
    else if (rc == SQLITE_DONE) {
        rc = SQLITE_NOTFOUND;
    }
    sqlite3_reset(q);
    return rc;
}

static int put(sm_rend_index *ix, const char *name, apr_int64_t size,
               sm_rend_kind kind, apr_int64_t used)
{
    sqlite3_stmt *q = ix->q[Q_PUT];

    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 2, size);
    sqlite3_bind_int(q, 3, kind == SM_REND_HOST_SITE ? 0 : 1);
    sqlite3_bind_int64(q, 4, used);
    return run(q);
}

typedef struct {
    sm_rend_index *ix;
    int rc;
} build_ctx;

/* sm_rend_visit_fn: a file found in the directory, its kind read from
 * its header (sm_rendition.h), its last use its access time. */
static int build_visit(void *baton, int dfd, const char *name,
                       const struct stat *sb)
{
    build_ctx *b = baton;
    unsigned char kind = SM_REND_SITE;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC
                               | O_NONBLOCK);

    if (fd >= 0) {
        if (pread(fd, &kind, 1, SM_REND_KEY_BYTES) != 1)
            kind = SM_REND_SITE;
        close(fd);
    }
    b->rc = put(b->ix, name, (apr_int64_t)sb->st_size,
                kind == SM_REND_HOST_SITE ? SM_REND_HOST_SITE : SM_REND_SITE,
                ns_of(&sb->st_atim));
    return b->rc != SQLITE_OK;
}

/* Inside a write transaction: the rows become the directory's files. */
static int build(sm_rend_index *ix, int dfd, int *removed, int *scanned)
{
    build_ctx b = { ix, SQLITE_OK };
    int rc = sqlite3_exec(ix->db, "DELETE FROM rend", NULL, NULL, NULL);

    if (rc != SQLITE_OK)
        return rc;
    if (sm_rend_scan(dfd, build_visit, &b, removed, scanned) != APR_SUCCESS)
        return SQLITE_IOERR;
    return b.rc != SQLITE_OK ? b.rc : run(ix->q[Q_SWEPT]);
}

static int begin(sm_rend_index *ix)
{
    return sqlite3_exec(ix->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
}

/* Commit when rc is SQLITE_OK, else roll back; rc or the commit's. */
static int end(sm_rend_index *ix, int rc)
{
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(ix->db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        (void)sqlite3_exec(ix->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* The schema, the statements, and a new index's rows. */
static int ix_init(sm_rend_index *ix, int dfd, int *scanned)
{
    struct stat sb;
    meta m;
    int rc, i, removed = 0;

    sqlite3_busy_timeout(ix->db, BUSY_MS);
    if ((rc = sqlite3_exec(ix->db, schema, NULL, NULL, NULL)) != SQLITE_OK)
        return rc;
    for (i = 0; i < Q_N; i++)
        if ((rc = sqlite3_prepare_v3(ix->db, queries[i], -1,
                                     SQLITE_PREPARE_PERSISTENT, &ix->q[i],
                                     NULL)) != SQLITE_OK)
            return rc;
    if (fstatat(dfd, INDEX_NAME, &sb, AT_SYMLINK_NOFOLLOW) != 0
        || !S_ISREG(sb.st_mode))
        return SQLITE_CANTOPEN;
    ix->dev = sb.st_dev;
    ix->ino = sb.st_ino;
    if ((rc = begin(ix)) != SQLITE_OK)
        return rc;
    rc = meta_read(ix, &m);
    if (rc == SQLITE_NOTFOUND) {       /* new: made from the files */
        rc = sqlite3_exec(ix->db, "INSERT INTO meta VALUES (1, 0, 0, 0)",
                          NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            rc = build(ix, dfd, &removed, scanned);
    }
    return end(ix, rc);
}

/* The connection to the index in the directory now; -1 without one. */
static int ix_open(sm_rend_index *ix, int dfd, int *scanned)
{
    struct stat sb;
    int rc;

    if (ix->db) {
        if (fstatat(dfd, INDEX_NAME, &sb, AT_SYMLINK_NOFOLLOW) == 0
            && sb.st_dev == ix->dev && sb.st_ino == ix->ino)
            return 0;
        ix_close(ix);           /* removed or replaced */
    }
    rc = sqlite3_open_v2(ix->path, &ix->db, SQLITE_OPEN_READWRITE
                         | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW
                         | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK)
        rc = ix_init(ix, dfd, scanned);
    if (rc != SQLITE_OK) {
        ix_check(ix, dfd, rc);
        ix_close(ix);
        return -1;
    }
    return 0;
}

apr_status_t sm_rend_index_create(sm_rend_index **out, apr_pool_t *p,
                                  const char *path)
{
    sm_rend_index *ix = apr_pcalloc(p, sizeof(*ix));
    apr_status_t rv;

    ix->path = apr_pstrcat(p, path, "/" INDEX_NAME, NULL);
    if ((rv = apr_thread_mutex_create(&ix->lock, APR_THREAD_MUTEX_DEFAULT,
                                      p)) != APR_SUCCESS)
        return rv;
    apr_pool_cleanup_register(p, ix, ix_cleanup, apr_pool_cleanup_null);
    *out = ix;
    return APR_SUCCESS;
}

/* ---- using it ------------------------------------------------------------ */

apr_status_t sm_rend_index_commit(sm_rend_index *ix, int dfd,
                                  const char *const tmp[2],
                                  const char *const name[2],
                                  const apr_off_t size[2],
                                  sm_rend_kind kind)
{
    apr_status_t rv = APR_SUCCESS;
    int i, done = 0, tx, rc = SQLITE_OK;
    apr_int64_t now;

    apr_thread_mutex_lock(ix->lock);
    /* A build here is reported by the next sm_rend_index_evict. */
    tx = ix_open(ix, dfd, &ix->scanned) == 0 && begin(ix) == SQLITE_OK;
    /* Renamed inside the transaction: the row is the last writer's. */
    for (i = 0; i < 2 && rv == APR_SUCCESS; i++) {
        if (renameat(dfd, tmp[i], dfd, name[i]) != 0)
            rv = errno;
        else
            done++;
    }
    if (tx) {
        now = now_ns();
        for (i = 0; i < done && rc == SQLITE_OK; i++)
            rc = put(ix, name[i], (apr_int64_t)size[i], kind, now);
        if (rc == SQLITE_OK)
            rc = run(ix->q[Q_RENDERED]);
        ix_check(ix, dfd, end(ix, rc));
    }
    apr_thread_mutex_unlock(ix->lock);
    return rv;
}

/* The next file to remove: 1 with its name, size and use, 0 when none,
 * -1 on error (*rc). */
static int victim(sm_rend_index *ix, char *name, apr_size_t len,
                  apr_int64_t *size, apr_int64_t *used, int *rc)
{
    sqlite3_stmt *q = ix->q[Q_VICTIM];
    int found = 0;

    *rc = sqlite3_step(q);
    if (*rc == SQLITE_ROW) {
        apr_cpystrn(name, (const char *)sqlite3_column_text(q, 0), len);
        *size = sqlite3_column_int64(q, 1);
        *used = sqlite3_column_int64(q, 2);
        *rc = SQLITE_OK;
        found = 1;
    }
    else if (*rc == SQLITE_DONE) {
        *rc = SQLITE_OK;
    }
    sqlite3_reset(q);
    return *rc == SQLITE_OK ? found : -1;
}

static int named(sm_rend_index *ix, int which, const char *name,
                 apr_int64_t v)
{
    sqlite3_stmt *q = ix->q[which];

    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    if (which == Q_USED)
        sqlite3_bind_int64(q, 2, v);
    return run(q);
}

/* Inside a write transaction: remove files until the total fits.  A
 * file used since its row was written (its access time moved by a hit)
 * gets its row's use moved instead (the index's LRU order). */
static int shrink(sm_rend_index *ix, int dfd, apr_int64_t total,
                  apr_int64_t max_bytes, int *removed)
{
    char name[NAME_MAX + 1];
    apr_int64_t size, used;
    struct stat sb;
    int rc = SQLITE_OK;

    while (total > max_bytes
           && victim(ix, name, sizeof(name), &size, &used, &rc) > 0) {
        int st = fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW);

        if (st == 0 && S_ISREG(sb.st_mode) && ns_of(&sb.st_atim) > used) {
            if ((rc = named(ix, Q_USED, name, ns_of(&sb.st_atim)))
                != SQLITE_OK)
                break;
            continue;
        }
        /* Gone already, or not a regular file (never ours: the entry
         * itself goes, never what a link points at). */
        if (st == 0 && !S_ISDIR(sb.st_mode) && unlinkat(dfd, name, 0) == 0)
            (*removed)++;
        if ((rc = named(ix, Q_DEL, name, 0)) != SQLITE_OK)
            break;
        total -= size;
    }
    return rc;
}

apr_status_t sm_rend_index_evict(sm_rend_index *ix, int dfd,
                                 apr_off_t max_bytes, int *removed,
                                 int *scanned)
{
    meta m;
    int rc;

    apr_thread_mutex_lock(ix->lock);
    *scanned += ix->scanned;
    ix->scanned = 0;
    if (ix_open(ix, dfd, scanned) != 0) {
        apr_thread_mutex_unlock(ix->lock);
        return APR_ENOTIMPL;
    }
    if ((rc = begin(ix)) == SQLITE_OK) {
        rc = meta_read(ix, &m);
        /* The directory read once every (files + SM_REND_SWEEP) renders:
         * O(1) amortised, and what the index cannot see (a crashed
         * writer's temporary files, files removed by hand) is righted. */
        if (rc == SQLITE_OK && m.renders >= m.files + SM_REND_SWEEP) {
            rc = build(ix, dfd, removed, scanned);
            if (rc == SQLITE_OK)
                rc = meta_read(ix, &m);
        }
        if (rc == SQLITE_OK)
            rc = shrink(ix, dfd, m.total, (apr_int64_t)max_bytes, removed);
        ix_check(ix, dfd, end(ix, rc));
    }
    /* Closed at the end of each render (this is its last use of the
     * index): a server of many vhosts, each with its own directory, keeps
     * no descriptors open for them between renders, which are rare. */
    ix_close(ix);
    apr_thread_mutex_unlock(ix->lock);
    /* Busy past BUSY_MS: the next render evicts. */
    return APR_SUCCESS;
}
