/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_fresh.c: a new store's schema in one script.
 *
 * A new file was brought to SM_SCHEMA_VERSION by running every schema
 * step in turn: tables made, altered, copied and renamed, each ALTER
 * parsing the whole schema again.  That cost about 14 million
 * instructions a store (4 to 5 ms), so 1,000 vhosts with a store each
 * took seconds at first start.  The steps are run once per process on an
 * in-memory database instead, and what they leave (sqlite_master's
 * statements, meta's rows) is the script every new file of that process
 * runs: the same objects, written as the steps leave them, so a new file
 * cannot differ from one the steps made (t/unit/test_store_sitecache
 * compares them with a store upgraded from schema 1).  When the steps
 * leave rows anywhere but meta, or anything fails, there is no script and
 * the steps run as before. */
#include "store/sm_store_sqlite.h"
#include "store/sm_store_sqlite_indexnow.h"

#include <apr_file_io.h>
#include <apr_portable.h>
#include <apr_strings.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char *script;            /* NULL: run the steps */

/* The template's meta rows but the two a new store makes for itself. */
#define FRESH_META \
    "INSERT INTO meta(key, value) VALUES" \
    "  ('store_id', lower(hex(randomblob(8))))," \
    "  ('created', CAST(strftime('%s','now') AS INTEGER));"

/* Append the first column of every row of sql, each followed by sep;
 * SQLITE_OK or the error. */
static int append_rows(sqlite3 *db, sqlite3_str *out, const char *sql,
                       const char *sep, int *rows)
{
    sqlite3_stmt *q;
    int rc;

    if ((rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL)) != SQLITE_OK)
        return rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(q, 0);
        if (v) {
            sqlite3_str_appendall(out, v);
            sqlite3_str_appendall(out, sep);
        }
        (*rows)++;
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Rows in any table but meta (and SQLite's own): 0 when there are none. */
static int rows_elsewhere(sqlite3 *db)
{
    sqlite3_stmt *q;
    int found = 1;

    if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE"
                           " type = 'table' AND name <> 'meta'"
                           " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
                           -1, &q, NULL) != SQLITE_OK)
        return 1;
    found = 0;
    while (!found && sqlite3_step(q) == SQLITE_ROW) {
        char *sql = sqlite3_mprintf("SELECT 1 FROM \"%w\" LIMIT 1",
                                    (const char *)sqlite3_column_text(q, 0));
        sqlite3_stmt *c;

        found = !sql || sqlite3_prepare_v2(db, sql, -1, &c, NULL) != SQLITE_OK;
        if (!found) {
            found = sqlite3_step(c) != SQLITE_DONE;
            sqlite3_finalize(c);
        }
        sqlite3_free(sql);
    }
    sqlite3_finalize(q);
    return found;
}

static void build(void)
{
    sqlite3 *db = NULL;
    sqlite3_str *out = NULL;
    int i, n = 0, kept = 0;
    char *text;

    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE
                        | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
        goto done;
    for (i = 0; i < SM_SCHEMA_VERSION; i++)
        if (sqlite3_exec(db, sm_sqlite_schema_step(i), NULL, NULL, NULL)
            != SQLITE_OK)
            goto done;
    if (rows_elsewhere(db))
        goto done;
    out = sqlite3_str_new(db);
    /* meta's two rows of the new store's own are there to be replaced */
    if (append_rows(db, out, "SELECT key FROM meta WHERE key IN"
                    " ('store_id', 'created')", "", &kept) != SQLITE_OK
        || kept != 2)
        goto done;
    sqlite3_str_reset(out);
    /* Tables first, then what is made on them, each as the steps left it. */
    if (append_rows(db, out, "SELECT sql FROM sqlite_master WHERE sql IS NOT"
                    " NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
                    " ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index'"
                    " THEN 1 ELSE 2 END, rowid", ";\n", &n) != SQLITE_OK
        || append_rows(db, out, "SELECT 'INSERT INTO meta(key, value) VALUES"
                       " (' || quote(key) || ', ' || quote(value) || ')'"
                       " FROM meta WHERE key NOT IN ('store_id', 'created')",
                       ";\n", &n) != SQLITE_OK)
        goto done;
    sqlite3_str_appendall(out, FRESH_META);
    if (sqlite3_str_errcode(out) == SQLITE_OK
        && (text = sqlite3_str_value(out)) != NULL)
        script = strdup(text);
done:
    if (out)
        sqlite3_free(sqlite3_str_finish(out));
    sqlite3_close(db);
}

