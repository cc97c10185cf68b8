/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of sitemapctl's log import: parsing common/combined lines,
 * the file-type heuristic, aggregation (newest line wins) with the
 * module's rules, and reading plain, gzip, damaged and missing files. */
#include "unit.h"

#include "util/sm_date.h"
#include "ctl/sm_import.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

static const char *parse(char *buf, sm_log_entry *e)
{
    return sm_log_parse_line(buf, strlen(buf), e, NULL);
}

static void test_parse_common_and_combined(void **state)
{
    sm_log_entry e;
    char l1[] = "127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "
                "\"GET /apache_pb.gif HTTP/1.0\" 200 2326";
    char l2[] = "10.1.2.3 - frank [10/Oct/2000:13:55:36 +0000] "
                "\"GET /a?b=1 HTTP/1.1\" 404 - \"http://ref/\" "
                "\"Mozilla/5.0 (X11)\"";
    char l3[] = "www.example.com:443 10.1.2.3 - - [01/Jan/2026:00:00:00 "
                "+0100] \"HEAD /x HTTP/2.0\" 301 0 \"-\" \"-\"";
    char l4[] = "h - - [1795323556] \"GET / HTTP/1.1\" 200 5";
    char l5[] = "h - - [1795323556123] \"GET / HTTP/1.1\" 200 5";
    (void)state;

    assert_null(parse(l1, &e));
    assert_string_equal(e.method, "GET");
    assert_string_equal(e.target, "/apache_pb.gif");
    assert_int_equal(e.status, 200);
    assert_null(e.user);
    /* 13:55:36 -0700 is 20:55:36 UTC */
    assert_int_equal(apr_time_sec(e.time), 971211336);

    assert_null(parse(l2, &e));
    assert_string_equal(e.user, "frank");
    assert_string_equal(e.target, "/a?b=1");
    assert_int_equal(e.status, 404);
    assert_int_equal(apr_time_sec(e.time), 971186136);

    assert_null(parse(l3, &e));
    assert_string_equal(e.method, "HEAD");
    assert_string_equal(e.target, "/x");
    assert_int_equal(e.status, 301);
    assert_int_equal(apr_time_sec(e.time), 1767222000);

    assert_null(parse(l4, &e));
    assert_int_equal(apr_time_sec(e.time), 1795323556);
    assert_null(parse(l5, &e));
    assert_int_equal(e.time, APR_INT64_C(1795323556123000));
}

static void test_parse_escapes_and_odd_requests(void **state)
{
    sm_log_entry e;
    char esc[] = "h - - [10/Oct/2000:13:55:36 -0700] "
                 "\"GET /q\\\"uote/b\\\\s/caf\\xc3\\xa9 HTTP/1.1\" 200 1";
    char dash[] = "h - - [10/Oct/2000:13:55:36 -0700] \"-\" 408 0";
    char http09[] = "h - - [10/Oct/2000:13:55:36 -0700] \"GET /old\" 200 1";
    char crlf[] = "h - - [10/Oct/2000:13:55:36 -0700] \"GET /w HTTP/1.1\" "
                  "200 1\r";
    char nostatus_end[] = "h - - [10/Oct/2000:13:55:36 -0700] "
                          "\"GET /e HTTP/1.1\" 200";
    (void)state;

    assert_null(parse(esc, &e));
    assert_string_equal(e.target, "/q\"uote/b\\s/caf\xc3\xa9");
    assert_null(parse(dash, &e));
    assert_null(e.method);
    assert_int_equal(e.status, 408);
    assert_null(parse(http09, &e));
    assert_string_equal(e.target, "/old");
    assert_null(parse(crlf, &e));
    assert_string_equal(e.target, "/w");
    assert_null(parse(nostatus_end, &e));
    assert_int_equal(e.status, 200);
}

