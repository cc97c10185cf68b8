/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of sm_log: a message above the logger's level is neither
 * formatted nor passed on; one at or below it is, whole. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include <apr_general.h>
#include <apr_strings.h>

#include "util/sm_log.h"

#include <string.h>

typedef struct {
    int calls;
    sm_log_level level;
    char msg[64];
} seen;

static void remember(void *baton, sm_log_level level, apr_status_t rv,
                     const char *msg)
{
    seen *s = baton;
    (void)rv;
    s->calls++;
    s->level = level;
    apr_cpystrn(s->msg, msg, sizeof(s->msg));
}

/* A %s argument that crashes (or valgrind flags) if it is ever read. */
#define UNREADABLE ((const char *)(apr_uintptr_t)8)

static void test_level_off_is_not_formatted(void **state)
{
    seen s = { 0, SM_LOG_ERR, "" };
    sm_logger lg = { remember, &s, SM_LOG_WARN };
    (void)state;

    sm_log(&lg, SM_LOG_DEBUG, 0, "%s", UNREADABLE);
    sm_log(&lg, SM_LOG_INFO, 0, "%s", UNREADABLE);
    assert_int_equal(s.calls, 0);

    sm_log(&lg, SM_LOG_WARN, 0, "store %s: %d", "x.db", 7);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.level, SM_LOG_WARN);
    assert_string_equal(s.msg, "store x.db: 7");

    lg.max = SM_LOG_DEBUG;
    sm_log(&lg, SM_LOG_DEBUG, 0, "d%d", 1);
    assert_int_equal(s.calls, 2);
    assert_string_equal(s.msg, "d1");

    /* No callback, or no logger: nothing, nothing read. */
    lg.fn = NULL;
    sm_log(&lg, SM_LOG_ERR, 0, "%s", UNREADABLE);
    sm_log(NULL, SM_LOG_ERR, 0, "%s", UNREADABLE);
    assert_int_equal(s.calls, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_level_off_is_not_formatted),
    };
    apr_initialize();
    atexit(apr_terminate);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
