/* SPDX-License-Identifier: Apache-2.0 */
/* bench/writer_floor.c: the floor of the writer's new URL on SQLite, a
 * row of the urls table written as sm_store_sqlite_batch.c writes it,
 * without the module (bench/RESULTS.md, issue 35).
 *
 *   writer_floor DB N ROWS VARIANT
 *
 * N new rows, ROWS to an INSERT ... ON CONFLICT(site_id, url) DO NOTHING,
 * 1,024 a transaction, the urls table of the store's schema (14 columns,
 * urls_by_url and urls_published) with the pragmas the module sets (WAL,
 * synchronous NORMAL, cell_size_check).  Keys "/p/NNNNNNN.html" in order.
 * VARIANT is a list of words:
 *   shared   the site id bound once a statement, last_seen = first_seen
 *            (as the module binds them)
 *   autoid   ids bound NULL: SQLite numbers the rows (the module's run
 *            that follows the largest stored id)
 *   pre      ten rows "/z/..." stored first, so that every new key goes
 *            inside the index, not at its end (as bench/instr's crawl)
 *   noidx    no (site_id, url) index (and no ON CONFLICT)
 *   hash     a unique 64-bit hash of the URL (INTEGER) instead
 *   p1k p8k p16k  the page size
 * Build: cc -O2 -o writer_floor bench/writer_floor.c -lsqlite3; count with
 * valgrind --tool=callgrind at two N and take the difference a row. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRE_ROWS \
    " WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c" \
    " WHERE x < 10) SELECT x, 1, printf('/z/%04d.html', x), 1, 0, 0, 0, 60"

static void ex(sqlite3 *db, const char *sql)
{
    char *err = NULL;

    if (sqlite3_exec(db, sql, 0, 0, &err) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", sql, err);
        exit(1);
    }
}

static int has(const char *v, const char *w)
{
    return strstr(v, w) != NULL;
}

static void schema(sqlite3 *db, const char *v)
{
    if (has(v, "p8k"))
        ex(db, "PRAGMA page_size = 8192");
    if (has(v, "p16k"))
        ex(db, "PRAGMA page_size = 16384");
    if (has(v, "p1k"))
        ex(db, "PRAGMA page_size = 1024");
    ex(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
           "PRAGMA wal_autocheckpoint = 1000;"
           "PRAGMA journal_size_limit = 4194304;"
           "PRAGMA cell_size_check = ON");
    ex(db, "CREATE TABLE urls(id INTEGER PRIMARY KEY, site_id INTEGER NOT NULL,"
           " url TEXT NOT NULL, page INTEGER NOT NULL, lastmod INTEGER NOT NULL,"
           " etag TEXT, first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,"
           " xml_len INTEGER NOT NULL, title TEXT, alternates TEXT,"
           " held INTEGER NOT NULL DEFAULT 0, description TEXT,"
           " published INTEGER NOT NULL DEFAULT 0)");
    if (has(v, "hash"))
        ex(db, "ALTER TABLE urls ADD COLUMN h INTEGER NOT NULL DEFAULT 0;"
               "CREATE UNIQUE INDEX urls_by_hash ON urls(h)");
    else if (!has(v, "noidx"))
        ex(db, "CREATE UNIQUE INDEX urls_by_url ON urls(site_id, url)");
    ex(db, "CREATE INDEX urls_published ON urls(published) WHERE published > 0");
    if (has(v, "pre") && has(v, "hash"))
        ex(db, "INSERT INTO urls(id, site_id, url, page, lastmod, first_seen,"
               " last_seen, xml_len, h)" PRE_ROWS ", -x FROM c");
    else if (has(v, "pre"))
        ex(db, "INSERT INTO urls(id, site_id, url, page, lastmod, first_seen,"
               " last_seen, xml_len)" PRE_ROWS " FROM c");
}

/* The INSERT of r rows; *per: values a row. */
static void statement(char *sql, int r, const char *v, int *per)
{
    int hash = has(v, "hash"), shared = hash || has(v, "shared"), k;
    char *p = sql;

    *per = hash ? 15 : 14;
    p += sprintf(p, "INSERT INTO urls(id, site_id, url, page, lastmod, etag,"
                 " first_seen, last_seen, xml_len, title, alternates, held,"
                 " description, published%s) VALUES ", hash ? ", h" : "");
    for (k = 0; k < r; k++) {
        int b = k * *per;

        if (shared)
            p += sprintf(p, "%s(?%d,?2,?%d,?%d,?%d,?%d,?%d,?%d,?%d,?%d,?%d,"
                         "?%d,?%d,?%d", k ? "," : "", b + 1, b + 3, b + 4,
                         b + 5, b + 6, b + 7, b + 7, b + 9, b + 10, b + 11,
                         b + 12, b + 13, b + 14);
        else
            p += sprintf(p, "%s(?,?,?,?,?,?,?,?,?,?,?,?,?,?", k ? "," : "");
        p += sprintf(p, hash ? ",?%d)" : ")", b + 15);
    }
    if (hash)
        strcpy(p, " ON CONFLICT(h) DO NOTHING");
    else if (!has(v, "noidx"))
        strcpy(p, " ON CONFLICT(site_id, url) DO NOTHING");
}

