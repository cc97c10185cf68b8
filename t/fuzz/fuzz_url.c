/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_url: request targets, as the module and sitemapctl import see them
 * (sm_url_from_target, sm_url_normalize_path, sm_url_normalize_query).
 *
 * Input: one option byte (which SitemapAllowQuery list, a long base URL),
 * then the request target.  Invariants checked on every URL accepted:
 *   - the stored form holds only bytes a URL may hold literally, and '%'
 *     only before two uppercase hex digits that do not stand for an
 *     unreserved character;
 *   - the path starts with '/', has no empty, "." or ".." segment; the URL
 *     is the path, or the path, '?' and a query;
 *   - base + URL fit SM_URL_MAX;
 *   - normalising is idempotent: the stored form read back as a target
 *     gives itself, and each part normalised alone gives itself;
 *   - the path is what sm_url_normalize_path makes of the raw path;
 *   - sm_url_is_stored_form (the check of rows read back from the store)
 *     accepts every stored form. */
#include "fuzz.h"
#include "util/sm_url.h"

#include <apr_strings.h>
#include <apr_tables.h>
#include <ctype.h>
#include <stdlib.h>

static int is_unreserved(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
           || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_'
           || c == '~';
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Bytes of s[0..n) are all literal-safe for the part (in_query: also
 * '?'), escapes uppercase and never of an unreserved character. */
static void check_bytes(const char *s, size_t n, int in_query)
{
    size_t i;

    for (i = 0; i < n; i++) {
        int c = (unsigned char)s[i];

        if (c == '%') {
            FUZZ_ASSERT(i + 2 < n);
            FUZZ_ASSERT(hexval((unsigned char)s[i + 1]) >= 0
                        && hexval((unsigned char)s[i + 2]) >= 0);
            FUZZ_ASSERT(!is_unreserved(hexval((unsigned char)s[i + 1]) << 4
                                       | hexval((unsigned char)s[i + 2])));
            i += 2;
            continue;
        }
        FUZZ_ASSERT(is_unreserved(c) || strchr("!$&'()*+,;=:@/", c)
                    || (in_query && c == '?'));
        FUZZ_ASSERT(c != '\0');
    }
}

/* A control character (below 0x20, or 0x7F), literal or as an escape. */
static int has_control(const char *u)
{
    for (; *u; u++) {
        unsigned char c = (unsigned char)*u;
        if (c < 0x20 || c == 0x7f)
            return 1;
        if (c == '%' && isxdigit((unsigned char)u[1])
            && isxdigit((unsigned char)u[2])) {
            char hex[3] = { u[1], u[2], 0 };
            long v = strtol(hex, NULL, 16);
            if (v < 0x20 || v == 0x7f)
                return 1;
        }
    }
    return 0;
}

static void check_path(const char *path)
{
    size_t n = strlen(path);

    FUZZ_ASSERT(path[0] == '/');
    check_bytes(path, n, 0);
    FUZZ_ASSERT(!strstr(path, "//"));
    FUZZ_ASSERT(!strstr(path, "/./") && !strstr(path, "/../"));
    FUZZ_ASSERT(!(n >= 2 && strcmp(path + n - 2, "/.") == 0));
    FUZZ_ASSERT(!(n >= 3 && strcmp(path + n - 3, "/..") == 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    unsigned opt = fuzz_take_byte(&data, &size);
    apr_array_header_t *allow = NULL;
    apr_size_t base_len = (opt & 4) ? 2000 : 19;
    char *target = fuzz_cstr(data, size);
    char *path, *url, *path2, *url2, *alone;
    sm_url_status st;

    if (opt & 3) {
        allow = apr_array_make(p, 4, sizeof(char *));
        APR_ARRAY_PUSH(allow, const char *) = "page";
        if ((opt & 3) >= 2)
            APR_ARRAY_PUSH(allow, const char *) = "a b";
        if ((opt & 3) == 3)
            APR_ARRAY_PUSH(allow, const char *) = "";
    }

    st = sm_url_from_target(p, target, allow, base_len, &path, &url);
    if (st == SM_URL_OK) {
        size_t plen = strlen(path), ulen = strlen(url);

        check_path(path);
        FUZZ_ASSERT(strncmp(url, path, plen) == 0);
        FUZZ_ASSERT(ulen == plen || (url[plen] == '?' && ulen > plen + 1));
        if (ulen > plen)
            check_bytes(url + plen + 1, ulen - plen - 1, 1);
        FUZZ_ASSERT(base_len + ulen <= SM_URL_MAX);
        /* What the sitemap's writer checks rows read back with. */
        FUZZ_ASSERT(sm_url_is_stored_form(url));
        /* No control character, literal or escaped, is ever stored
         * (issue 33). */
        FUZZ_ASSERT(!has_control(url));

        /* Idempotent, whole and in parts. */
        FUZZ_ASSERT(sm_url_from_target(p, url, allow, base_len, &path2,
                                       &url2) == SM_URL_OK);
        FUZZ_ASSERT(strcmp(path2, path) == 0 && strcmp(url2, url) == 0);
        FUZZ_ASSERT(sm_url_normalize_path(p, path, plen, &alone)
                    == SM_URL_OK && strcmp(alone, path) == 0);
        if (ulen > plen) {
            FUZZ_ASSERT(sm_url_normalize_query(p, url + plen + 1, allow,
                                               &alone) == SM_URL_OK
                        && alone && strcmp(alone, url + plen + 1) == 0);
        }

        /* The path is the raw path normalised alone (origin-form). */
        if (target[0] == '/') {
            size_t rlen = strcspn(target, "?#");
            FUZZ_ASSERT(sm_url_normalize_path(p, target, rlen, &alone)
                        == SM_URL_OK && strcmp(alone, path) == 0);
        }
    }

    /* The raw path, NUL bytes and all. */
    {
        char *raw = malloc(size ? size : 1);
        if (!raw)
            abort();
        memcpy(raw, data, size);
        if (sm_url_normalize_path(p, raw, size, &path) == SM_URL_OK) {
            check_path(path);
            FUZZ_ASSERT(!has_control(path));
            FUZZ_ASSERT(strlen(path) <= 3 * size);
            FUZZ_ASSERT(sm_url_normalize_path(p, path, strlen(path), &path2)
                        == SM_URL_OK && strcmp(path, path2) == 0);
        }
        free(raw);
    }

    /* The raw query alone. */
    if (sm_url_normalize_query(p, target, allow, &url) == SM_URL_OK && url) {
        check_bytes(url, strlen(url), 1);
        FUZZ_ASSERT(strlen(url) <= 3 * strlen(target));
        FUZZ_ASSERT(sm_url_normalize_query(p, url, allow, &url2) == SM_URL_OK
                    && url2 && strcmp(url, url2) == 0);
    }

    free(target);
    apr_pool_destroy(p);
    return 0;
}
