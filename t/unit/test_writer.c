/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of one writer serving many stores (sm_writer_create): one
 * thread for all, each store gets exactly its own URLs, a failing store
 * neither blocks nor loses the others' changes, an idle store file is
 * closed and opened again, and one replaced or deleted meanwhile is
 * noticed. */
#include "unit.h"

#include "record/sm_recorder.h"
#include "record/sm_recorder_int.h"

#include <apr_thread_proc.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Errors logged about the store named "good.db". */
static int good_errors;

static void log_good(void *baton, sm_log_level level, apr_status_t rv,
                     const char *msg)
{
    (void)baton; (void)rv;
    if (level <= SM_LOG_ERR && strstr(msg, "good.db"))
        good_errors++;
}

static const sm_logger quiet = { log_good, NULL, SM_LOG_DEBUG };

static sm_recorder *join_every(apr_pool_t *p, sm_writer *w,
                               const char *path, const sm_site_conf *site,
                               apr_interval_time_t idle,
                               apr_interval_time_t flush_interval)
{
    sm_recorder *rec;
    sm_recorder_conf conf = { path, flush_interval, 0, 0, 200,
                              &quiet, NULL, NULL, w, idle,
                              /* retries back off from 5 ms to 40 ms:
                               * these tests are about the queue, not the
                               * backoff's pace (test_recorder_fault.c);
                               * a full queue of a failing store's changes
                               * waits for its retry, and 200 ms took the
                               * 300 changes of
                               * test_failing_store_does_not_hold_up_others
                               * past 15 s under valgrind */
                              apr_time_from_msec(5),
                              apr_time_from_msec(40), 0 };

    assert_int_equal(sm_recorder_create(&rec, p, &conf), APR_SUCCESS);
    sm_recorder_add_site(rec, site);
    return rec;
}
#define join_in(p, w, path, site, idle) \
    join_every(p, w, path, site, idle, apr_time_from_msec(50))
#define join(u, w, path, site, idle) join_in((u)->pool, w, path, site, idle)

static void add(sm_recorder *rec, const sm_site_conf *site, const char *url,
                const char *etag)
{
    sm_change c = { SM_CHANGE_RECORD, site, url, 0, etag, apr_time_now(),
                    NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
    sm_recorder_add(rec, &c, 0);
}

static sqlite3_int64 count(const char *path, const char *sql)
{
    /* The writer may be creating the file and its schema right now. */
    if (access(path, F_OK) != 0
        || sql_int(path, "SELECT count(*) FROM sqlite_master WHERE "
                         "name = 'urls'") != 1)
        return -1;
    return sql_int(path, sql);
}

/* Threads of this process named sitemap-writer. */
static int writer_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    char path[300], comm[64];
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d))) {
        FILE *f;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        if ((f = fopen(path, "r"))) {
            if (fgets(comm, sizeof(comm), f)
                && strncmp(comm, "sitemap-writer", 14) == 0)
                n++;
            fclose(f);
        }
    }
    closedir(d);
    return n;
}

static void wait_for(int (*cond)(void *), void *baton)
{
    int i;

    for (i = 0; i < 400 && !cond(baton); i++)
        apr_sleep(apr_time_from_msec(25));
    assert_true(cond(baton));
}

typedef struct {
    const char *path;
    const char *where;
    sqlite3_int64 want;
} expect;

static int has(void *baton)
{
    expect *e = baton;
    return count(e->path, e->where) == e->want;
}

static int closed(void *baton)
{
    return unit_open_on(baton) == 0;
}

/* More than a writer keeps open at once (32). */
#define STORES 80

