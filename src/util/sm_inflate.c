/* SPDX-License-Identifier: Apache-2.0 */
/* sm_inflate.c: see sm_inflate.h. */
#include "util/sm_inflate.h"

#include <apr_lib.h>
#include <apr_strings.h>
#include <string.h>
#include <zlib.h>

#define OUT_SIZE 16384

struct sm_inflate {
    z_stream zs;
    int coding;
    int started;            /* zlib initialised */
    int raw_tried;          /* deflate: raw deflate after a zlib header failed */
    int done;
    apr_status_t status;
    apr_size_t in_seen;     /* input bytes given so far */
    apr_off_t out;
    sm_sink *sink;
    void *baton;
    unsigned char buf[OUT_SIZE];
};

int sm_inflate_coding(const char *ce)
{
    apr_size_t n;

    if (!ce)
        return 0;
    while (apr_isspace(*ce))
        ce++;
    n = strlen(ce);
    while (n && apr_isspace(ce[n - 1]))
        n--;
    if ((n == 4 && strncasecmp(ce, "gzip", 4) == 0)
        || (n == 6 && strncasecmp(ce, "x-gzip", 6) == 0))
        return 1;
    if (n == 7 && strncasecmp(ce, "deflate", 7) == 0)
        return 2;
    return 0;
}

static apr_status_t cleanup(void *data)
{
    sm_inflate *z = data;
    if (z->started)
        inflateEnd(&z->zs);
    z->started = 0;
    return APR_SUCCESS;
}

/* gzip: 16 + 15 (gzip only); deflate: 15 (zlib), then -15 (raw). */
static apr_status_t start(sm_inflate *z, int window_bits)
{
    if (z->started)
        inflateEnd(&z->zs);
    memset(&z->zs, 0, sizeof(z->zs));
    z->started = inflateInit2(&z->zs, window_bits) == Z_OK;
    return z->started ? APR_SUCCESS : APR_ENOMEM;
}

apr_status_t sm_inflate_create(sm_inflate **out, apr_pool_t *p, int coding,
                               sm_sink *sink, void *baton)
{
    sm_inflate *z = apr_pcalloc(p, sizeof(*z));
    apr_status_t rv;

    z->coding = coding;
    z->sink = sink;
    z->baton = baton;
    apr_pool_cleanup_register(p, z, cleanup, apr_pool_cleanup_null);
    rv = start(z, coding == 1 ? 16 + MAX_WBITS : MAX_WBITS);
    if (rv == APR_SUCCESS)
        *out = z;
    return rv;
}

static apr_status_t run(sm_inflate *z, const char *data, apr_size_t len)
{
    z->zs.next_in = (Bytef *)data;
    z->zs.avail_in = (uInt)len;
    while (z->zs.avail_in && !z->done) {
        apr_size_t have;
        int zr;

        z->zs.next_out = z->buf;
        z->zs.avail_out = OUT_SIZE;
        zr = inflate(&z->zs, Z_NO_FLUSH);
        if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
            return APR_EINVAL;
        have = OUT_SIZE - z->zs.avail_out;
        if (have) {
            apr_status_t rv = z->sink(z->baton, (const char *)z->buf, have);
            z->out += have;
            if (rv != APR_SUCCESS)
                return rv;
        }
        if (zr == Z_STREAM_END)
            z->done = 1;
        else if (zr == Z_BUF_ERROR && !have)
            break;
    }
    return APR_SUCCESS;
}

apr_status_t sm_inflate_feed(sm_inflate *z, const char *data, apr_size_t len)
{
    apr_status_t rv;

    if (z->status != APR_SUCCESS || z->done || !len)
        return z->status;
    /* "deflate" is zlib-wrapped by the standard, raw from some servers:
     * a zlib header that fails before any output means raw. */
    if (z->coding == 2 && !z->raw_tried && z->in_seen == 0 && len >= 2
        && ((((unsigned char)data[0] << 8) | (unsigned char)data[1]) % 31
            != 0 || (data[0] & 0x0f) != Z_DEFLATED)) {
        z->raw_tried = 1;
        if ((rv = start(z, -MAX_WBITS)) != APR_SUCCESS)
            return z->status = rv;
    }
    z->in_seen += len;
    return z->status = run(z, data, len);
}

int sm_inflate_done(const sm_inflate *z)
{
    return z->done;
}

apr_off_t sm_inflate_out_bytes(const sm_inflate *z)
{
    return z->out;
}
