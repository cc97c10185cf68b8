/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the recording rules: every condition both ways, forgetting,
 * excludes against the canonical path, regular expressions and header
 * tokens. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <apr_general.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include <apr_tables.h>
#include <apr_thread_proc.h>

#include <string.h>

#include "record/sm_rules.h"

typedef struct {
    apr_pool_t *pool;
    sm_rules rules;
    sm_response resp;     /* a response that is recorded */
} ctx;

static sm_regex *compile(apr_pool_t *p, const char *pattern)
{
    const char *err = NULL;
    sm_regex *re = sm_regex_compile(p, pattern, &err);

    if (!re)
        fail_msg("compile '%s': %s", pattern, err ? err : "no error");
    return re;
}

static apr_array_header_t *strings(apr_pool_t *p, ...)
{
    apr_array_header_t *a = apr_array_make(p, 4, sizeof(const char *));
    const char *s;
    va_list ap;

    va_start(ap, p);
    while ((s = va_arg(ap, const char *)) != NULL)
        APR_ARRAY_PUSH(a, const char *) = s;
    va_end(ap);
    return a;
}

static int setup(void **state)
{
    ctx *c;
    apr_pool_t *p;
    apr_array_header_t *ex;

    if (apr_pool_create(&p, NULL) != APR_SUCCESS)
        return -1;
    c = apr_pcalloc(p, sizeof(*c));
    c->pool = p;
    c->rules.content_types = strings(p, "text/html", "application/xhtml+xml",
                                     NULL);
    ex = apr_array_make(p, 2, sizeof(sm_regex *));
    APR_ARRAY_PUSH(ex, sm_regex *) = compile(p, "^/private/");
    APR_ARRAY_PUSH(ex, sm_regex *) = compile(p, "\\.pdf$");
    c->rules.excludes = ex;
    c->rules.allow_query = strings(p, "page", NULL);

    c->resp.method = "GET";
    c->resp.status = 200;
    c->resp.target = "/a";
    c->resp.content_type = "text/html";
    c->resp.base_len = strlen("https://www.example.com");
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ctx *c = *state;
    apr_pool_destroy(c->pool);
    return 0;
}

/* Decide with r and check the verdict, the URL or the reason. */
static void expect(ctx *c, const sm_response *r, sm_verdict want,
                   const char *want_s)
{
    const char *url = "unset", *why = "unset";
    sm_verdict v = sm_rules_decide(c->pool, &c->rules, r, &url, &why);
    static const char *const vn[] = { "IGNORE", "RECORD", "FORGET" };

    if (v != want)
        fail_msg("%s %d %s (type %s): %s (%s), want %s %s",
                 r->method ? r->method : "-", r->status,
                 r->target ? r->target : "-",
                 r->content_type ? r->content_type : "-", vn[v],
                 v == SM_IGNORE ? (why ? why : "no reason") : url,
                 vn[want], want_s);
    if (v == SM_IGNORE) {
        if (!why || strcmp(why, want_s) != 0)
            fail_msg("%s %s: reason '%s', want '%s'",
                     r->method ? r->method : "-",
                     r->target ? r->target : "-", why ? why : "(null)",
                     want_s);
        assert_null(url);
    }
    else {
        if (!url || strcmp(url, want_s) != 0)
            fail_msg("%s %s: url '%s', want '%s'",
                     r->method ? r->method : "-",
                     r->target ? r->target : "-", url ? url : "(null)",
                     want_s);
        assert_null(why);
    }
}

/* A 200 whose X-Robots-Tag says noindex: forgotten, and why. */
static void expect_noindex(ctx *c, const sm_response *r, const char *want)
{
    const char *url = "unset", *why = "unset";
    sm_verdict v = sm_rules_decide(c->pool, &c->rules, r, &url, &why);

    if (v != SM_FORGET || !url || strcmp(url, want) != 0
        || !why || strcmp(why, "x-robots-tag") != 0)
        fail_msg("X-Robots-Tag '%s' on %s: verdict %d url '%s' why '%s', "
                 "want FORGET '%s' 'x-robots-tag'", r->x_robots_tag,
                 r->target, (int)v, url ? url : "(null)",
                 why ? why : "(null)", want);
}

