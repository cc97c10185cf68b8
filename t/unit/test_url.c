/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of URL normalisation (paths, queries, request targets, the
 * length limit) and of base URL validation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <apr_general.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include <apr_tables.h>

#include <string.h>

#include "util/sm_url.h"

static int setup(void **state)
{
    apr_pool_t *p;

    if (apr_pool_create(&p, NULL) != APR_SUCCESS)
        return -1;
    *state = p;
    return 0;
}

static int teardown(void **state)
{
    apr_pool_destroy(*state);
    return 0;
}

/* An allow list from a NULL-terminated list of names. */
static apr_array_header_t *names(apr_pool_t *p, ...)
{
    apr_array_header_t *a = apr_array_make(p, 4, sizeof(const char *));
    const char *n;
    va_list ap;

    va_start(ap, p);
    while ((n = va_arg(ap, const char *)) != NULL)
        APR_ARRAY_PUSH(a, const char *) = n;
    va_end(ap);
    return a;
}

static const char *st_name(sm_url_status st)
{
    switch (st) {
    case SM_URL_OK:            return "OK";
    case SM_URL_BAD_ESCAPE:    return "BAD_ESCAPE";
    case SM_URL_NOT_PATH:      return "NOT_PATH";
    case SM_URL_QUERY_REFUSED: return "QUERY_REFUSED";
    case SM_URL_TOO_LONG:      return "TOO_LONG";
    case SM_URL_CONTROL:       return "CONTROL";
    }
    return "?";
}

/* ---- helpers: each failure names its input ------------------------------ */

#define PATH_IS(raw, want) path_is(p, raw, sizeof(raw) - 1, want)
#define PATH_FAILS(raw, want) path_fails(p, raw, sizeof(raw) - 1, want)

static void path_is(apr_pool_t *p, const char *raw, apr_size_t len,
                    const char *want)
{
    char *out = (char *)"unset";
    sm_url_status st = sm_url_normalize_path(p, raw, len, &out);

    if (st != SM_URL_OK)
        fail_msg("path '%s': %s, want '%s'", raw, st_name(st), want);
    if (!out || strcmp(out, want) != 0)
        fail_msg("path '%s': got '%s', want '%s'", raw,
                 out ? out : "(null)", want);
}

static void path_fails(apr_pool_t *p, const char *raw, apr_size_t len,
                       sm_url_status want)
{
    char *out = (char *)"unset";
    sm_url_status st = sm_url_normalize_path(p, raw, len, &out);

    if (st != want)
        fail_msg("path '%s': %s, want %s", raw, st_name(st), st_name(want));
    assert_null(out);
}

static void query_is(apr_pool_t *p, const char *raw,
                     const apr_array_header_t *allow, const char *want)
{
    char *out = (char *)"unset";
    sm_url_status st = sm_url_normalize_query(p, raw, allow, &out);

    if (st != SM_URL_OK)
        fail_msg("query '%s': %s, want '%s'", raw, st_name(st),
                 want ? want : "(null)");
    if (!want ? out != NULL : (!out || strcmp(out, want) != 0))
        fail_msg("query '%s': got '%s', want '%s'", raw,
                 out ? out : "(null)", want ? want : "(null)");
}

static void query_fails(apr_pool_t *p, const char *raw,
                        const apr_array_header_t *allow, sm_url_status want)
{
    char *out = (char *)"unset";
    sm_url_status st = sm_url_normalize_query(p, raw, allow, &out);

    if (st != want)
        fail_msg("query '%s': %s, want %s", raw, st_name(st),
                 st_name(want));
    assert_null(out);
}

static void target_is(apr_pool_t *p, const char *target,
                      const apr_array_header_t *allow, apr_size_t base_len,
                      const char *want_path, const char *want_url)
{
    char *path = (char *)"unset", *url = (char *)"unset";
    sm_url_status st = sm_url_from_target(p, target, allow, base_len, &path,
                                          &url);

    if (st != SM_URL_OK)
        fail_msg("target '%.80s': %s, want '%.80s'", target, st_name(st),
                 want_url);
    if (!path || strcmp(path, want_path) != 0)
        fail_msg("target '%.80s': path '%.80s', want '%.80s'", target,
                 path ? path : "(null)", want_path);
    if (!url || strcmp(url, want_url) != 0)
        fail_msg("target '%.80s': url '%.80s', want '%.80s'", target,
                 url ? url : "(null)", want_url);
}