static void test_one_thread_for_many_stores(void **state)
{
    unit_ctx *u = *state;
    sm_writer *w;
    sm_recorder *rec[STORES];
    sm_site_conf site[STORES];
    const char *path[STORES];
    int i;
    char url[32];

    assert_int_equal(sm_writer_create(&w, u->pool, 100, 1000), APR_SUCCESS);
    for (i = 0; i < STORES; i++) {
        memset(&site[i], 0, sizeof(site[i]));
        site[i].base = apr_psprintf(u->pool, "http://s%d.example", i);
        site[i].page_size = 50000;
        path[i] = apr_psprintf(u->pool, "%s/s%d.db", u->dir, i);
        rec[i] = join(u, w, path[i], &site[i], 0);
    }
    assert_int_equal(writer_threads(), 0);
    assert_int_equal(sm_recorder_start(rec[0]), APR_SUCCESS);
    assert_int_equal(sm_recorder_start(rec[7]), APR_SUCCESS);
    apr_sleep(apr_time_from_msec(50));      /* the thread names itself */
    assert_int_equal(writer_threads(), 1);
    /* Store i gets i + 1 URLs, one of them the same path as everyone's. */
    for (i = 0; i < STORES; i++) {
        int j;
        add(rec[i], &site[i], "/shared", NULL);
        for (j = 0; j < i; j++) {
            snprintf(url, sizeof(url), "/only-%d-%d", i, j);
            add(rec[i], &site[i], url, NULL);
        }
    }
    /* Written in turn, never more than 32 files (3 descriptors each) open. */
    for (i = 0; i < 40; i++) {
        int n = unit_open_on(apr_pstrcat(u->pool, u->dir, "/s", NULL));
        if (n > 32 * 3)
            fail_msg("%d descriptors open on the stores", n);
        apr_sleep(apr_time_from_msec(10));
    }
    sm_recorder_stop(rec[3]);
    assert_int_equal(unit_open_on(u->dir), 0);
    for (i = 0; i < STORES; i++) {
        assert_int_equal(count(path[i], "SELECT count(*) FROM urls"), i + 1);
        assert_int_equal(count(path[i], apr_psprintf(u->pool,
                               "SELECT count(*) FROM urls WHERE url NOT "
                               "LIKE '/only-%d-%%' AND url != '/shared'", i)),
                         0);
    }
}

/* A writer that falls behind while it commits (here: transactions of 10
 * changes, each commit held 2 ms, against a producer that never pauses)
 * is waited for once 2 x batch_size changes are queued beside the batch
 * it writes: the queue, so the store's lag, stays about a batch instead
 * of growing to queue_max. */
static int slow_commit(void *baton)
{
    (void)baton;
    apr_sleep(apr_time_from_msec(2));
    return 0;
}

/* Every connection opened from now on (the writer's) commits slowly. */
static int slow_commits(sqlite3 *db, char **err,
                        const struct sqlite3_api_routines *api)
{
    (void)err; (void)api;
    sqlite3_commit_hook(db, slow_commit, NULL);
    return SQLITE_OK;
}
#define SLOW_COMMITS ((void (*)(void))slow_commits)

static void test_requests_wait_for_a_writer_behind(void **state)
{
    unit_ctx *u = *state;
    sm_writer *w;
    sm_recorder *rec;
    sm_recorder_stats st;
    sm_site_conf site;
    const char *path = apr_psprintf(u->pool, "%s/behind.db", u->dir);
    expect written = { path, "SELECT count(*) FROM urls", 10 };
    int i, most = 0;
    char url[32];

    assert_int_equal(sqlite3_auto_extension(SLOW_COMMITS), SQLITE_OK);
    assert_int_equal(sm_writer_create(&w, u->pool, 10, 5000), APR_SUCCESS);
    memset(&site, 0, sizeof(site));
    site.base = "http://behind.example";
    site.page_size = 50000;
    /* Batches written when full, not by the clock: the writer's walk over
     * its stores (not waited for, by design) then comes only at its
     * start, not every 50 ms in the middle of the producer's run. */
    rec = join_every(u->pool, w, path, &site, 0, apr_time_from_sec(3600));
    assert_int_equal(sm_recorder_start(rec), APR_SUCCESS);
    for (i = 0; i < 10; i++) {          /* the store is made, a commit */
        snprintf(url, sizeof(url), "/b%d", i);
        add(rec, &site, url, NULL);
    }
    wait_for(has, &written);
    for (i = 10; i < 3000; i++) {
        int n;
        snprintf(url, sizeof(url), "/b%d", i);
        add(rec, &site, url, NULL);
        apr_thread_mutex_lock(w->lock);
        n = w->pending->items->nelts;
        apr_thread_mutex_unlock(w->lock);
        most = n > most ? n : most;
    }
    sm_recorder_stop(rec);
    sqlite3_cancel_auto_extension(SLOW_COMMITS);
    sm_recorder_get_stats(rec, &st);
    assert_int_equal(count(path, "SELECT count(*) FROM urls"), 3000);
    assert_int_equal(st.dropped, 0);
    assert_true(st.waits > 0);
    if (most > 200)
        fail_msg("%d changes queued at once (the writer's catch_up: 20)",
                 most);
}