#define RECORDS(r, url)  expect(c, r, SM_RECORD, url)
#define NOINDEX(r, url)  expect_noindex(c, r, url)
#define FORGETS(r, url)  expect(c, r, SM_FORGET, url)
#define IGNORES(r, why)  expect(c, r, SM_IGNORE, why)

/* ---- recording: each condition both ways ------------------------------------ */

static void test_record_baseline(void **state)
{
    ctx *c = *state;
    sm_response r = c->resp;

    RECORDS(&r, "/a");
    r.target = "/a//b/./c/%7e";
    RECORDS(&r, "/a/b/c/~");
    r.target = "http://example.com/x?page=2";
    RECORDS(&r, "/x?page=2");
}

static void test_record_subrequest(void **state)
{
    ctx *c = *state;
    sm_response r = c->resp;

    r.is_subrequest = 1;
    IGNORES(&r, "subrequest");
    r.status = 404;
    IGNORES(&r, "subrequest");
    r.is_subrequest = 0;
    FORGETS(&r, "/a");
}

static void test_record_method(void **state)
{
    ctx *c = *state;
    sm_response r = c->resp;

    RECORDS(&r, "/a");
    r.method = "HEAD";
    IGNORES(&r, "not GET");
    r.method = "POST";
    IGNORES(&r, "not GET");
    r.method = "OPTIONS";
    IGNORES(&r, "not GET");
    r.method = "get";       /* methods are case-sensitive */
    IGNORES(&r, "not GET");
    r.method = "GETX";
    IGNORES(&r, "not GET");
    r.method = NULL;
    IGNORES(&r, "not GET");
}

static void test_record_status(void **state)
{
    ctx *c = *state;
    sm_response r = c->resp;
    static const int other[] = { 201, 204, 206, 302, 303, 304, 307, 308, 400,
                                 401, 403, 405, 500, 503, 0 };
    int i;

    RECORDS(&r, "/a");
    for (i = 0; i < (int)(sizeof(other) / sizeof(other[0])); i++) {
        r.status = other[i];
        IGNORES(&r, "status");
    }
}

static void test_record_content_type(void **state)
{
    ctx *c = *state;
    sm_response r = c->resp;

    r.content_type = "text/html";
    RECORDS(&r, "/a");
    r.content_type = "text/html; charset=UTF-8";
    RECORDS(&r, "/a");
    r.content_type = "TEXT/HTML;charset=utf-8";
    RECORDS(&r, "/a");
    r.content_type = "  Text/Html  ; q=1";
    RECORDS(&r, "/a");
    r.content_type = "application/xhtml+xml";
    RECORDS(&r, "/a");
    /* lowercase up to a point, then not: the exact-match shortcut fails,
     * the case-folding comparison decides */
    r.content_type = "text/HTML";
    RECORDS(&r, "/a");
    r.content_type = "Application/XHTML+xml ;charset=utf-8";
    RECORDS(&r, "/a");

    r.content_type = "text/HTMLx";
    IGNORES(&r, "content type");
    r.content_type = "text/html/";
    IGNORES(&r, "content type");
    r.content_type = "text/plain";
    IGNORES(&r, "content type");
    r.content_type = "text/plain; charset=text/html";
    IGNORES(&r, "content type");
    r.content_type = "text/htmlx";
    IGNORES(&r, "content type");
    r.content_type = "text/htm";
    IGNORES(&r, "content type");
    r.content_type = "xtext/html";
    IGNORES(&r, "content type");
    r.content_type = "application/xhtml";
    IGNORES(&r, "content type");
    r.content_type = "";
    IGNORES(&r, "content type");
    r.content_type = ";";
    IGNORES(&r, "content type");
    r.content_type = NULL;
    IGNORES(&r, "content type");

    /* an empty or missing list records nothing */
    r.content_type = "text/html";
    c->rules.content_types = strings(c->pool, NULL);
    IGNORES(&r, "content type");
    c->rules.content_types = NULL;
    IGNORES(&r, "content type");
}