static void target_fails(apr_pool_t *p, const char *target,
                         const apr_array_header_t *allow,
                         apr_size_t base_len, sm_url_status want)
{
    char *path = (char *)"unset", *url = (char *)"unset";
    sm_url_status st = sm_url_from_target(p, target, allow, base_len, &path,
                                          &url);

    if (st != want)
        fail_msg("target '%.80s': %s, want %s", target ? target : "(null)",
                 st_name(st), st_name(want));
    assert_null(path);
    assert_null(url);
}

static void base_is(apr_pool_t *p, const char *in, const char *want)
{
    const char *err = NULL;
    const char *got = sm_url_parse_base(p, in, &err);

    if (!got)
        fail_msg("base '%s': refused (%s), want '%s'", in,
                 err ? err : "no error", want);
    if (strcmp(got, want) != 0)
        fail_msg("base '%s': got '%s', want '%s'", in, got, want);
}

/* Refused, with an error sentence containing `about`. */
static void base_fails(apr_pool_t *p, const char *in, const char *about)
{
    const char *err = NULL;
    const char *got = sm_url_parse_base(p, in, &err);

    if (got)
        fail_msg("base '%s': accepted as '%s'", in ? in : "(null)", got);
    if (!err || !*err)
        fail_msg("base '%s': no error message", in ? in : "(null)");
    if (about && !strstr(err, about))
        fail_msg("base '%s': error '%s' does not mention '%s'", in, err,
                 about);
}

/* ---- paths ----------------------------------------------------------------- */

static void test_path_literals_kept(void **state)
{
    apr_pool_t *p = *state;

    PATH_IS("/", "/");
    PATH_IS("/index.html", "/index.html");
    PATH_IS("/a/b/c", "/a/b/c");
    PATH_IS("/AZaz09-._~", "/AZaz09-._~");
    /* sub-delims, ':' and '@' stay literal */
    PATH_IS("/a&b", "/a&b");
    PATH_IS("/it's", "/it's");
    PATH_IS("/!$&'()*+,;=:@", "/!$&'()*+,;=:@");
    PATH_IS("/user@host:8080", "/user@host:8080");
}

static void test_path_bytes_encoded(void **state)
{
    apr_pool_t *p = *state;

    PATH_IS("/a b", "/a%20b");
    PATH_IS("/\"quoted\"", "/%22quoted%22");
    PATH_IS("/<tag>", "/%3Ctag%3E");
    PATH_IS("/a\\b^c`d{e|f}", "/a%5Cb%5Ec%60d%7Be%7Cf%7D");
    PATH_IS("/[v]", "/%5Bv%5D");
    PATH_IS("/caf\xc3\xa9", "/caf%C3%A9");
    PATH_IS("/\xff\x80", "/%FF%80");
    /* '?' and '#' cannot be literal in a path */
    PATH_IS("/a?b#c", "/a%3Fb%23c");
    /* the hex is uppercase */
    PATH_IS("/\xab", "/%AB");
}

static void test_path_escapes(void **state)
{
    apr_pool_t *p = *state;

    /* uppercased */
    PATH_IS("/caf%c3%a9", "/caf%C3%A9");
    PATH_IS("/caf%C3%a9", "/caf%C3%A9");
    PATH_IS("/a%20b", "/a%20b");
    /* escapes of unreserved characters are decoded */
    PATH_IS("/%41", "/A");
    PATH_IS("/%7e", "/~");
    PATH_IS("/%7Euser", "/~user");
    PATH_IS("/%61%62%63%2D%5f%30", "/abc-_0");
    /* escapes of everything else stay escaped */
    PATH_IS("/a%2fb", "/a%2Fb");
    PATH_IS("/%2F", "/%2F");
    PATH_IS("/%3a%40%26%27", "/%3A%40%26%27");
    PATH_IS("/%25", "/%25");
    PATH_IS("/%2541", "/%2541");
    PATH_IS("/%3F%23", "/%3F%23");
    /* the two spellings of one byte give one result */
    PATH_IS("/%C3%A9", "/%C3%A9");
    PATH_IS("/\xc3\xa9", "/%C3%A9");
}

