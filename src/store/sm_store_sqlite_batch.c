/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_batch.c: new URLs written several to one INSERT.
 *
 * A new URL through its own INSERT cost the writer about 13,500
 * instructions, most of them SQLite's: the statement's start and end
 * (cursors opened and closed, the statement journal, reset) and a descent
 * of the urls_by_url index from its root for the conflict probe.  One
 * statement of 4, 16 or 32 rows pays the start and end once, and its
 * cursors stay where the last row left them, so a key after the last one on the
 * same leaf is found without a descent (bench/RESULTS.md, issue 35).
 *
 * A run is a stretch of the write's changes (up to 32) that are RECORDs
 * of one site without same_as (which may make a record a forget), no two
 * of them a
 * file's own URL and a URL under it (sm_sqlite_copies_leave), and ending
 * at a file's own URL whose copies leave.  Its rows get
 * their ids and pages as add_url would give them one by one.  ON CONFLICT
 * DO NOTHING leaves out a URL stored already (or the second of one URL
 * twice in the run): then the rows that went in are taken back and the
 * run goes one by one (the pages would differ otherwise), as do the next
 * RUNS_OFF changes, so that a write of URLs stored already (after a
 * restart, the processes' memories empty) pays for one run, not for every
 * run. */
#include "store/sm_store_sqlite.h"

#include <apr_strings.h>
#include <string.h>

#define RUN_MIN 4
#define RUN_MID 16
#define RUN_MAX 32
#define ROW_VALUES 12
#define PLAIN_VALUES 8
#define RUNS_OFF (4 * RUN_MAX)

typedef struct {
    sqlite3_int64 id, page, entry, lastmod, seen, held;
} planned;

static int runnable(const sm_change *c, const sm_change *first)
{
    return c->op == SM_CHANGE_RECORD && !c->same_as
           && (c->site == first->site
               || strcmp(c->site->base, first->site->base) == 0);
}

/* Is url under the file's own URL own ("own/...")? */
static int under(const char *url, const char *own)
{
    size_t len;

    if (own[0] != url[0])
        return 0;
    len = strlen(own);
    return strncmp(url, own, len) == 0 && url[len] == '/';
}

/* Is changes[k] under a file's own URL earlier in the run (from on), or a
 * file's own URL with an earlier one under it?  Its copies would then be
 * in the run: one by one, what each finds depends on the order. */
static int entangled(const sm_change *changes, int from, int k)
{
    const sm_change *c = &changes[k];
    int j;

    for (j = from; j < k; j++)
        if ((changes[j].file_url && under(c->url, changes[j].url))
            || (c->file_url && under(changes[j].url, c->url)))
            return 1;
    return 0;
}

/* A run's length: RUN_MAX, RUN_MID or RUN_MIN if cut at least that long,
 * else 0. */
static int run_size(int cut)
{
    return cut >= RUN_MAX ? RUN_MAX : cut >= RUN_MID ? RUN_MID
           : cut >= RUN_MIN ? RUN_MIN : 0;
}

/* How many of changes[i..] make a run: 0 or a run_size.  Until a file's
 * own URL comes, no two can be entangled: the pairs are not looked at. */
static int run_length(const sm_change *changes, int n, int i)
{
    int len, files = changes[i].file_url;

    if (n - i < RUN_MIN || !runnable(&changes[i], &changes[i]))
        return 0;
    for (len = 1; len < RUN_MAX && i + len < n; len++) {
        const sm_change *c = &changes[i + len];

        if (!runnable(c, &changes[i])
            || ((files || c->file_url) && entangled(changes, i, i + len)))
            break;
        files |= c->file_url;
    }
    return run_size(len);
}

/* The copies stored before the run of each file's own URL in it (none in
 * the run: entangled).  A file's own URL with copies ends the run (the
 * copies leave after it: a later row would otherwise get its page before
 * they did); *len is cut to match. */
static int find_copies(sqlite_store *s, const sm_change *c,
                       sqlite3_int64 site_id, int *len,
                       apr_array_header_t **found)
{
    int k, rc;

    for (k = 0; k < *len; k++) {
        if ((rc = sm_sqlite_copies_find(s, &c[k], site_id, &found[k]))
            != SQLITE_OK)
            return rc;
        if (found[k] && found[k]->nelts && k + 1 < *len)
            *len = run_size(k + 1);
    }
    return SQLITE_OK;
}

/* Ids and pages as add_url would give them one by one, on a copy of the
 * site's figures; 0 when the run does not fit (the site full, or its ids
 * used up): then it goes one by one. */
static int plan_run(const sm_change *c, const sm_tx_site *ts, int len,
                    planned *plan)
{
    sm_tx_site sim = *ts;
    int k;

    for (k = 0; k < len; k++, c++) {
        planned *p = &plan[k];

        if ((c->site->max_urls > 0 && sim.row.url_count >= c->site->max_urls)
            || sim.row.next_id >= SITE_FIRST_ID(sim.row.id + 1))
            return 0;
        p->entry = sm_tx_entry_bytes(c);
        p->page = sm_tx_choose_page(c->site, &sim, p->entry);
        p->id = sim.row.next_id++;
        if (p->page > sim.row.last_page) {
            sim.row.last_page = p->page;
            sim.last_count = sim.last_bytes = 0;
        }
        sim.last_count++;
        sim.last_bytes += p->entry;
        sim.row.url_count++;
        p->seen = apr_time_sec(c->seen);
        p->lastmod = c->last_modified ? apr_time_sec(c->last_modified)
                                      : p->seen;
        p->held = sm_tx_held_new(c);
    }
    return 1;
}

/* A run's INSERT of len rows: ?1 is the site's id, the same for every
 * row, and row k's ROW_VALUES values follow from ?(2 + k * ROW_VALUES) in
 * bind_row's order, its last_seen the value of its first_seen: two binds
 * a row fewer than one value a column.  A plain run (no row with
 * alternates, held, a description or a publication time, as most) has
 * those four as constants: PLAIN_VALUES a row. */
static sqlite3_stmt *run_stmt(sqlite_store *s, int len, int plain)
{
    int which = len == RUN_MAX ? STMT_URL_ADD_32
                : len == RUN_MID ? STMT_URL_ADD_16 : STMT_URL_ADD_4;
    char sql[256 + RUN_MAX * 96];     /* 2,967 bytes for RUN_MAX */
    apr_size_t at;
    int k;

    if (plain)
        which += STMT_URL_ADD_4_PLAIN - STMT_URL_ADD_4;
    if (s->stmt[which])
        return s->stmt[which];
    at = apr_cpystrn(sql, "INSERT INTO urls(id, site_id, url, page, lastmod,"
                     " etag, first_seen, last_seen, xml_len, title,"
                     " alternates, held, description, published) VALUES ",
                     sizeof(sql)) - sql;
    for (k = 0; k < len; k++) {
        int b = 1 + k * (plain ? PLAIN_VALUES : ROW_VALUES);

        at += apr_snprintf(sql + at, sizeof(sql) - at,
                           "%s(?%d,?1,?%d,?%d,?%d,?%d,?%d,?%d,?%d,?%d,",
                           k ? "," : "", b + 1, b + 2, b + 3, b + 4, b + 5,
                           b + 6, b + 6, b + 7, b + 8);
        at += plain ? apr_snprintf(sql + at, sizeof(sql) - at,
                                   "NULL,0,NULL,0)")
                    : apr_snprintf(sql + at, sizeof(sql) - at,
                                   "?%d,?%d,?%d,?%d)", b + 9, b + 10,
                                   b + 11, b + 12);
    }
    apr_cpystrn(sql + at, " ON CONFLICT(site_id, url) DO NOTHING",
                sizeof(sql) - at);
    if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
                           &s->stmt[which], NULL) != SQLITE_OK) {
        sm_sqlite_set_error(&s->base, "cannot prepare a statement", s->db);
        s->stmt[which] = NULL;
    }
    return s->stmt[which];
}