static void test_parse_malformed(void **state)
{
    static const char *const bad[] = {
        "",
        "garbage",
        "[10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1",
        "h - - [10/Oct/2000:13:55:36 -0700 \"GET / HTTP/1.1\" 200 1",
        "h - - [32/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1",
        "h - - [10/Foo/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1",
        "h - - [yesterday] \"GET / HTTP/1.1\" 200 1",
        "h - - [10/Oct/2000:13:55:36 -0700] GET / HTTP/1.1 200 1",
        "h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1 200 1",
        "h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" abc 1",
        "h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 2000 1",
        "h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\"",
        /* Times that are not plausible, and broken time zones. */
        "h - - [31/Dec/1989:23:59:59 +0000] \"GET / HTTP/1.1\" 200 1",
        "h - - [01/Jan/1990:00:59:59 +0100] \"GET / HTTP/1.1\" 200 1",
        "h - - [05/Jan/9999:03:58:59 +0000] \"GET / HTTP/1.1\" 200 1",
        "h - - [253402300800] \"GET / HTTP/1.1\" 200 1",
        "h - - [99999999999999999] \"GET / HTTP/1.1\" 200 1",
        "h - - [10/Oct/2000:13:55:36 +00:0] \"GET / HTTP/1.1\" 200 1",
        "h - - [10/Oct/2000:13:55:36 +2400] \"GET / HTTP/1.1\" 200 1",
        "h - - [10/Oct/2000:13:55:36 +1500] \"GET / HTTP/1.1\" 200 1",
        NULL
    };
    int i;
    (void)state;

    for (i = 0; bad[i]; i++) {
        char *copy = strdup(bad[i]);
        sm_log_entry e;
        if (!parse(copy, &e))
            fail_msg("parsed, but should not: %s", bad[i]);
        /* A malformed line is left as it was (for the report). */
        assert_string_equal(copy, bad[i]);
        free(copy);
    }
}

static void test_time_cache(void **state)
{
    sm_log_time_cache tc;
    sm_log_entry e;
    char a[] = "h - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.1\" 200 1";
    char b[] = "h - - [10/Oct/2000:13:55:36 -0700] \"GET /b HTTP/1.1\" 200 1";
    char c[] = "h - - [10/Oct/2000:13:55:37 -0700] \"GET /c HTTP/1.1\" 200 1";
    (void)state;

    memset(&tc, 0, sizeof(tc));
    assert_null(sm_log_parse_line(a, strlen(a), &e, &tc));
    assert_null(sm_log_parse_line(b, strlen(b), &e, &tc));
    assert_int_equal(apr_time_sec(e.time), 971211336);
    assert_null(sm_log_parse_line(c, strlen(c), &e, &tc));
    assert_int_equal(apr_time_sec(e.time), 971211337);
}

/* Found by t/fuzz/fuzz_log: an empty "[]" matched the empty text of a
 * fresh (zeroed) cache and was taken for a time of 0 (1970) instead of
 * being refused. */
static void test_time_cache_empty_time(void **state)
{
    sm_log_time_cache tc;
    sm_log_entry e;
    char a[] = "h - - [] \"GET /a HTTP/1.1\" 200 1";
    (void)state;

    memset(&tc, 0, sizeof(tc));
    assert_string_equal(sm_log_parse_line(a, strlen(a), &e, &tc),
                        "bad time");
}

static void test_not_a_page(void **state)
{
    (void)state;
    assert_true(sm_import_not_a_page("/a.css"));
    assert_true(sm_import_not_a_page("/img/Logo.PNG?v=3"));
    assert_true(sm_import_not_a_page("/f.tar.gz"));
    assert_true(sm_import_not_a_page("/x.js#frag"));
    assert_false(sm_import_not_a_page("/a.html"));
    assert_false(sm_import_not_a_page("/"));
    assert_false(sm_import_not_a_page("/about"));
    assert_false(sm_import_not_a_page("/dir.css/page"));
    assert_false(sm_import_not_a_page("/a."));
    assert_false(sm_import_not_a_page("/index.php?f=a.css"));
}