static void test_path_bad_escapes(void **state)
{
    apr_pool_t *p = *state;

    PATH_FAILS("/%zz", SM_URL_BAD_ESCAPE);
    PATH_FAILS("/%4", SM_URL_BAD_ESCAPE);
    PATH_FAILS("/a%", SM_URL_BAD_ESCAPE);
    PATH_FAILS("/%", SM_URL_BAD_ESCAPE);
    PATH_FAILS("/%4g", SM_URL_BAD_ESCAPE);
    PATH_FAILS("/%g4", SM_URL_BAD_ESCAPE);
    PATH_FAILS("/%%41", SM_URL_BAD_ESCAPE);
    PATH_FAILS("/ok/%-1/x", SM_URL_BAD_ESCAPE);
    /* the escape must be inside the given length */
    path_fails(p, "/a%41", 4, SM_URL_BAD_ESCAPE);
    path_is(p, "/a%41", 5, "/aA");
}

static void test_path_not_path(void **state)
{
    apr_pool_t *p = *state;

    path_fails(p, "", 0, SM_URL_NOT_PATH);
    path_fails(p, "/", 0, SM_URL_NOT_PATH);
    PATH_FAILS("a", SM_URL_NOT_PATH);
    PATH_FAILS("a/b", SM_URL_NOT_PATH);
    PATH_FAILS("%2F", SM_URL_NOT_PATH);
    PATH_FAILS("*", SM_URL_NOT_PATH);
    /* a raw NUL byte inside the given length */
    PATH_FAILS("/a\0b", SM_URL_NOT_PATH);
    /* only the given length is read */
    path_is(p, "/ab/cd", 3, "/ab");
}

static void test_path_dot_segments(void **state)
{
    apr_pool_t *p = *state;

    PATH_IS("/.", "/");
    PATH_IS("/..", "/");
    PATH_IS("/./", "/");
    PATH_IS("/../", "/");
    PATH_IS("/a/./b", "/a/b");
    PATH_IS("/a/../b", "/b");
    PATH_IS("/a/b/..", "/a/");
    PATH_IS("/a/b/.", "/a/b/");
    PATH_IS("/a/b/../", "/a/");
    PATH_IS("/a/..", "/");
    PATH_IS("/a/b/c/./../../g", "/a/g");
    PATH_IS("/a/b/../../../c", "/c");
    PATH_IS("/../x", "/x");
    PATH_IS("/../../../x/y", "/x/y");
    PATH_IS("/./a/./b/./", "/a/b/");
    /* written as escapes, after decoding */
    PATH_IS("/a/%2e%2E/b", "/b");
    PATH_IS("/a/%2e/b", "/a/b");
    PATH_IS("/a/.%2e/b", "/b");
    PATH_IS("/a/b/%2E%2E", "/a/");
    PATH_IS("/%2e%2e/x", "/x");
    /* not dot segments */
    PATH_IS("/a/.../b", "/a/.../b");
    PATH_IS("/a/..b/c", "/a/..b/c");
    PATH_IS("/a/b../c", "/a/b../c");
    PATH_IS("/a/.b", "/a/.b");
    PATH_IS("/.htaccess", "/.htaccess");
    PATH_IS("/a/%2F../b", "/a/%2F../b");
    PATH_IS("/a/..%2Fb", "/a/..%2Fb");
    PATH_IS("/a/%2e%2e%2fb", "/a/..%2Fb");
}

static void test_path_slashes(void **state)
{
    apr_pool_t *p = *state;

    PATH_IS("//", "/");
    PATH_IS("///", "/");
    PATH_IS("/a//b", "/a/b");
    PATH_IS("//a///b//", "/a/b/");
    PATH_IS("/a/", "/a/");
    PATH_IS("/a/.//./b", "/a/b");
    PATH_IS("/a//..//b", "/b");
    /* an escaped slash is no separator and is not merged */
    PATH_IS("/a%2f%2Fb", "/a%2F%2Fb");
    PATH_IS("/a/%2F/b", "/a/%2F/b");
    PATH_IS("/%2F", "/%2F");
}

/* ---- queries --------------------------------------------------------------- */

static void test_query_allowed(void **state)
{
    apr_pool_t *p = *state;
    apr_array_header_t *allow = names(p, "q", "page", NULL);

    query_is(p, "q=1", allow, "q=1");
    query_is(p, "q=1&page=2", allow, "q=1&page=2");
    /* the order of the fields is kept */
    query_is(p, "page=2&q=1", allow, "page=2&q=1");
    query_is(p, "q=1&q=2&q=1", allow, "q=1&q=2&q=1");
    /* a name alone, or with an empty value */
    query_is(p, "q", allow, "q");
    query_is(p, "q=", allow, "q=");
    /* the name ends at the first '=' */
    query_is(p, "q=a=b", allow, "q=a=b");
}