/* Has changes[i..i+len) none of the rarely set columns? */
static int run_plain(const sm_change *c, const planned *plan, int len)
{
    int k;

    for (k = 0; k < len; k++, c++)
        if (plan[k].held || SM_TX_ALTERNATES(c)
            || (c->description && *c->description) || c->published > 0)
            return 0;
    return 1;
}

/* Does the run's first id follow the largest stored (its site the last
 * with URLs, and its latest URL still there, as a rule)?  Then its rows
 * go in with id NULL: SQLite gives each the largest id plus one, which
 * is the planned id, and appends the row without the descent of the
 * table's b-tree an explicit id's check takes (about 1,100 instructions
 * a row, bench/RESULTS.md). */
static int ids_follow(sqlite_store *s, sqlite3_int64 first, int *follow)
{
    sqlite3_stmt *q = sm_sqlite_stmt(s, STMT_URL_MAX_ID);
    int rc;

    *follow = 0;
    if (!q)
        return SQLITE_ERROR;
    if ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        *follow = sqlite3_column_int64(q, 0) + 1 == first;
        rc = SQLITE_DONE;
    }
    return sm_sqlite_finish(s, q, rc, "cannot read the largest URL id");
}

static void bind_row(sqlite3_stmt *q, int k, const sm_change *c,
                     const planned *p, int follow, int plain)
{
    int b = 1 + k * (plain ? PLAIN_VALUES : ROW_VALUES);

    if (follow)
        sqlite3_bind_null(q, b + 1);
    else
        sqlite3_bind_int64(q, b + 1, p->id);
    sm_sqlite_text(q, b + 2, c->url);
    sqlite3_bind_int64(q, b + 3, p->page);
    sqlite3_bind_int64(q, b + 4, p->lastmod);
    sm_sqlite_text(q, b + 5, c->etag);
    sqlite3_bind_int64(q, b + 6, p->seen);
    sqlite3_bind_int64(q, b + 7, p->entry);
    sm_sqlite_text(q, b + 8, SM_TX_TITLE(c));
    if (plain)
        return;
    sm_sqlite_text(q, b + 9, SM_TX_ALTERNATES(c));
    sqlite3_bind_int64(q, b + 10, p->held);
    sm_sqlite_text(q, b + 11, c->description && *c->description
                              ? c->description : NULL);
    sqlite3_bind_int64(q, b + 12, c->published > 0
                                  ? apr_time_sec(c->published) : 0);
}

