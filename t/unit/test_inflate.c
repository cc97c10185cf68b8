/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of sm_inflate: gzip, zlib and raw deflate decoded in pieces,
 * data of another kind refused, a sink that stops the decoding. */
#include "unit.h"

#include "util/sm_inflate.h"

#include <zlib.h>

typedef struct {
    apr_pool_t *p;
    char *data;
    apr_size_t len;
    apr_size_t stop_after;      /* 0: never */
} collected;

static apr_status_t collect(void *baton, const char *data, apr_size_t len)
{
    collected *c = baton;
    char *n = apr_palloc(c->p, c->len + len + 1);
    memcpy(n, c->data, c->len);
    memcpy(n + c->len, data, len);
    c->len += len;
    n[c->len] = '\0';
    c->data = n;
    return c->stop_after && c->len >= c->stop_after ? APR_EOF : APR_SUCCESS;
}

/* text compressed with window_bits (31 gzip, 15 zlib, -15 raw) */
static unsigned char *compress_as(apr_pool_t *p, const char *text,
                                  int window_bits, apr_size_t *len)
{
    z_stream zs;
    uLong bound = compressBound((uLong)strlen(text)) + 32;
    unsigned char *out = apr_palloc(p, bound);

    memset(&zs, 0, sizeof(zs));
    assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, window_bits, 8,
                                  Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = (Bytef *)text;
    zs.avail_in = (uInt)strlen(text);
    zs.next_out = out;
    zs.avail_out = (uInt)bound;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    *len = bound - zs.avail_out;
    deflateEnd(&zs);
    return out;
}

static void roundtrip(apr_pool_t *p, const char *ce, int window_bits,
                      const char *text, apr_size_t piece)
{
    apr_size_t len, i;
    unsigned char *z = compress_as(p, text, window_bits, &len);
    collected c = { p, "", 0, 0 };
    sm_inflate *in;

    assert_int_equal(sm_inflate_create(&in, p, sm_inflate_coding(ce),
                                       collect, &c), APR_SUCCESS);
    for (i = 0; i < len; i += piece)
        assert_int_equal(sm_inflate_feed(in, (const char *)z + i,
                                         len - i < piece ? len - i : piece),
                         APR_SUCCESS);
    assert_true(sm_inflate_done(in));
    assert_string_equal(c.data, text);
    assert_int_equal(sm_inflate_out_bytes(in), (apr_off_t)strlen(text));
}

static void test_codings(void **state)
{
    apr_pool_t *p = ((unit_ctx *)*state)->pool;
    char *big = apr_palloc(p, 200001);
    int i;

    for (i = 0; i < 200000; i++)
        big[i] = "User-agent: *\nDisallow: /x/\n"[i % 28];
    big[200000] = '\0';
    assert_int_equal(sm_inflate_coding("gzip"), 1);
    assert_int_equal(sm_inflate_coding(" X-GZIP "), 1);
    assert_int_equal(sm_inflate_coding("deflate"), 2);
    assert_int_equal(sm_inflate_coding("identity"), 0);
    assert_int_equal(sm_inflate_coding("br"), 0);
    assert_int_equal(sm_inflate_coding("gzip, br"), 0);
    assert_int_equal(sm_inflate_coding(NULL), 0);
    roundtrip(p, "gzip", 31, "User-agent: *\nDisallow:\n", 1);
    roundtrip(p, "gzip", 31, big, 1000);
    roundtrip(p, "deflate", 15, big, 7);
    roundtrip(p, "deflate", -15, big, 4096);
}

static void test_refused_and_stopped(void **state)
{
    apr_pool_t *p = ((unit_ctx *)*state)->pool;
    collected c = { p, "", 0, 0 };
    sm_inflate *in;
    char *big = apr_palloc(p, 1000001);
    apr_size_t len;
    unsigned char *z;

    assert_int_equal(sm_inflate_create(&in, p, 1, collect, &c), APR_SUCCESS);
    assert_int_equal(sm_inflate_feed(in, "User-agent: *\n", 14), APR_EINVAL);
    assert_int_equal(sm_inflate_feed(in, "more", 4), APR_EINVAL);
    /* a sink that has enough: a megabyte of zeros stops after 64 KiB */
    memset(big, 'a', 1000000);
    big[1000000] = '\0';
    z = compress_as(p, big, 31, &len);
    c.stop_after = 65536;
    assert_int_equal(sm_inflate_create(&in, p, 1, collect, &c), APR_SUCCESS);
    assert_int_equal(sm_inflate_feed(in, (const char *)z, len), APR_EOF);
    assert_true(c.len < 65536 + 16384 + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_codings, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_refused_and_stopped, unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