static void test_query_refused(void **state)
{
    apr_pool_t *p = *state;
    apr_array_header_t *allow = names(p, "q", "page", NULL);

    query_fails(p, "x=1", allow, SM_URL_QUERY_REFUSED);
    /* partly allowed is refused */
    query_fails(p, "q=1&x=2", allow, SM_URL_QUERY_REFUSED);
    query_fails(p, "x=2&q=1", allow, SM_URL_QUERY_REFUSED);
    /* compared exactly */
    query_fails(p, "Q=1", allow, SM_URL_QUERY_REFUSED);
    query_fails(p, "qq=1", allow, SM_URL_QUERY_REFUSED);
    query_fails(p, "pag=1", allow, SM_URL_QUERY_REFUSED);
    query_fails(p, "=1", allow, SM_URL_QUERY_REFUSED);
    query_fails(p, "q%00=1", allow, SM_URL_CONTROL);
    /* an escaped '=' is part of the name */
    query_fails(p, "q%3D1", allow, SM_URL_QUERY_REFUSED);
    /* ';' is no separator: "x" is inside the value of "q" */
    query_is(p, "q=1;x=2", allow, "q=1;x=2");
    query_fails(p, "q=1;x=2", names(p, "x", NULL), SM_URL_QUERY_REFUSED);
}

static void test_query_nothing_allowed(void **state)
{
    apr_pool_t *p = *state;
    apr_array_header_t *empty = names(p, NULL);

    query_fails(p, "a=1", NULL, SM_URL_QUERY_REFUSED);
    query_fails(p, "a=1", empty, SM_URL_QUERY_REFUSED);
    query_fails(p, "&a", NULL, SM_URL_QUERY_REFUSED);
    /* no field: no query, whatever the list */
    query_is(p, "", NULL, NULL);
    query_is(p, "", empty, NULL);
    query_is(p, "&", NULL, NULL);
    query_is(p, "&&&", empty, NULL);
    query_is(p, "&&", names(p, "a", NULL), NULL);
}

static void test_query_empty_fields(void **state)
{
    apr_pool_t *p = *state;
    apr_array_header_t *allow = names(p, "a", "b", NULL);

    query_is(p, "a=1&&b=2", allow, "a=1&b=2");
    query_is(p, "a=1&b=2&", allow, "a=1&b=2");
    query_is(p, "&a=1", allow, "a=1");
    query_is(p, "&&a=1&&&b=2&&", allow, "a=1&b=2");
}

static void test_query_names_decoded(void **state)
{
    apr_pool_t *p = *state;
    apr_array_header_t *allow = names(p, "a b", "q", "caf\xc3\xa9", "x+y",
                                      NULL);

    /* '+' is a space in a name */
    query_is(p, "a+b=1", allow, "a+b=1");
    query_is(p, "a%20b=1", allow, "a%20b=1");
    /* names are compared decoded; the text stays canonical */
    query_is(p, "%71=1", allow, "q=1");
    query_is(p, "%61+%62=1", allow, "a+b=1");
    query_is(p, "caf%c3%a9=1", allow, "caf%C3%A9=1");
    query_is(p, "caf\xc3\xa9=1", allow, "caf%C3%A9=1");
    /* a literal '+' in a name can only be written %2B */
    query_is(p, "x%2By=1", allow, "x%2By=1");
    query_fails(p, "x+y=1", allow, SM_URL_QUERY_REFUSED);
    /* only the name is decoded for the comparison, not the value */
    query_is(p, "q=%61", allow, "q=a");
    query_is(p, "q=a+b", allow, "q=a+b");
}