static void test_record_authenticated(void **state)
{
    ctx *c = *state;
    sm_response r = c->resp;

    r.authenticated = 0;
    RECORDS(&r, "/a");
    r.authenticated = 1;
    IGNORES(&r, "authenticated");
}

static void test_record_x_robots_tag(void **state)
{
    ctx *c = *state;
    sm_response r = c->resp;

    /* Forgotten, as a <head> that says noindex: removed if stored. */
    r.x_robots_tag = "noindex";
    NOINDEX(&r, "/a");
    r.x_robots_tag = "NoIndex";
    NOINDEX(&r, "/a");
    r.x_robots_tag = "none";
    NOINDEX(&r, "/a");
    r.x_robots_tag = "nofollow, noindex";
    NOINDEX(&r, "/a");
    r.x_robots_tag = "googlebot: noindex";
    NOINDEX(&r, "/a");
    r.x_robots_tag = "otherbot: nofollow,googlebot:NONE";
    NOINDEX(&r, "/a");
    /* whatever else the response says: a private answer, an excluded
     * path (forgetting what is not stored does no harm) */
    r.x_robots_tag = "noindex";
    r.cache_control = "private";
    NOINDEX(&r, "/a");
    r.cache_control = NULL;
    r.target = "/private/x";
    NOINDEX(&r, "/private/x");
    r.target = "/a";
    /* but not a URL that does not normalise, nor credentials */
    r.target = "/a?utm=1";
    IGNORES(&r, "query");
    r.target = "/a";
    r.authenticated = 1;
    IGNORES(&r, "authenticated");
    r.authenticated = 0;

    r.x_robots_tag = "nofollow";
    RECORDS(&r, "/a");
    r.x_robots_tag = "noindexer, nonexistent";
    RECORDS(&r, "/a");
    r.x_robots_tag = "googlebot: nofollow, noarchive";
    RECORDS(&r, "/a");
    r.x_robots_tag = "unavailable_after: 25 Jun 2010 15:00:00 PST";
    RECORDS(&r, "/a");
    r.x_robots_tag = "";
    RECORDS(&r, "/a");
    r.x_robots_tag = NULL;
    RECORDS(&r, "/a");
}

static void test_record_cache_control(void **state)
{
    ctx *c = *state;
    sm_response r = c->resp;

    r.cache_control = "no-store";
    IGNORES(&r, "cache-control no-store");
    r.cache_control = "public,NO-STORE";
    IGNORES(&r, "cache-control no-store");
    /* private: what an anonymous visitor of MediaWiki gets; recorded
     * without credentials or a session, which are refused before */
    r.cache_control = "private";
    RECORDS(&r, "/a");
    r.cache_control = "max-age=0, Private";
    RECORDS(&r, "/a");
    r.session = 1;
    IGNORES(&r, "session");
    r.session = 0;
    r.authenticated = 1;
    IGNORES(&r, "authenticated");
    r.authenticated = 0;

    r.cache_control = "public, max-age=60";
    RECORDS(&r, "/a");
    r.cache_control = "no-cache, must-revalidate";
    RECORDS(&r, "/a");
    r.cache_control = "unprivate, no-storex";
    RECORDS(&r, "/a");
    r.cache_control = "no-cache=\"private, no-store\"";
    RECORDS(&r, "/a");
    r.cache_control = NULL;
    RECORDS(&r, "/a");

    /* noindex in Cache-Control, private in X-Robots-Tag: not our tokens */
    r.cache_control = "noindex";
    r.x_robots_tag = "private";
    RECORDS(&r, "/a");
}