/* The writer's walk over its stores (expiry, idle closes, the readers'
 * upkeep: here a hook that takes 400 ms) is not waited for, however many
 * changes queue up meanwhile. */
static volatile int in_hook;

static void slow_upkeep(void *baton, apr_time_t now)
{
    (void)baton; (void)now;
    __atomic_store_n(&in_hook, 1, __ATOMIC_SEQ_CST);
    apr_sleep(apr_time_from_msec(400));
    __atomic_store_n(&in_hook, 0, __ATOMIC_SEQ_CST);
}

static void test_upkeep_is_not_waited_for(void **state)
{
    unit_ctx *u = *state;
    sm_writer *w;
    sm_recorder *rec;
    sm_recorder_stats before, after;
    sm_site_conf site;
    const char *path = apr_psprintf(u->pool, "%s/upkeep.db", u->dir);
    expect written = { path, "SELECT count(*) FROM urls", 10 };
    int i, n = 10, tries, clean = 0;
    char url[32];

    assert_int_equal(sm_writer_create(&w, u->pool, 10, 5000), APR_SUCCESS);
    memset(&site, 0, sizeof(site));
    site.base = "http://upkeep.example";
    site.page_size = 50000;
    /* Idle close 400 ms: the walk (and the hook) every 200 ms. */
    rec = join(u, w, path, &site, apr_time_from_msec(400));
    sm_writer_upkeep(w, slow_upkeep, NULL);
    assert_int_equal(sm_recorder_start(rec), APR_SUCCESS);
    for (i = 0; i < 10; i++) {          /* a commit: the writer works */
        snprintf(url, sizeof(url), "/u%d", i);
        add(rec, &site, url, NULL);
    }
    wait_for(has, &written);
    /* While the hook runs, 200 changes (catch-up: 20) go in without a
     * wait.  The hook may end while they do: tried again then. */
    for (tries = 0; tries < 20 && !clean; tries++) {
        while (!__atomic_load_n(&in_hook, __ATOMIC_SEQ_CST))
            apr_sleep(apr_time_from_msec(1));
        sm_recorder_get_stats(rec, &before);
        for (i = 0; i < 200; i++, n++) {
            snprintf(url, sizeof(url), "/u%d", n);
            add(rec, &site, url, NULL);
        }
        sm_recorder_get_stats(rec, &after);
        if (__atomic_load_n(&in_hook, __ATOMIC_SEQ_CST)) {
            assert_int_equal(after.waits, before.waits);
            clean = 1;
        }
    }
    assert_true(clean);
    sm_recorder_stop(rec);
    assert_int_equal(count(path, "SELECT count(*) FROM urls"), n);
}

/* A store that cannot be opened keeps its changes for retry, and the other
 * stores' changes go in meanwhile, without waiting, even when what the
 * failing store keeps fills the queue. */