static void test_query_normalised(void **state)
{
    apr_pool_t *p = *state;
    apr_array_header_t *allow = names(p, "q", NULL);

    query_is(p, "q=a b", allow, "q=a%20b");
    query_is(p, "q=%c3%a9", allow, "q=%C3%A9");
    query_is(p, "q=\xc3\xa9", allow, "q=%C3%A9");
    query_is(p, "q=%7E%41", allow, "q=~A");
    query_is(p, "q=%2B%26%3D%25", allow, "q=%2B%26%3D%25");
    /* '/' and '?' may be literal in a query */
    query_is(p, "q=/a/b?c", allow, "q=/a/b?c");
    query_is(p, "q=!$()*+,;:@", allow, "q=!$()*+,;:@");
    /* '\'' is encoded in a query, as WHATWG URL and w3lib do; not in a
     * path */
    query_is(p, "q='x'", allow, "q=%27x%27");
    query_is(p, "q=%27", allow, "q=%27");
    query_is(p, "q=\"<>\\^`{|}", allow, "q=%22%3C%3E%5C%5E%60%7B%7C%7D");
    query_is(p, "q=#", allow, "q=%23");
    /* no dot-segment or slash processing in a query */
    query_is(p, "q=/a/../b//c", allow, "q=/a/../b//c");
    query_fails(p, "q=%zz", allow, SM_URL_BAD_ESCAPE);
    query_fails(p, "q=%4", allow, SM_URL_BAD_ESCAPE);
    query_fails(p, "q=1&q=%", allow, SM_URL_BAD_ESCAPE);
    query_fails(p, "q%=1", allow, SM_URL_BAD_ESCAPE);
}

/* ---- request targets ------------------------------------------------------- */

static void test_target_origin_form(void **state)
{
    apr_pool_t *p = *state;
    apr_array_header_t *allow = names(p, "q", NULL);

    target_is(p, "/", NULL, 0, "/", "/");
    target_is(p, "/a/./b//c", NULL, 0, "/a/b/c", "/a/b/c");
    target_is(p, "/a?q=1", allow, 0, "/a", "/a?q=1");
    target_is(p, "/a/../b?q=%7e", allow, 0, "/b", "/b?q=~");
    /* empty queries */
    target_is(p, "/a?", NULL, 0, "/a", "/a");
    target_is(p, "/a?&&", NULL, 0, "/a", "/a");
    target_is(p, "/a?&q=1&", allow, 0, "/a", "/a?q=1");
    /* "//" at the start is still a path, not an authority */
    target_is(p, "//a//b", NULL, 0, "/a/b", "/a/b");
    /* a '?' after the first belongs to the query */
    target_is(p, "/a?q=b?c", allow, 0, "/a", "/a?q=b?c");
}

static void test_target_fragment(void **state)
{
    apr_pool_t *p = *state;
    apr_array_header_t *allow = names(p, "q", NULL);

    target_is(p, "/a#frag", NULL, 0, "/a", "/a");
    target_is(p, "/a#", NULL, 0, "/a", "/a");
    target_is(p, "/a?q=1#frag", allow, 0, "/a", "/a?q=1");
    target_is(p, "/a?#frag", NULL, 0, "/a", "/a");
    /* a refused parameter after '#' does not count */
    target_is(p, "/a#?x=1", NULL, 0, "/a", "/a");
    target_is(p, "/a?q=1#&x=2", allow, 0, "/a", "/a?q=1");
    /* nor does a bad escape */
    target_is(p, "/a#%zz", NULL, 0, "/a", "/a");
}

static void test_target_absolute_form(void **state)
{
    apr_pool_t *p = *state;
    apr_array_header_t *allow = names(p, "q", NULL);

    target_is(p, "http://example.com/a/b", NULL, 0, "/a/b", "/a/b");
    target_is(p, "https://example.com/a?q=1", allow, 0, "/a", "/a?q=1");
    target_is(p, "HTTP://Example.COM:8080/A/%7e", NULL, 0, "/A/~", "/A/~");
    /* the authority is ignored, whatever it is */
    target_is(p, "http://other.example/x", NULL, 0, "/x", "/x");
    target_is(p, "http://user@[::1]:81/x", NULL, 0, "/x", "/x");
    /* an empty path is "/" */
    target_is(p, "http://example.com", NULL, 0, "/", "/");
    target_is(p, "https://example.com?q=1", allow, 0, "/", "/?q=1");
    target_is(p, "http://example.com#f", NULL, 0, "/", "/");
    target_is(p, "http://example.com/../a//b/", NULL, 0, "/a/b/", "/a/b/");
    target_fails(p, "http://example.com/?x=1", allow, 0,
                 SM_URL_QUERY_REFUSED);
    /* every query byte grows to three after an empty path */
    target_is(p, "http://h?\xc3\xa9", names(p, "\xc3\xa9", NULL), 0, "/",
              "/?%C3%A9");
}