/* ---- aggregation ------------------------------------------------------ */

static sm_import *importer(unit_ctx *u, int guess, const char *exclude,
                           const char *allow)
{
    sm_rules rules;
    apr_array_header_t *types = apr_array_make(u->pool, 1, sizeof(char *));
    apr_array_header_t *ex = apr_array_make(u->pool, 1, sizeof(sm_regex *));
    apr_array_header_t *aq = NULL;
    const char *err;

    APR_ARRAY_PUSH(types, const char *) = "text/html";
    if (exclude)
        APR_ARRAY_PUSH(ex, sm_regex *) = sm_regex_compile(u->pool, exclude,
                                                          &err);
    if (allow) {
        aq = apr_array_make(u->pool, 1, sizeof(char *));
        APR_ARRAY_PUSH(aq, const char *) = allow;
    }
    rules.content_types = types;
    rules.excludes = ex;
    rules.allow_query = aq;
    return sm_import_create(u->pool, &rules, "https://www.example.com",
                            guess);
}

static void feed(sm_import *im, const char *line)
{
    char *copy = strdup(line);
    sm_import_line(im, copy, strlen(copy), "test");
    free(copy);
}

#define L(time, req, status) \
    "1.2.3.4 - - [" time " +0000] \"" req " HTTP/1.1\" " status " 100 " \
    "\"-\" \"agent\""

static const sm_change *find(apr_array_header_t *ch, const char *url)
{
    int i;
    for (i = 0; i < ch->nelts; i++)
        if (strcmp(APR_ARRAY_IDX(ch, i, sm_change).url, url) == 0)
            return &APR_ARRAY_IDX(ch, i, sm_change);
    return NULL;
}

static apr_uint64_t reason(const sm_import_stats *st, const char *why)
{
    int i;
    for (i = 0; i < st->nreasons; i++)
        if (strcmp(st->reasons[i].why, why) == 0)
            return st->reasons[i].count;
    return 0;
}