static void test_failing_store_does_not_hold_up_others(void **state)
{
    unit_ctx *u = *state;
    sm_writer *w;
    sm_site_conf bad = { "http://bad.example", 50000, 0, 0, NULL, 0 };
    sm_site_conf good = { "http://good.example", 50000, 0, 0, NULL, 0 };
    const char *bad_dir = apr_pstrcat(u->pool, u->dir, "/later", NULL);
    const char *bad_path = apr_pstrcat(u->pool, bad_dir, "/bad.db", NULL);
    const char *good_path = apr_pstrcat(u->pool, u->dir, "/good.db", NULL);
    sm_recorder *rb, *rg;
    sm_recorder_stats st;
    expect e = { good_path, "SELECT count(*) FROM urls", 300 };
    apr_time_t t0;
    char url[32];
    int i;

    good_errors = 0;
    assert_int_equal(sm_writer_create(&w, u->pool, 5, 20), APR_SUCCESS);
    rb = join(u, w, bad_path, &bad, 0);
    rg = join(u, w, good_path, &good, 0);
    assert_int_equal(sm_recorder_start(rg), APR_SUCCESS);
    for (i = 0; i < 20; i++) {
        snprintf(url, sizeof(url), "/b%d", i);
        add(rb, &bad, url, NULL);
    }
    apr_sleep(apr_time_from_msec(300));     /* failed: kept for retry */
    t0 = apr_time_now();
    for (i = 0; i < 300; i++) {
        if (i % 5 == 0) {
            /* Ahead of the good store's in the batch. */
            snprintf(url, sizeof(url), "/b-more%d", i);
            add(rb, &bad, url, NULL);
        }
        snprintf(url, sizeof(url), "/g%d", i);
        add(rg, &good, url, NULL);
    }
    /* 300 changes through a queue of 20 that the bad store fills: each
     * wait is a batch written, never the 1 s backstop of a lost wakeup. */
    assert_true(apr_time_now() - t0 < apr_time_from_sec(15));
    wait_for(has, &e);
    sm_recorder_get_stats(rg, &st);
    assert_int_equal(st.dropped, 0);
    assert_int_equal(good_errors, 0);
    /* The bad store comes back: what it kept goes in. */
    mkdir(bad_dir, 0755);
    {
        /* (What the failing store kept is dropped, and counted, when the
         * working stores' changes fill the queue meanwhile: the queue is
         * shared, the working stores come first.) */
        expect eb = { bad_path, "SELECT count(*) FROM urls", 0 };
        sm_recorder_get_stats(rb, &st);
        eb.want = (sqlite3_int64)(20 + 60 - st.dropped);
        wait_for(has, &eb);
    }
    sm_recorder_stop(rg);
}

/* Idle store files are closed; the next change opens them again. */
static void test_idle_store_closed_and_reopened(void **state)
{
    unit_ctx *u = *state;
    sm_writer *w;
    sm_site_conf site = { "http://idle.example", 50000, 0, 0, NULL, 0 };
    const char *path = apr_pstrcat(u->pool, u->dir, "/idle.db", NULL);
    sm_recorder *rec;
    expect e1 = { path, "SELECT count(*) FROM urls", 1 };
    expect e2 = { path, "SELECT count(*) FROM urls", 2 };

    assert_int_equal(sm_writer_create(&w, u->pool, 100, 1000), APR_SUCCESS);
    rec = join(u, w, path, &site, apr_time_from_msec(300));
    assert_int_equal(sm_recorder_start(rec), APR_SUCCESS);
    add(rec, &site, "/a", NULL);
    wait_for(has, &e1);
    assert_true(unit_open_on(path) > 0);
    wait_for(closed, (void *)path);
    /* Closed lightly: no checkpoint, the -wal and -shm left for the next
     * open (not deleted and created again). */
    assert_int_equal(access(apr_pstrcat(u->pool, path, "-wal", NULL), F_OK),
                     0);
    add(rec, &site, "/b", NULL);
    wait_for(has, &e2);
    sm_recorder_stop(rec);
    assert_int_equal(unit_open_on(path), 0);
}

/* A prefork child's pools share one allocator without a mutex (the child
 * pool's: every request's pool takes memory from it), so the writer
 * thread must never take memory from its owner's allocator.  Seen in
 * httpd before: the writer's spill scan (apr_dir_open in a sub-pool of the
 * store's pool, then of the child pool) crashing a prefork child in
 * apr_palloc while its request thread freed buckets.  Here the owner's
 * allocator gets a mutex that the test (the owner) holds while the writer
 * thread starts, opens the store, scans for spills and writes 200 URLs: a
 * writer that took memory from it would wait for the mutex, and nothing
 * would be written.  (Nested: the owner itself allocates meanwhile.) */