static void test_session_cookies(void **state)
{
    ctx *c = *state;
    apr_array_header_t *pats = strings(c->pool, "wordpress_logged_in_*",
                                       "*_session", "PHPSESSID", NULL);

    assert_true(sm_has_session(pats, "wordpress_logged_in_abc=x"));
    assert_true(sm_has_session(pats, "_ga=1; my_wiki_session=abc"));
    assert_true(sm_has_session(pats, "a=1, PHPSESSID=z"));
    assert_true(sm_has_session(pats, " PHPSESSID = z "));
    /* not a session: other names, an empty value (a logout), a prefix
     * that is the whole name, the value holding the name */
    assert_false(sm_has_session(pats, "_ga=GA1.1; consent=yes"));
    assert_false(sm_has_session(pats, "PHPSESSID="));
    assert_false(sm_has_session(pats, "PHPSESSID=; a=1"));
    assert_false(sm_has_session(pats, "phpsessid=1"));
    assert_false(sm_has_session(pats, "PHPSESSIDX=1"));
    assert_false(sm_has_session(pats, "x=PHPSESSID"));
    assert_false(sm_has_session(pats, "wordpress_logged=1"));
    assert_true(sm_has_session(pats, "wordpress_logged_in_=1"));
    assert_false(sm_has_session(pats, "session=1"));
    assert_false(sm_has_session(pats, NULL));
    assert_false(sm_has_session(NULL, "PHPSESSID=1"));
}

static void test_record_path_info(void **state)
{
    ctx *c = *state;
    sm_response r = c->resp;

    r.has_path_info = 0;
    RECORDS(&r, "/a");
    r.has_path_info = 1;
    IGNORES(&r, "path info");
}

static void test_record_target(void **state)
{
    ctx *c = *state;
    sm_response r = c->resp;

    r.target = "/a?page=2";
    RECORDS(&r, "/a?page=2");
    r.target = "/a?page=2&&";
    RECORDS(&r, "/a?page=2");
    r.target = "/a?";
    RECORDS(&r, "/a");
    r.target = "/a?page=2&utm_source=x";
    IGNORES(&r, "query");
    r.target = "/a?utm_source=x";
    IGNORES(&r, "query");
    c->rules.allow_query = NULL;
    r.target = "/a?page=2";
    IGNORES(&r, "query");

    r.target = "/a%zz";
    IGNORES(&r, "bad url");
    r.target = "*";
    IGNORES(&r, "bad url");
    r.target = "";
    IGNORES(&r, "bad url");
    r.target = NULL;
    IGNORES(&r, "bad url");
}

static void test_record_too_long(void **state)
{
    ctx *c = *state;
    sm_response r = c->resp;
    apr_size_t len = SM_URL_MAX - r.base_len;
    char *t = apr_palloc(c->pool, len + 2);

    memset(t, 'x', len + 1);
    t[0] = '/';
    t[len] = '\0';
    r.target = t;
    RECORDS(&r, t);
    t[len] = 'x';
    t[len + 1] = '\0';
    IGNORES(&r, "too long");
    r.base_len = 0;
    RECORDS(&r, t);
}

static void test_record_excludes(void **state)
{
    ctx *c = *state;
    sm_response r = c->resp;

    r.target = "/private/x";
    IGNORES(&r, "excluded");
    /* matched against the canonical path, whatever the spelling */
    r.target = "/%70rivate/x";
    IGNORES(&r, "excluded");
    r.target = "//private//x";
    IGNORES(&r, "excluded");
    r.target = "/public/../private/x";
    IGNORES(&r, "excluded");
    r.target = "/./private/%2e/x";
    IGNORES(&r, "excluded");
    r.target = "http://example.com/private/";
    IGNORES(&r, "excluded");
    r.target = "/doc.pdf";
    IGNORES(&r, "excluded");
    r.target = "/doc.%70df";
    IGNORES(&r, "excluded");
    /* the path, not the query: "$" is the end of the path */
    r.target = "/doc.pdf?page=2";
    IGNORES(&r, "excluded");

    r.target = "/privatex";
    RECORDS(&r, "/privatex");
    r.target = "/a/private/x";
    RECORDS(&r, "/a/private/x");
    r.target = "/Private/x";
    RECORDS(&r, "/Private/x");
    r.target = "/doc.pdfx";
    RECORDS(&r, "/doc.pdfx");
    r.target = "/doc.pdf/";
    RECORDS(&r, "/doc.pdf/");
    r.target = "/%2Fprivate/x";      /* an escaped slash is another path */
    RECORDS(&r, "/%2Fprivate/x");

    /* the query is not matched */
    APR_ARRAY_PUSH((apr_array_header_t *)c->rules.excludes, sm_regex *) =
        compile(c->pool, "page");
    r.target = "/a?page=2";
    RECORDS(&r, "/a?page=2");
    r.target = "/page";
    IGNORES(&r, "excluded");

    /* no excludes at all */
    c->rules.excludes = NULL;
    r.target = "/private/x";
    RECORDS(&r, "/private/x");
}