static void test_target_not_path(void **state)
{
    apr_pool_t *p = *state;

    target_fails(p, "*", NULL, 0, SM_URL_NOT_PATH);
    target_fails(p, "", NULL, 0, SM_URL_NOT_PATH);
    target_fails(p, "x", NULL, 0, SM_URL_NOT_PATH);
    target_fails(p, "a/b", NULL, 0, SM_URL_NOT_PATH);
    target_fails(p, "?q=1", NULL, 0, SM_URL_NOT_PATH);
    target_fails(p, "#f", NULL, 0, SM_URL_NOT_PATH);
    target_fails(p, "example.com:443", NULL, 0, SM_URL_NOT_PATH);
    target_fails(p, "ftp://example.com/a", NULL, 0, SM_URL_NOT_PATH);
    target_fails(p, "http:/a", NULL, 0, SM_URL_NOT_PATH);
    target_fails(p, "httpx://h/a", NULL, 0, SM_URL_NOT_PATH);
    target_fails(p, " /a", NULL, 0, SM_URL_NOT_PATH);
    target_fails(p, NULL, NULL, 0, SM_URL_NOT_PATH);
}

static void test_target_errors(void **state)
{
    apr_pool_t *p = *state;
    apr_array_header_t *allow = names(p, "q", NULL);

    target_fails(p, "/a%zz", allow, 0, SM_URL_BAD_ESCAPE);
    target_fails(p, "/a%2", NULL, 0, SM_URL_BAD_ESCAPE);
    target_fails(p, "http://h/%", NULL, 0, SM_URL_BAD_ESCAPE);
    target_fails(p, "/a?q=%g0", allow, 0, SM_URL_BAD_ESCAPE);
    target_fails(p, "/a?x=1", allow, 0, SM_URL_QUERY_REFUSED);
    target_fails(p, "/a?x=1", NULL, 0, SM_URL_QUERY_REFUSED);
    target_fails(p, "/a?q=1&x=1", allow, 0, SM_URL_QUERY_REFUSED);
}

/* A path of exactly len characters: "/" then 'a's. */
static char *path_of(apr_pool_t *p, apr_size_t len)
{
    char *s = apr_palloc(p, len + 1);
    memset(s, 'a', len);
    s[0] = '/';
    s[len] = '\0';
    return s;
}

static void test_target_length_limit(void **state)
{
    apr_pool_t *p = *state;
    const apr_size_t base = strlen("https://www.example.com");
    apr_array_header_t *allow = names(p, "q", NULL);
    char *t, *u;

    assert_int_equal(SM_URL_MAX, 2048);
    /* base + path exactly 2048: fits; 2049: too long */
    t = path_of(p, 2048 - base);
    target_is(p, t, NULL, base, t, t);
    target_fails(p, path_of(p, 2049 - base), NULL, base, SM_URL_TOO_LONG);
    /* without a base */
    t = path_of(p, 2048);
    target_is(p, t, NULL, 0, t, t);
    target_fails(p, path_of(p, 2049), NULL, 0, SM_URL_TOO_LONG);
    /* the base counts in full */
    target_fails(p, "/", NULL, 2048, SM_URL_TOO_LONG);
    target_is(p, "/", NULL, 2047, "/", "/");

    /* '?' and the query count too */
    t = path_of(p, 2048 - base - 4);            /* + "?q=1" = 2048 */
    u = apr_pstrcat(p, t, "?q=1", NULL);
    target_is(p, u, allow, base, t, u);
    u = apr_pstrcat(p, t, "?q=12", NULL);
    target_fails(p, u, allow, base, SM_URL_TOO_LONG);
    /* a dropped query or fragment does not */
    target_is(p, apr_pstrcat(p, t, "a?&&&#xxxxxxxx", NULL), NULL, base,
              apr_pstrcat(p, t, "a", NULL), apr_pstrcat(p, t, "a", NULL));

    /* the canonical length counts, not the raw one */
    t = path_of(p, 2048 - base - 3);
    u = apr_pstrcat(p, t, "%41", NULL);         /* raw 2048 - base */
    target_is(p, apr_pstrcat(p, u, "%41", NULL), NULL, base,
              apr_pstrcat(p, t, "AA", NULL), apr_pstrcat(p, t, "AA", NULL));
    target_is(p, apr_pstrcat(p, t, "/x/../", NULL), NULL, base,
              apr_pstrcat(p, t, "/", NULL), apr_pstrcat(p, t, "/", NULL));
    /* a space grows to three characters */
    t = path_of(p, 2048 - base - 2);
    target_is(p, apr_pstrcat(p, t, "x", NULL), NULL, base,
              apr_pstrcat(p, t, "x", NULL), apr_pstrcat(p, t, "x", NULL));
    target_fails(p, apr_pstrcat(p, t, " ", NULL), NULL, base,
                 SM_URL_TOO_LONG);
}

