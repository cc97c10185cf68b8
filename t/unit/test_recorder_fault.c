/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of what a failing store costs (issue 33): its retries back
 * off while the writer sleeps, a stop is not delayed by them, and changes
 * lost are logged with their count within the loss interval. */
#include "unit.h"

#include "record/sm_recorder.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static sm_site_conf site = { "http://r.example", 50000, 0, 0, NULL, 0 };

/* The writer thread logs while a test reads: under this lock. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_errors;
static char last_log[1024];

static void count_log(void *baton, sm_log_level level, apr_status_t rv,
                      const char *msg)
{
    (void)baton; (void)rv;
    pthread_mutex_lock(&log_lock);
    if (level <= SM_LOG_ERR)
        log_errors++;
    apr_cpystrn(last_log, msg, sizeof(last_log));
    pthread_mutex_unlock(&log_lock);
}

static int errors_now(void)
{
    int n;

    pthread_mutex_lock(&log_lock);
    n = log_errors;
    pthread_mutex_unlock(&log_lock);
    return n;
}

static int last_log_has(const char *s)
{
    int has;

    pthread_mutex_lock(&log_lock);
    has = strstr(last_log, s) != NULL;
    pthread_mutex_unlock(&log_lock);
    return has;
}

static sm_logger logger = { count_log, NULL, SM_LOG_DEBUG };

static sm_recorder *make(unit_ctx *u, const char *path,
                         apr_interval_time_t interval, int batch, int qmax)
{
    sm_recorder *rec;
    sm_recorder_conf conf = { path, interval, batch, qmax, 200, &logger,
                              NULL, NULL, NULL, 0, 0, 0, 0 };
    assert_int_equal(sm_recorder_create(&rec, u->pool, &conf), APR_SUCCESS);
    sm_recorder_add_site(rec, &site);
    pthread_mutex_lock(&log_lock);
    log_errors = 0;
    pthread_mutex_unlock(&log_lock);
    return rec;
}

static void add(sm_recorder *rec, sm_change_op op, const char *url,
                const char *etag)
{
    sm_change c = { op, &site, url, 0, etag, apr_time_now(), NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
    sm_recorder_add(rec, &c, 0);
}

static sqlite3_int64 count_urls(const char *path)
{
    /* The writer may be creating the file and its schema right now. */
    if (access(path, F_OK) != 0
        || sql_int(path, "SELECT count(*) FROM sqlite_master WHERE "
                         "name = 'urls'") != 1)
        return 0;
    return sql_int(path, "SELECT count(*) FROM urls");
}

/* A failing store with a full batch kept for retry (issue 33): the writer
 * backs off (1 s, 2 s, ... each between half and all of it) and sleeps
 * between attempts, instead of retrying at once, forever; a stop does not
 * wait for the next retry; and the store that works again writes what
 * was kept and says so. */
static void test_failing_store_backs_off(void **state)
{
    unit_ctx *u = *state;
    char *dir = apr_pstrcat(u->pool, u->dir, "/later", NULL);
    char *path = apr_pstrcat(u->pool, dir, "/r.db", NULL);
    sm_recorder *rec = make(u, path, apr_time_from_msec(20), 100, 5000);
    sm_recorder_stats st;
    apr_time_t t0;
    char url[32];
    int i;

    for (i = 0; i < 1000; i++) {            /* ten batches' worth */
        snprintf(url, sizeof(url), "/f%d", i);
        add(rec, SM_CHANGE_RECORD, url, NULL);
    }
    assert_int_equal(sm_recorder_start(rec), APR_SUCCESS);
    apr_sleep(apr_time_from_msec(3500));
    sm_recorder_get_stats(rec, &st);
    /* At 0, 0.5-1, 1.5-3, 3.5-7 s: at most four attempts (one of them may
     * be the start's open), thousands without the backoff. */
    assert_true(st.faults >= 2);
    assert_true(st.faults <= 5);
    assert_int_equal(st.dropped, 0);
    assert_int_equal(errors_now(), 1);      /* once a minute */
    mkdir(dir, 0755);
    /* The next attempt, at most 8 s from the first, writes them all. */
    for (i = 0; i < 120 && count_urls(path) < 1000; i++)
        apr_sleep(apr_time_from_msec(100));
    assert_int_equal(count_urls(path), 1000);
    assert_true(last_log_has("works again"));
    assert_true(last_log_has("1000 changes kept while it failed were "
                             "written, 0 lost"));
    /* A stop is not delayed by a retry's wait (the backoff had grown to
     * seconds): 2 s, as under valgrind at a load of 5 the stop's own work
     * took over 500 ms (CI's tools/check, 2026-11-27). */
    rmdir(dir);
    t0 = apr_time_now();
    sm_recorder_stop(rec);
    assert_true(apr_time_now() - t0 < apr_time_from_sec(2));
}