/* ---- forgetting ------------------------------------------------------------- */

static void test_forget(void **state)
{
    ctx *c = *state;
    sm_response r = c->resp;
    static const int gone[] = { 404, 410, 301 };
    int i;

    for (i = 0; i < 3; i++) {
        r = c->resp;
        r.status = gone[i];
        r.target = "/a/./b//%63";
        FORGETS(&r, "/a/b/c");
        r.method = "HEAD";
        FORGETS(&r, "/a/b/c");
        r.target = "/a?page=3#x";
        FORGETS(&r, "/a?page=3");
        r.method = "POST";
        IGNORES(&r, "not GET");
        r.method = "PUT";
        IGNORES(&r, "not GET");
        r.method = NULL;
        IGNORES(&r, "not GET");
        r.method = "GET";
        r.is_subrequest = 1;
        IGNORES(&r, "subrequest");
        r.is_subrequest = 0;
        /* the target must normalise */
        r.target = "/a%2";
        IGNORES(&r, "bad url");
        r.target = "*";
        IGNORES(&r, "bad url");
        r.target = "/a?utm=1";
        IGNORES(&r, "query");
    }
}

static void test_forget_ignores_record_conditions(void **state)
{
    ctx *c = *state;
    sm_response r = c->resp;

    /* An error page's type, headers and path info do not matter. */
    r.status = 404;
    r.content_type = NULL;
    FORGETS(&r, "/a");
    r.content_type = "text/plain";
    r.x_robots_tag = "noindex";
    r.cache_control = "no-store, private";
    r.has_path_info = 1;
    r.authenticated = 1;
    FORGETS(&r, "/a");
    /* nor excludes: forgetting an excluded URL does no harm */
    r.target = "/private/x";
    FORGETS(&r, "/private/x");
    /* other statuses of HEAD are ignored */
    r = c->resp;
    r.method = "HEAD";
    r.status = 302;
    IGNORES(&r, "not GET");
    r.method = "GET";
    IGNORES(&r, "status");
}

static void test_decide_null_out(void **state)
{
    ctx *c = *state;
    sm_response r = c->resp;
    const char *url = NULL;

    /* why may be NULL */
    assert_int_equal(sm_rules_decide(c->pool, &c->rules, &r, &url, NULL),
                     SM_RECORD);
    assert_string_equal(url, "/a");
    r.status = 500;
    assert_int_equal(sm_rules_decide(c->pool, &c->rules, &r, &url, NULL),
                     SM_IGNORE);
}

/* ---- regular expressions ---------------------------------------------------- */

static void test_regex_match(void **state)
{
    ctx *c = *state;
    sm_regex *re = compile(c->pool, "^/a/");

    assert_string_equal(sm_regex_pattern(re), "^/a/");
    assert_int_equal(sm_regex_match(re, "/a/b"), 1);
    assert_int_equal(sm_regex_match(re, "/a/"), 1);
    assert_int_equal(sm_regex_match(re, "/b/a/"), 0);
    assert_int_equal(sm_regex_match(re, "/A/"), 0);
    assert_int_equal(sm_regex_match(re, ""), 0);

    /* anywhere in the subject; captures are fine */
    re = compile(c->pool, "(b)(c)?");
    assert_int_equal(sm_regex_match(re, "/a/b"), 1);
    assert_int_equal(sm_regex_match(re, "/a/x"), 0);

    /* httpd's defaults: '.' matches a newline, '$' only at the end */
    re = compile(c->pool, "a.b");
    assert_int_equal(sm_regex_match(re, "a\nb"), 1);
    re = compile(c->pool, "x$");
    assert_int_equal(sm_regex_match(re, "/x"), 1);
    assert_int_equal(sm_regex_match(re, "/x\n"), 0);

    /* case-insensitivity only when asked for */
    re = compile(c->pool, "(?i)^/private");
    assert_int_equal(sm_regex_match(re, "/PRIVATE/x"), 1);
}