static void test_status_str(void **state)
{
    const char *s[5];
    int i, j;
    (void)state;

    s[0] = sm_url_status_str(SM_URL_OK);
    s[1] = sm_url_status_str(SM_URL_BAD_ESCAPE);
    s[2] = sm_url_status_str(SM_URL_NOT_PATH);
    s[3] = sm_url_status_str(SM_URL_QUERY_REFUSED);
    s[4] = sm_url_status_str(SM_URL_TOO_LONG);
    for (i = 0; i < 5; i++) {
        assert_non_null(s[i]);
        assert_true(strlen(s[i]) > 0);
        for (j = 0; j < i; j++)
            assert_string_not_equal(s[i], s[j]);
    }
    assert_non_null(sm_url_status_str((sm_url_status)99));
}

/* ---- base URLs ------------------------------------------------------------- */

static void test_base_valid(void **state)
{
    apr_pool_t *p = *state;

    base_is(p, "http://example.com", "http://example.com");
    base_is(p, "https://example.com", "https://example.com");
    base_is(p, "http://example.com/", "http://example.com");
    base_is(p, "HTTP://WWW.Example.COM/", "http://www.example.com");
    base_is(p, "HttpS://Example.com", "https://example.com");
    /* default ports dropped, others kept */
    base_is(p, "http://example.com:80", "http://example.com");
    base_is(p, "https://example.com:443/", "https://example.com");
    base_is(p, "http://example.com:443", "http://example.com:443");
    base_is(p, "https://example.com:80", "https://example.com:80");
    base_is(p, "http://example.com:8080/", "http://example.com:8080");
    base_is(p, "http://example.com:1", "http://example.com:1");
    base_is(p, "http://example.com:65535", "http://example.com:65535");
    base_is(p, "http://example.com:0080", "http://example.com");
    /* addresses */
    base_is(p, "http://127.0.0.1:8000", "http://127.0.0.1:8000");
    base_is(p, "http://[::1]", "http://[::1]");
    base_is(p, "http://[::1]/", "http://[::1]");
    base_is(p, "http://[::1]:8080", "http://[::1]:8080");
    base_is(p, "https://[::1]:443", "https://[::1]");
    base_is(p, "http://[2001:DB8:0:0::1]", "http://[2001:db8::1]");
    base_is(p, "http://my_host.local", "http://my_host.local");
    /* the fully qualified form's final dot is dropped */
    base_is(p, "http://Example.COM.", "http://example.com");
    base_is(p, "https://example.com.:8443/", "https://example.com:8443");
}