static void test_writer_keeps_off_the_owners_allocator(void **state)
{
    unit_ctx *u = *state;
    apr_allocator_t *alloc;
    apr_thread_mutex_t *busy;
    apr_pool_t *child;
    sm_writer *w;
    sm_site_conf site = { "http://prefork.example", 50000, 0, 0, NULL, 0 };
    const char *path = apr_pstrcat(u->pool, u->dir, "/prefork.db", NULL);
    expect all = { path, "SELECT count(*) FROM urls", 200 };
    sm_recorder *rec;
    char url[32];
    int i, written;

    assert_int_equal(apr_allocator_create(&alloc), APR_SUCCESS);
    assert_int_equal(apr_pool_create_ex(&child, u->pool, NULL, alloc),
                     APR_SUCCESS);
    apr_allocator_owner_set(alloc, child);
    assert_int_equal(apr_thread_mutex_create(&busy, APR_THREAD_MUTEX_NESTED,
                                             u->pool), APR_SUCCESS);
    assert_int_equal(sm_writer_create(&w, child, 10, 1000), APR_SUCCESS);
    rec = join_in(child, w, path, &site, 0);
    apr_allocator_mutex_set(alloc, busy);
    apr_thread_mutex_lock(busy);
    assert_int_equal(sm_recorder_start(rec), APR_SUCCESS);
    for (i = 0; i < 200; i++) {
        snprintf(url, sizeof(url), "/a%d", i);
        add(rec, &site, url, NULL);
    }
    for (i = 0; i < 400 && !has(&all); i++)
        apr_sleep(apr_time_from_msec(25));
    written = has(&all);
    apr_thread_mutex_unlock(busy);
    assert_true(written);
    sm_recorder_stop(rec);
}

/* A store file replaced while it was closed: the memory of what was written
 * to the old file no longer vouches, so a URL served again goes into the
 * new file; one deleted while closed is created again without traffic. */
static void test_replaced_or_deleted_while_closed(void **state)
{
    unit_ctx *u = *state;
    sm_writer *w;
    sm_site_conf site = { "http://repl.example", 50000, 0, 0, NULL, 0 };
    const char *path = apr_pstrcat(u->pool, u->dir, "/repl.db", NULL);
    const char *other = apr_pstrcat(u->pool, u->dir, "/other.db", NULL);
    sm_recorder *rec;
    sm_recorder_stats st;
    expect e1 = { path, "SELECT count(*) FROM urls", 1 };
    expect created = { path, "SELECT count(*) FROM urls", 0 };

    assert_int_equal(sm_writer_create(&w, u->pool, 100, 1000), APR_SUCCESS);
    rec = join(u, w, path, &site, apr_time_from_msec(300));
    assert_int_equal(sm_recorder_start(rec), APR_SUCCESS);
    add(rec, &site, "/kept", "\"1\"");
    wait_for(has, &e1);
    wait_for(closed, (void *)path);
    /* Replaced by an empty file (a new database). */
    assert_int_equal(system(apr_psprintf(u->pool, ": > '%s' && mv '%s' '%s'",
                                         other, other, path)), 0);
    add(rec, &site, "/kept", "\"1\"");
    sm_recorder_get_stats(rec, &st);
    if (st.queued == 1) {
        /* Not noticed yet when it was offered: offered again later. */
        apr_sleep(apr_time_from_msec(400));
        add(rec, &site, "/kept", "\"1\"");
    }
    wait_for(has, &e1);
    wait_for(closed, (void *)path);
    /* Deleted: the file is back within the closed check. */
    unlink(path);
    wait_for(has, &created);
    assert_int_equal(access(path, F_OK), 0);
    sm_recorder_stop(rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_thread_for_many_stores,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_requests_wait_for_a_writer_behind,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_upkeep_is_not_waited_for,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_failing_store_does_not_hold_up_others,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_writer_keeps_off_the_owners_allocator,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_idle_store_closed_and_reopened,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_replaced_or_deleted_while_closed,
                                        unit_setup, unit_teardown),
    };

    apr_initialize();
    atexit(apr_terminate);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