static void test_regex_compile_error(void **state)
{
    ctx *c = *state;
    const char *err = NULL;

    assert_null(sm_regex_compile(c->pool, "^/(foo", &err));
    assert_non_null(err);
    if (!strstr(err, "^/(foo") || !strstr(err, "offset 6")
        || !strstr(err, "missing closing parenthesis"))
        fail_msg("error message: %s", err);

    err = NULL;
    assert_null(sm_regex_compile(c->pool, "a[b", &err));
    if (!err || !strstr(err, "a[b") || !strstr(err, "offset 3")
        || !strstr(err, "missing terminating ]"))
        fail_msg("error message: %s", err ? err : "(null)");

    err = NULL;
    assert_null(sm_regex_compile(c->pool, "x{2,1}", &err));
    if (!err || !strstr(err, "x{2,1}") || !strstr(err, "offset 5")
        || !strstr(err, "out of order"))
        fail_msg("error message: %s", err ? err : "(null)");

    err = NULL;
    assert_null(sm_regex_compile(c->pool, "*a", &err));
    if (!err || !strstr(err, "'*a'") || !strstr(err, "offset 0")
        || !strstr(err, "quantifier does not follow"))
        fail_msg("error message: %s", err ? err : "(null)");
}

static void test_regex_pool_lifetime(void **state)
{
    ctx *c = *state;
    apr_pool_t *sub;
    int i;

    /* Compiled code goes with its pool (valgrind would see a leak). */
    for (i = 0; i < 20; i++) {
        sm_regex *re;

        apr_pool_create(&sub, c->pool);
        re = compile(sub, "^/(a|b)+[0-9]{2,}$");
        assert_int_equal(sm_regex_match(re, "/abab12"), 1);
        assert_int_equal(sm_regex_match(re, "/abab1"), 0);
        apr_pool_destroy(sub);
    }
}

typedef struct {
    const sm_regex *re;
    int wrong;
} thread_job;

static void *APR_THREAD_FUNC match_thread(apr_thread_t *t, void *data)
{
    thread_job *job = data;
    char yes[64], no[64];
    int i;

    for (i = 0; i < 2000; i++) {
        apr_snprintf(yes, sizeof(yes), "/shop/item-%d/reviews", i);
        apr_snprintf(no, sizeof(no), "/shop/item-%d/photos", i);
        if (sm_regex_match(job->re, yes) != 1)
            job->wrong++;
        if (sm_regex_match(job->re, no) != 0)
            job->wrong++;
    }
    apr_thread_exit(t, APR_SUCCESS);
    return NULL;
}

static void test_regex_threads(void **state)
{
    ctx *c = *state;
    sm_regex *re = compile(c->pool, "^/shop/item-([0-9]+)/(reviews|ratings)$");
    apr_thread_t *th[4];
    apr_pool_t *tp[4];
    thread_job job[4];
    apr_status_t rv;
    int i;

    /* Each thread's pool in its own allocator: threads create and destroy
     * pools concurrently, and APR pools are not shared across threads. */
    for (i = 0; i < 4; i++)
        assert_int_equal(apr_pool_create_unmanaged(&tp[i]), APR_SUCCESS);
    for (i = 0; i < 4; i++) {
        job[i].re = re;
        job[i].wrong = 0;
        assert_int_equal(apr_thread_create(&th[i], NULL, match_thread,
                                           &job[i], tp[i]), APR_SUCCESS);
    }
    for (i = 0; i < 4; i++) {
        apr_thread_join(&rv, th[i]);
        assert_int_equal(job[i].wrong, 0);
    }
    for (i = 0; i < 4; i++)
        apr_pool_destroy(tp[i]);
}

