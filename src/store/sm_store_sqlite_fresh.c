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

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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