const char *sm_sqlite_fresh_schema(void)
{
    pthread_once(&once, build);
    return script;
}

/* ---- a new file as a copy of a template ------------------------------------
 *
 * Running the script above in a new file still cost about 70 writes and 8
 * syncs a store (the WAL switch, the schema's commit, the checkpoint at
 * close): 4 to 7 ms each, so 1,000 vhosts with a store each waited seconds
 * at first start.  Instead, once per process, the script runs in an
 * in-memory database (with IndexNow's tables, the schema version and the
 * application id): the template.  Each new file is the template's image
 * (sqlite3_serialize, with the store's own meta rows set just before: its
 * id, when it was made), marked as a WAL file, written in one write to a
 * file of a name of its own in the store's directory made with O_EXCL
 * (never a file or link someone put there), synced, and linked to its
 * name: a crash leaves no half-made store under the name, and a store
 * another process made meanwhile stays (link fails with EEXIST).  The
 * module's first start makes all its missing stores so and syncs them
 * together, once per file system (sm_store_make_new). */

static pthread_once_t tmpl_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t tmpl_lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3 *tmpl;           /* NULL: no template, the script runs */

/* At exit (the template is the process's: valgrind and ASan see it
 * freed); a copy made after it fails and the store is made the old way. */
static void close_template(void)
{
    pthread_mutex_lock(&tmpl_lock);
    sqlite3_close(tmpl);
    tmpl = NULL;
    pthread_mutex_unlock(&tmpl_lock);
}