/* ---- header tokens ---------------------------------------------------------- */

static void test_header_token(void **state)
{
    (void)state;

    assert_true(sm_header_has_token("noindex", "noindex"));
    assert_true(sm_header_has_token("NOINDEX", "noindex"));
    assert_true(sm_header_has_token("noindex", "NoIndex"));
    assert_true(sm_header_has_token(" \tnoindex\t ", "noindex"));
    assert_true(sm_header_has_token("nofollow,noindex", "noindex"));
    assert_true(sm_header_has_token("nofollow , noindex , noarchive",
                                    "noindex"));
    assert_true(sm_header_has_token(",,noindex,", "noindex"));
    /* token=value */
    assert_true(sm_header_has_token("max-age=60", "max-age"));
    assert_true(sm_header_has_token("private=\"Set-Cookie\"", "private"));
    assert_true(sm_header_has_token("private = \"a\"", "private"));
    /* after an agent prefix */
    assert_true(sm_header_has_token("googlebot: noindex", "noindex"));
    assert_true(sm_header_has_token("googlebot:noindex", "noindex"));
    assert_true(sm_header_has_token("googlebot : noindex", "noindex"));
    assert_true(sm_header_has_token("bingbot: nofollow, googlebot: none",
                                    "none"));
    /* later elements after an agent prefix stand alone */
    assert_true(sm_header_has_token("googlebot: nofollow, noindex",
                                    "noindex"));
}

static void test_header_token_no_match(void **state)
{
    (void)state;

    assert_false(sm_header_has_token(NULL, "noindex"));
    assert_false(sm_header_has_token("", "noindex"));
    assert_false(sm_header_has_token(" , ,", "noindex"));
    assert_false(sm_header_has_token("noindex", ""));
    assert_false(sm_header_has_token("noindex", NULL));
    /* never a substring */
    assert_false(sm_header_has_token("noindexer", "noindex"));
    assert_false(sm_header_has_token("xnoindex", "noindex"));
    assert_false(sm_header_has_token("unprivate", "private"));
    assert_false(sm_header_has_token("privately", "private"));
    assert_false(sm_header_has_token("no-store-x", "no-store"));
    assert_false(sm_header_has_token("no index", "noindex"));
    assert_false(sm_header_has_token("googlebot: noindexer", "noindex"));
    assert_false(sm_header_has_token("googlebot: xnone", "none"));
    /* a value is not a token, nor is an agent name */
    assert_false(sm_header_has_token("max-age=private", "private"));
    assert_false(sm_header_has_token("foo=noindex", "noindex"));
    assert_false(sm_header_has_token("noindex: nofollow", "noindex"));
    assert_false(sm_header_has_token(": noindex x", "noindex"));
    /* nor what is inside a quoted string, commas included */
    assert_false(sm_header_has_token("no-cache=\"private\"", "private"));
    assert_false(sm_header_has_token("no-cache=\"a, private, b\"",
                                     "private"));
    assert_false(sm_header_has_token("x=\"a\\\", private, b\"", "private"));
    /* but after the quoted string ends, a token counts again */
    assert_true(sm_header_has_token("no-cache=\"a, b\", private", "private"));
    assert_true(sm_header_has_token("x=\"a\\\"b\",private", "private"));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_record_baseline),
        T(test_record_subrequest),
        T(test_record_method),
        T(test_record_status),
        T(test_record_content_type),
        T(test_record_authenticated),
        T(test_record_x_robots_tag),
        T(test_record_cache_control),
        T(test_record_path_info),
        T(test_session_cookies),
        T(test_record_target),
        T(test_record_too_long),
        T(test_record_excludes),
        T(test_forget),
        T(test_forget_ignores_record_conditions),
        T(test_decide_null_out),
        T(test_regex_match),
        T(test_regex_compile_error),
        T(test_regex_pool_lifetime),
        T(test_regex_threads),
        T(test_header_token),
        T(test_header_token_no_match),
    };
#undef T
    int rc;

    apr_initialize();
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    apr_terminate();
    return rc;
}