static void test_base_invalid(void **state)
{
    apr_pool_t *p = *state;

    base_fails(p, NULL, NULL);
    base_fails(p, "", "http or https");
    base_fails(p, "example.com", "http or https");
    base_fails(p, "/path", "http or https");
    base_fails(p, "ftp://example.com", "http or https");
    base_fails(p, "httpx://example.com", "http or https");
    base_fails(p, "http:example.com", NULL);
    base_fails(p, "http:/example.com", NULL);
    /* path, query, fragment */
    base_fails(p, "http://example.com/site", "no path");
    base_fails(p, "http://example.com/site/", "no path");
    base_fails(p, "http://example.com//", "no path");
    base_fails(p, "http://example.com/?", "query");
    base_fails(p, "http://example.com?a=1", "query");
    base_fails(p, "http://example.com#top", "fragment");
    base_fails(p, "http://example.com/#", "fragment");
    /* userinfo */
    base_fails(p, "http://user@example.com", "user");
    base_fails(p, "http://user:pw@example.com", "user");
    base_fails(p, "http://@example.com", "user");
    /* host */
    base_fails(p, "http://", "host");
    base_fails(p, "http:///", "host");
    base_fails(p, "http://:8080", "host");
    base_fails(p, "http://exa mple.com", "host");
    base_fails(p, "http://exa%6dple.com", "host");
    base_fails(p, "http://ex~ample.com", "host");
    base_fails(p, "http://a\\b.example", "host");
    base_fails(p, "http://caf\xc3\xa9.example", "A-label");
    base_fails(p, "http://example..com", "empty label");
    base_fails(p, "http://.example.com", "empty label");
    base_fails(p, "http://example.com..", "empty label");
    base_fails(p, "http://./", NULL);
    base_fails(p, "http://[::1", NULL);
    base_fails(p, "http://[zz::1]", "IPv6");
    base_fails(p, "http://[::1]x", NULL);
    base_fails(p, "http://::1", NULL);
    /* port */
    base_fails(p, "http://example.com:", "port");
    base_fails(p, "http://example.com:0", "port");
    base_fails(p, "http://example.com:65536", "port");
    base_fails(p, "http://example.com:99999999999999999999", "port");
    base_fails(p, "http://example.com:-1", "port");
    base_fails(p, "http://example.com:+80", "port");
    base_fails(p, "http://example.com:8a", NULL);
    base_fails(p, "http://[::1]:0", "port");
}

/* ---- the stored form ---------------------------------------------------- */

/* Whatever the normaliser stores passes the check that rows read back from
 * the store go through: every byte, literal and escaped, in a path and in
 * a query. */
static void test_stored_form_accepts_every_output(void **state)
{
    apr_pool_t *p = *state;
    apr_array_header_t *allow = names(p, "q", NULL);
    int b, escaped;

    for (b = 1; b < 256; b++) {
        for (escaped = 0; escaped < 2; escaped++) {
            char byte[4], *path, *url;
            const char *target;

            if (escaped)
                apr_snprintf(byte, sizeof(byte), "%%%02X", b);
            else
                byte[0] = (char)b, byte[1] = '\0';
            if (!escaped && (b == '%' || b == '#'))
                continue;
            target = apr_pstrcat(p, "/a", byte, "b?q=a", byte, "b", NULL);
            if (sm_url_from_target(p, target, allow, 0, &path, &url)
                != SM_URL_OK)
                continue;   /* '&' or '=' split the query field */
            if (!sm_url_is_stored_form(url))
                fail_msg("byte 0x%02X (%s): stored '%s' fails the check", b,
                         escaped ? "escaped" : "literal", url);
        }
    }
}

static void test_stored_form_refuses_tampered_rows(void **state)
{
    static const char *const bad[] = {
        "", "a", "http://x/", "/a\x01", "/a\x7f", "/caf\xc3\xa9",
        "/a\xff", "/a b", "/a<b", "/a\"b", "/a%zz", "/a%4", "/a%",
        "/a%e9", "/a%41", "/a%7E", "/a#b", "/a?q='x'", "/a?q=\t",
        "/a]", "/a{", NULL
    };
    static const char *const good[] = {
        "/", "/a'b", "/a?q=%27", "/a?q=/b?c", "/%C3%A9", "/a%2F", "/~u/",
        "/a?q=!$()*+,;:@", NULL
    };
    int i;
    (void)state;

    for (i = 0; bad[i]; i++)
        if (sm_url_is_stored_form(bad[i]))
            fail_msg("'%s' passes the stored-form check", bad[i]);
    for (i = 0; good[i]; i++)
        if (!sm_url_is_stored_form(good[i]))
            fail_msg("'%s' fails the stored-form check", good[i]);
    assert_false(sm_url_is_stored_form(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_path_literals_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_path_bytes_encoded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_path_escapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_path_bad_escapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_path_not_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_path_dot_segments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_path_slashes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_query_allowed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_query_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_query_nothing_allowed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_query_empty_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_query_names_decoded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_query_normalised, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_origin_form, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_fragment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_absolute_form, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_not_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_length_limit, setup, teardown),
        cmocka_unit_test(test_status_str),
        cmocka_unit_test_setup_teardown(test_stored_form_accepts_every_output, setup, teardown),
        cmocka_unit_test(test_stored_form_refuses_tampered_rows),
        cmocka_unit_test_setup_teardown(test_base_valid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_base_invalid, setup, teardown),
    };
    int rc;

    apr_initialize();
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    apr_terminate();
    return rc;
}