static void test_aggregate_newest_wins(void **state)
{
    unit_ctx *u = *state;
    sm_import *im = importer(u, 1, "^/private/", "page");
    sm_site_conf site = { "https://www.example.com", 50000, 0, 0, NULL, 0 };
    const sm_import_stats *st;
    apr_array_header_t *ch;
    const sm_change *c;

    /* Given out of order: the newest line counts. */
    feed(im, L("10/Oct/2025:10:00:05", "GET /a", "200"));
    feed(im, L("10/Oct/2025:10:00:01", "GET /a", "200"));
    feed(im, L("10/Oct/2025:10:00:03", "GET /./a", "200"));
    /* Recorded, then gone. */
    feed(im, L("10/Oct/2025:10:00:01", "GET /gone", "200"));
    feed(im, L("10/Oct/2025:10:00:09", "HEAD /gone", "410"));
    /* Gone, then back. */
    feed(im, L("10/Oct/2025:10:00:01", "GET /back", "404"));
    feed(im, L("10/Oct/2025:10:00:02", "GET /back", "200"));
    /* Only a 301: forgotten (in case it is stored). */
    feed(im, L("10/Oct/2025:10:00:02", "GET /moved", "301"));
    /* The module's rules. */
    feed(im, L("10/Oct/2025:10:00:02", "GET /private/x", "200"));
    feed(im, L("10/Oct/2025:10:00:02", "GET /list?page=2", "200"));
    feed(im, L("10/Oct/2025:10:00:02", "GET /list?sort=up", "200"));
    feed(im, L("10/Oct/2025:10:00:02", "POST /form", "200"));
    feed(im, L("10/Oct/2025:10:00:02", "GET /style.css", "200"));
    feed(im, L("10/Oct/2025:10:00:02", "GET /cached", "304"));
    feed(im, L("10/Oct/2025:10:00:02", "GET /bad%zz", "200"));
    feed(im, "5.6.7.8 - alice [10/Oct/2025:10:00:02 +0000] \"GET /mine "
             "HTTP/1.1\" 200 1");
    feed(im, "not a log line");
    feed(im, L("10/Oct/2025:10:00:02", "GET /404.css", "404"));

    st = sm_import_get_stats(im);
    assert_int_equal(st->lines, 18);
    assert_int_equal(st->malformed, 1);
    assert_int_equal(st->nsamples, 1);
    assert_string_equal(st->samples[0], "test: no [time]: not a log line");
    assert_int_equal(st->record_lines, 6);
    assert_int_equal(st->forget_lines, 4);
    assert_int_equal(reason(st, "excluded"), 1);
    assert_int_equal(reason(st, "query"), 1);
    assert_int_equal(reason(st, "not GET"), 1);
    assert_int_equal(reason(st, "content type"), 1);
    assert_int_equal(reason(st, "status"), 1);
    assert_int_equal(reason(st, "bad url"), 1);
    assert_int_equal(reason(st, "authenticated"), 1);
    assert_int_equal(st->ignored, 7);
    assert_int_equal(st->urls, 6);

    ch = sm_import_changes(im, u->pool, &site);
    assert_int_equal(ch->nelts, 6);
    /* Sorted by URL. */
    assert_string_equal(APR_ARRAY_IDX(ch, 0, sm_change).url, "/404.css");
    assert_string_equal(APR_ARRAY_IDX(ch, 5, sm_change).url, "/moved");

    c = find(ch, "/a");
    assert_int_equal(c->op, SM_CHANGE_SEED);
    assert_int_equal(apr_time_sec(c->last_modified), 1760090405);
    assert_int_equal(c->seen, c->last_modified);
    assert_true(c->site == &site);
    assert_int_equal(find(ch, "/gone")->op, SM_CHANGE_FORGET);
    assert_int_equal(find(ch, "/back")->op, SM_CHANGE_SEED);
    assert_int_equal(find(ch, "/moved")->op, SM_CHANGE_FORGET);
    assert_int_equal(find(ch, "/404.css")->op, SM_CHANGE_FORGET);
    assert_int_equal(find(ch, "/list?page=2")->op, SM_CHANGE_SEED);
    assert_null(find(ch, "/private/x"));
}

/* Implausible times are malformed lines: counted, shown, never stored;
 * the edges of the window are kept. */
static void test_implausible_times(void **state)
{
    unit_ctx *u = *state;
    sm_import *im = importer(u, 1, NULL, NULL);
    sm_site_conf site = { "https://www.example.com", 50000, 0, 0, NULL, 0 };
    const sm_import_stats *st;
    apr_array_header_t *ch;
    apr_time_t now = apr_time_now();
    char line[256];

    feed(im, L("01/Jan/1990:00:00:00", "GET /first-day", "200"));
    feed(im, L("31/Dec/1989:23:59:59", "GET /too-old", "200"));
    feed(im, L("05/Jan/9999:03:58:59", "GET /far-ahead", "200"));
    /* A day ahead (minus a minute for this test's run) is kept; two are
     * not. */
    snprintf(line, sizeof(line), "1.2.3.4 - - [%" APR_INT64_T_FMT "] "
             "\"GET /skewed HTTP/1.1\" 200 1",
             (apr_int64_t)apr_time_sec(now + SM_TIME_SKEW) - 60);
    feed(im, line);
    snprintf(line, sizeof(line), "1.2.3.4 - - [%" APR_INT64_T_FMT "] "
             "\"GET /two-days HTTP/1.1\" 200 1",
             (apr_int64_t)apr_time_sec(now + 2 * SM_TIME_SKEW));
    feed(im, line);

    st = sm_import_get_stats(im);
    assert_int_equal(st->lines, 5);
    assert_int_equal(st->malformed, 3);
    assert_int_equal(st->record_lines, 2);
    assert_non_null(strstr(st->samples[0], "implausible time"));
    ch = sm_import_changes(im, u->pool, &site);
    assert_int_equal(ch->nelts, 2);
    assert_non_null(find(ch, "/first-day"));
    assert_non_null(find(ch, "/skewed"));
}