/* Fewer rows went in than the run had (a URL stored already, or one URL
 * twice): they are taken back, and the run goes one by one, as the
 * updates it holds need; so do the next RUNS_OFF changes. */
static int undo_run(sqlite_store *s, const planned *plan, int len)
{
    sqlite3_stmt *q = sm_sqlite_stmt(s, STMT_URL_UNDO);

    if (!q)
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, plan[0].id);
    sqlite3_bind_int64(q, 2, plan[len - 1].id);
    return sm_sqlite_run(s, q, "cannot take back URLs added");
}

/* What follows a row the INSERT took, as add_url, record and
 * sm_sqlite_apply_one do it for one. */
static int after_added(sqlite_store *s, sm_tx_site *ts, const sm_change *c,
                       const planned *p, const apr_array_header_t *found,
                       int i, sm_apply_stats *stats)
{
    int rc;

    stats->added++;
    /* Held: submitted once corroborated (sm_store_tx.h). */
    if (p->held)
        s->tx.held = 1;
    else if ((rc = sm_sqlite_indexnow_note(s, ts, c->url)) != SQLITE_OK)
        return rc;
    if ((rc = sm_sqlite_copies_forget(s, c, found, stats)) != SQLITE_OK
        || (c->images && (rc = sm_sqlite_images_put(s, ts, c)) != SQLITE_OK))
        return rc;
    sm_tx_held_count(&s->tx, &s->base, stats, i);
    return SQLITE_OK;
}

int sm_sqlite_add_run(sqlite_store *s, const sm_change *changes, int n,
                      int i, sm_apply_stats *stats, int *done)
{
    planned plan[RUN_MAX];
    apr_array_header_t *found[RUN_MAX];
    sm_tx_site *ts;
    sqlite3_stmt *q;
    int len = run_length(changes, n, i), k, rc, follow, plain;

    *done = 0;
    if (!len || i < s->runs_from)
        return SQLITE_OK;
    if ((rc = sm_sqlite_tx_site(s, changes[i].site, &ts)) != SQLITE_OK
        || (rc = sm_sqlite_last_page_known(s, ts)) != SQLITE_OK)
        return rc;
    if ((rc = find_copies(s, &changes[i], ts->row.id, &len, found))
        != SQLITE_OK)
        return rc;
    if (!len || !plan_run(&changes[i], ts, len, plan))
        return SQLITE_OK;
    if ((rc = ids_follow(s, plan[0].id, &follow)) != SQLITE_OK)
        return rc;
    plain = run_plain(&changes[i], plan, len);
    if (!(q = run_stmt(s, len, plain)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, ts->row.id);
    for (k = 0; k < len; k++)
        bind_row(q, k, &changes[i + k], &plan[k], follow, plain);
    /* Reset without clearing the bindings: every one is bound again
     * before the statement runs next (clearing 448 cost 2-3% a URL). */
    rc = sqlite3_step(q);
    sqlite3_reset(q);
    if (rc != SQLITE_DONE) {
        sm_sqlite_set_error(&s->base, "cannot add URLs", s->db);
        return rc;
    }
    /* ids SQLite chose lie in the planned range: max + 1 on, one a row
     * that went in */
    if (follow && sqlite3_changes(s->db) == len
        && sqlite3_last_insert_rowid(s->db) != plan[len - 1].id) {
        apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                     "new URLs did not get the ids planned");
        return SQLITE_ERROR;
    }
    if (sqlite3_changes(s->db) != len) {
        if ((rc = undo_run(s, plan, len)) != SQLITE_OK)
            return rc;
        s->runs_from = i + RUNS_OFF;
        return SQLITE_OK;
    }
    for (k = 0; k < len; k++) {
        sm_tx_added(&s->tx, ts, plan[k].page, plan[k].id, plan[k].entry,
                    plan[k].lastmod);
        sm_tx_seen(&s->tx, ts, plan[k].page, plan[k].seen);
    }
    for (k = 0; k < len; k++)
        if ((rc = after_added(s, ts, &changes[i + k], &plan[k], found[k],
                              i + k, stats)) != SQLITE_OK)
            return rc;
    *done = len;
    return SQLITE_OK;
}