/* Changes lost while a store fails are logged with their count within
 * the loss interval (a minute; 1 s here), by the writer, even when
 * nothing else happens (issue 33: 11,210 of them were reported only at
 * the stop, 80 s later); never more often. */
static void test_losses_logged_within_the_interval(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/missing/r.db", NULL);
    sm_recorder *rec;
    sm_recorder_conf conf = { path, apr_time_from_sec(3600), 2, 4, 200,
                              &logger, NULL, NULL, NULL, 0, 0, 0,
                              apr_time_from_sec(1) };
    sm_recorder_stats st;
    char url[128];
    int i, lost_lines;

    assert_int_equal(sm_recorder_create(&rec, u->pool, &conf), APR_SUCCESS);
    sm_recorder_add_site(rec, &site);
    assert_int_equal(sm_recorder_start(rec), APR_SUCCESS);
    /* A first batch fails (the start's open failing is not yet a fault);
     * waited for, as under valgrind it takes seconds, and until then the
     * adds below would wait for room instead of being lost. */
    add(rec, SM_CHANGE_RECORD, "/l-first", NULL);
    add(rec, SM_CHANGE_RECORD, "/l-second", NULL);
    for (i = 0; i < 300; i++) {
        sm_recorder_get_stats(rec, &st);
        if (st.faults >= 1)
            break;
        apr_sleep(apr_time_from_msec(50));
    }
    assert_true(st.faults >= 1);
    pthread_mutex_lock(&log_lock);
    log_errors = 0;
    pthread_mutex_unlock(&log_lock);
    for (i = 0; i < 20; i++) {
        snprintf(url, sizeof(url), "/l%d", i);
        add(rec, SM_CHANGE_RECORD, url, NULL);
    }
    sm_recorder_get_stats(rec, &st);
    assert_true(st.dropped >= 15);
    /* The first at once; the rest within the interval, in one line. */
    lost_lines = errors_now();
    assert_true(lost_lines >= 1 && lost_lines <= 2);
    for (i = 0; i < 30 && errors_now() == lost_lines; i++)
        apr_sleep(apr_time_from_msec(100));
    assert_int_equal(errors_now(), lost_lines + 1);
    assert_true(last_log_has("changes lost"));
    apr_sleep(apr_time_from_msec(1500));
    assert_int_equal(errors_now(), lost_lines + 1);
    /* Back: the line says how many were kept and written, how many lost. */
    mkdir(apr_pstrcat(u->pool, u->dir, "/missing", NULL), 0755);
    snprintf(url, sizeof(url), "%d changes kept while it failed were "
             "written, %d lost", 22 - (int)st.dropped, (int)st.dropped);
    for (i = 0; i < 100 && !last_log_has("works again"); i++)
        apr_sleep(apr_time_from_msec(100));
    assert_true(last_log_has("works again"));
    if (!last_log_has(url))
        fail_msg("want '%s' in '%s'", url, last_log);
    sm_recorder_stop(rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_failing_store_backs_off,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(
            test_losses_logged_within_the_interval, unit_setup,
            unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