static void test_aggregate_all_types(void **state)
{
    unit_ctx *u = *state;
    sm_import *im = importer(u, 0, NULL, NULL);
    sm_site_conf site = { "https://www.example.com", 50000, 0, 0, NULL, 0 };
    apr_array_header_t *ch;

    feed(im, L("10/Oct/2025:10:00:02", "GET /style.css", "200"));
    ch = sm_import_changes(im, u->pool, &site);
    assert_int_equal(ch->nelts, 1);
    /* Lines after sm_import_changes still aggregate correctly. */
    feed(im, L("10/Oct/2025:10:00:09", "GET /style.css", "404"));
    feed(im, L("10/Oct/2025:10:00:03", "GET /b", "200"));
    ch = sm_import_changes(im, u->pool, &site);
    assert_int_equal(ch->nelts, 2);
    assert_int_equal(find(ch, "/style.css")->op, SM_CHANGE_FORGET);
}

static void test_too_long_url(void **state)
{
    unit_ctx *u = *state;
    sm_import *im = importer(u, 1, NULL, NULL);
    char *line = apr_palloc(u->pool, 4096), *path = apr_palloc(u->pool, 2100);

    memset(path, 'a', 2040);
    path[0] = '/';
    path[2040] = '\0';
    apr_snprintf(line, 4096, L("10/Oct/2025:10:00:02", "GET %s", "200"),
                 path);
    feed(im, line);
    assert_int_equal(reason(sm_import_get_stats(im), "too long"), 1);
}

/* ---- files --------------------------------------------------------------- */

static const char log_text[] =
    L("10/Oct/2025:10:00:01", "GET /one", "200") "\n"
    L("10/Oct/2025:10:00:02", "GET /two", "200") "\r\n"
    "junk\n"
    L("10/Oct/2025:10:00:03", "GET /three", "200");     /* no line end */

static char *write_file(unit_ctx *u, const char *name, const char *data,
                        apr_size_t len)
{
    char *path = apr_pstrcat(u->pool, u->dir, "/", name, NULL);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
    return path;
}

static char *write_gz(unit_ctx *u, const char *name, const char *data,
                      apr_size_t len)
{
    char *path = apr_pstrcat(u->pool, u->dir, "/", name, NULL);
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, data, (unsigned)len), (int)len);
    assert_int_equal(gzclose(gz), Z_OK);
    return path;
}

static void check_three(unit_ctx *u, sm_import *im)
{
    sm_site_conf site = { "https://www.example.com", 50000, 0, 0, NULL, 0 };
    const sm_import_stats *st = sm_import_get_stats(im);
    apr_array_header_t *ch;

    assert_int_equal(st->lines, 4);
    assert_int_equal(st->malformed, 1);
    assert_int_equal(st->record_lines, 3);
    ch = sm_import_changes(im, u->pool, &site);
    assert_int_equal(ch->nelts, 3);
    assert_non_null(find(ch, "/three"));
    assert_non_null(find(ch, "/two"));
}

static void test_plain_file(void **state)
{
    unit_ctx *u = *state;
    sm_import *im = importer(u, 1, NULL, NULL);
    char err[256];
    char *path = write_file(u, "access.log", log_text, strlen(log_text));

    assert_int_equal(sm_import_check_file(path, err, sizeof(err)),
                     APR_SUCCESS);
    assert_int_equal(sm_import_file(im, path, err, sizeof(err)),
                     APR_SUCCESS);
    check_three(u, im);
    assert_non_null(strstr(sm_import_get_stats(im)->samples[0],
                           "access.log:3: no [time]: junk"));
}