static void build_template(void)
{
    const char *sql = sm_sqlite_fresh_schema();
    char *ids;
    sqlite3 *db;

    if (!sql || sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE
                                | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
        return;
    ids = sqlite3_mprintf("PRAGMA user_version = %d;"
                          " PRAGMA application_id = %d;",
                          SM_SCHEMA_VERSION, SM_APPLICATION_ID);
    if (ids && sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK
        && sqlite3_exec(db, sm_sqlite_indexnow_tables, NULL, NULL, NULL)
           == SQLITE_OK
        && sqlite3_exec(db, ids, NULL, NULL, NULL) == SQLITE_OK
        && atexit(close_template) == 0)
        tmpl = db;
    else
        sqlite3_close(db);
    sqlite3_free(ids);
}

/* Offsets of the database header's write and read versions: 2 marks a
 * WAL file (https://www.sqlite.org/fileformat2.html#database_header),
 * what PRAGMA journal_mode = WAL writes there. */
#define HEADER_WRITE_VERSION 18
#define HEADER_READ_VERSION 19

/* The template's image with this store's own meta rows (its id, when it
 * was made), marked as a WAL file, written to f (made empty, ours) in
 * one write: no SQL parsed, no journal, nothing synced. */
static apr_status_t write_template(apr_file_t *f)
{
    apr_status_t rv = APR_EGENERAL;
    sqlite3_int64 size = 0;
    unsigned char *image = NULL;
    apr_size_t len;

    pthread_mutex_lock(&tmpl_lock);
    if (tmpl && sqlite3_exec(tmpl, "UPDATE meta SET value = CASE key"
                     " WHEN 'store_id' THEN lower(hex(randomblob(8)))"
                     " ELSE CAST(strftime('%s','now') AS INTEGER) END"
                     " WHERE key IN ('store_id', 'created')",
                     NULL, NULL, NULL) == SQLITE_OK)
        image = sqlite3_serialize(tmpl, "main", &size, 0);
    pthread_mutex_unlock(&tmpl_lock);
    if (image && size > HEADER_READ_VERSION) {
        image[HEADER_WRITE_VERSION] = image[HEADER_READ_VERSION] = 2;
        len = (apr_size_t)size;
        rv = apr_file_write_full(f, image, len, NULL);
    }
    sqlite3_free(image);
    return rv;
}

/* A copy made (not synced yet) at tmp, for path; f open on it. */
typedef struct {
    const char *path, *tmp;
    apr_file_t *f;
} made_copy;

static apr_status_t make_copy(apr_pool_t *p, const char *path,
                              made_copy *out)
{
    static volatile apr_uint32_t seq;
    apr_status_t rv;

    pthread_once(&tmpl_once, build_template);
    if (!tmpl)
        return APR_ENOTIMPL;
    out->path = path;
    out->tmp = apr_psprintf(p, "%s.new-%ld-%u", path, (long)getpid(),
                            (unsigned)__atomic_add_fetch(&seq, 1,
                                                         __ATOMIC_RELAXED));
    if ((rv = apr_file_open(&out->f, out->tmp, APR_FOPEN_WRITE
                            | APR_FOPEN_CREATE | APR_FOPEN_EXCL,
                            APR_FPROT_UREAD | APR_FPROT_UWRITE
                            | APR_FPROT_GREAD | APR_FPROT_WREAD, p))
        != APR_SUCCESS)
        return rv;
    if ((rv = write_template(out->f)) != APR_SUCCESS) {
        apr_file_close(out->f);
        apr_file_remove(out->tmp, p);
        return rv;
    }
    return APR_SUCCESS;
}

/* The synced copy under its name (EEXIST: another process made the store
 * meanwhile; it is used), the copy's own name gone. */
static apr_status_t put_copy(apr_pool_t *p, made_copy *c, apr_status_t rv)
{
    apr_file_close(c->f);
    if (rv == APR_SUCCESS && link(c->tmp, c->path) != 0 && errno != EEXIST)
        rv = APR_FROM_OS_ERROR(errno);
    apr_file_remove(c->tmp, p);
    return rv;
}

/* Sync copy i: syncfs its file system unless an earlier copy's was on
 * the same one (Linux); elsewhere fsync. */
static apr_status_t sync_once(const made_copy *c, const char *made, int i)
{
#ifdef __linux__
    struct stat sb, other;
    apr_os_file_t fd, ofd;
    int j;

    if (apr_os_file_get(&fd, c[i].f) != APR_SUCCESS || fstat(fd, &sb) != 0)
        return APR_EGENERAL;
    for (j = 0; j < i; j++)
        if (made[j] && apr_os_file_get(&ofd, c[j].f) == APR_SUCCESS
            && fstat(ofd, &other) == 0 && other.st_dev == sb.st_dev)
            return APR_SUCCESS;
    return syncfs(fd) == 0 ? APR_SUCCESS : APR_FROM_OS_ERROR(errno);
#else
    (void)made;
    return apr_file_sync(c[i].f);
#endif
}

int sm_sqlite_is_new(apr_pool_t *p, const char *path)
{
    struct stat sb;

    return lstat(path, &sb) != 0 && errno == ENOENT
           && lstat(apr_pstrcat(p, path, "-wal", NULL), &sb) != 0
           && errno == ENOENT;
}

int sm_sqlite_make_files(apr_pool_t *p, const char *const *paths, int n,
                         char *made)
{
    made_copy *c = apr_pcalloc(p, sizeof(*c) * (n > 0 ? (apr_size_t)n : 1));
    int i, count = 0, synced = 1;

    for (i = 0; i < n; i++) {
        made[i] = 0;
        if (sm_sqlite_is_new(p, paths[i])
            && make_copy(p, paths[i], &c[i]) == APR_SUCCESS)
            made[i] = 1;
    }
    /* One sync of each file system for all the copies: the sync that
     * made a store cost most of its time. */
    for (i = 0; i < n; i++)
        if (made[i] && sync_once(c, made, i) != APR_SUCCESS)
            synced = 0;
    for (i = 0; i < n; i++)
        if (made[i]) {
            made[i] = put_copy(p, &c[i], synced ? APR_SUCCESS : APR_EGENERAL)
                      == APR_SUCCESS;
            count += made[i];
        }
    return count;
}

apr_status_t sm_sqlite_make_file(apr_pool_t *p, const char *path)
{
    made_copy c;
    apr_status_t rv = make_copy(p, path, &c);

    if (rv != APR_SUCCESS)
        return rv;
    return put_copy(p, &c, apr_file_sync(c.f));
}