static void bind_row(sqlite3_stmt *q, const char *v, int per, int k, int i,
                     long long id)
{
    int b = k * per, shared = per == 15 || has(v, "shared");
    char url[64];

    snprintf(url, sizeof url, "/p/%07d.html", i);
    if (has(v, "autoid"))
        sqlite3_bind_null(q, b + 1);
    else
        sqlite3_bind_int64(q, b + 1, id);
    if (!shared || k == 0)
        sqlite3_bind_int64(q, b + 2, 1);
    sqlite3_bind_text(q, b + 3, url, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(q, b + 4, 1 + i / 50000);
    sqlite3_bind_int64(q, b + 5, 1700000000);
    sqlite3_bind_null(q, b + 6);
    sqlite3_bind_int64(q, b + 7, 1700000000);
    if (!shared)
        sqlite3_bind_int64(q, b + 8, 1700000000);
    sqlite3_bind_int64(q, b + 9, 60);
    sqlite3_bind_null(q, b + 10);
    sqlite3_bind_null(q, b + 11);
    sqlite3_bind_int64(q, b + 12, 0);
    sqlite3_bind_null(q, b + 13);
    sqlite3_bind_int64(q, b + 14, 0);
    if (per == 15) {
        unsigned long long h = 1469598103934665603ULL ^ (unsigned)i;

        h *= 1099511628211ULL;
        h ^= h >> 29;
        h *= 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 32;
        sqlite3_bind_int64(q, b + 15, (long long)h);
    }
}

int main(int argc, char **argv)
{
    static char sql[1 << 16];
    sqlite3 *db;
    sqlite3_stmt *q;
    int n, r, i, k, per;
    long long id = (1LL << 40) + 1;

    if (argc != 5 || (n = atoi(argv[2])) < 1 || (r = atoi(argv[3])) < 1
        || r > 256) {
        fprintf(stderr, "usage: writer_floor DB N ROWS VARIANT\n");
        return 2;
    }
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    remove(argv[1]);
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE
                        | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL)
        != SQLITE_OK)
        return 1;
    schema(db, argv[4]);
    statement(sql, r, argv[4], &per);
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &q, NULL)) {
        fprintf(stderr, "%s\n", sqlite3_errmsg(db));
        return 1;
    }
    ex(db, "BEGIN");
    for (i = 0; i + r <= n; i += r) {
        for (k = 0; k < r; k++)
            bind_row(q, argv[4], per, k, i + k, id++);
        if (sqlite3_step(q) != SQLITE_DONE) {
            fprintf(stderr, "step: %s\n", sqlite3_errmsg(db));
            return 1;
        }
        sqlite3_reset(q);
        if ((i + r) % 1024 == 0) {
            ex(db, "COMMIT");
            ex(db, "BEGIN");
        }
    }
    ex(db, "COMMIT");
    sqlite3_finalize(q);
    sqlite3_close(db);
    return 0;
}