static void test_gzip_file(void **state)
{
    unit_ctx *u = *state;
    sm_import *im = importer(u, 1, NULL, NULL);
    char err[256];
    /* The name does not matter: the content says gzip. */
    char *path = write_gz(u, "access.log.1", log_text, strlen(log_text));

    assert_int_equal(sm_import_file(im, path, err, sizeof(err)),
                     APR_SUCCESS);
    check_three(u, im);
}

static void test_truncated_gzip(void **state)
{
    unit_ctx *u = *state;
    sm_import *im = importer(u, 1, NULL, NULL);
    char err[256], *whole, *data;
    apr_size_t len = 0, n = 2000, i;
    FILE *f;
    char *path;

    /* Enough lines that a cut gzip holds some of them. */
    data = apr_palloc(u->pool, n * 120);
    data[0] = '\0';
    for (i = 0; i < n; i++)
        len += (apr_size_t)apr_snprintf(data + len, 120, "1.2.3.4 - - "
                                        "[10/Oct/2025:10:00:01 +0000] \"GET "
                                        "/p%" APR_SIZE_T_FMT " HTTP/1.1\" 200 "
                                        "%" APR_SIZE_T_FMT "\n", i, i * 7919);
    path = write_gz(u, "full.gz", data, len);
    whole = apr_palloc(u->pool, 1 << 20);
    f = fopen(path, "rb");
    len = fread(whole, 1, 1 << 20, f);
    fclose(f);
    path = write_file(u, "cut.gz", whole, len / 2);

    assert_int_not_equal(sm_import_file(im, path, err, sizeof(err)),
                         APR_SUCCESS);
    assert_non_null(strstr(err, "cut.gz: cannot read after line"));
    assert_true(sm_import_get_stats(im)->lines > 0);
}

static void test_unreadable(void **state)
{
    unit_ctx *u = *state;
    sm_import *im = importer(u, 1, NULL, NULL);
    char err[256];
    char *missing = apr_pstrcat(u->pool, u->dir, "/nope.log", NULL);

    assert_int_not_equal(sm_import_check_file(missing, err, sizeof(err)),
                         APR_SUCCESS);
    assert_non_null(strstr(err, "nope.log: cannot open: No such file"));
    assert_int_not_equal(sm_import_file(im, missing, err, sizeof(err)),
                         APR_SUCCESS);
    assert_int_not_equal(sm_import_check_file(u->dir, err, sizeof(err)),
                         APR_SUCCESS);
    assert_non_null(strstr(err, "directory"));
}

static void test_long_line(void **state)
{
    unit_ctx *u = *state;
    sm_import *im = importer(u, 1, NULL, NULL);
    apr_size_t n = 200 * 1024;
    char *data = apr_palloc(u->pool, n + 512), err[256];
    const char *good = L("10/Oct/2025:10:00:01", "GET /after", "200") "\n";
    char *path;

    memset(data, 'x', n);
    data[n] = '\n';
    strcpy(data + n + 1, good);
    path = write_file(u, "long.log", data, n + 1 + strlen(good));
    assert_int_equal(sm_import_file(im, path, err, sizeof(err)),
                     APR_SUCCESS);
    assert_int_equal(sm_import_get_stats(im)->lines, 2);
    assert_int_equal(sm_import_get_stats(im)->malformed, 1);
    assert_int_equal(sm_import_get_stats(im)->record_lines, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_common_and_combined),
        cmocka_unit_test(test_parse_escapes_and_odd_requests),
        cmocka_unit_test(test_parse_malformed),
        cmocka_unit_test_setup_teardown(test_implausible_times, unit_setup,
                                        unit_teardown),
        cmocka_unit_test(test_time_cache),
        cmocka_unit_test(test_time_cache_empty_time),
        cmocka_unit_test(test_not_a_page),
        cmocka_unit_test_setup_teardown(test_aggregate_newest_wins, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_aggregate_all_types, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_too_long_url, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_plain_file, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_gzip_file, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_truncated_gzip, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_unreadable, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_long_line, unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
