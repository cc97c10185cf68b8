/* SPDX-License-Identifier: Apache-2.0 */
/* sm_gzip.c: see sm_gzip.h.  zlib does the compressing; only the plumbing
 * between it and a sink, and the header test, are here. */
#include "util/sm_gzip.h"

#include <apr_lib.h>
#include <apr_strings.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#define OUT_SIZE (64 * 1024)

struct sm_gzip {
    z_stream z;
    int live;               /* deflateInit done, deflateEnd not yet */
    sm_sink *sink;
    void *baton;
    apr_off_t out_bytes;
    unsigned char out[OUT_SIZE];
};

static apr_status_t gzip_cleanup(void *data)
{
    sm_gzip *gz = data;
    if (gz->live) {
        deflateEnd(&gz->z);
        gz->live = 0;
    }
    return APR_SUCCESS;
}

apr_status_t sm_gzip_create(sm_gzip **out, apr_pool_t *p, int level,
                            sm_sink *sink, void *baton)
{
    sm_gzip *gz = apr_palloc(p, sizeof(*gz));

    memset(&gz->z, 0, sizeof(gz->z));
    /* windowBits 15 + 16: a gzip wrapper, header with mtime 0. */
    if (deflateInit2(&gz->z, level, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return APR_ENOMEM;
    gz->live = 1;
    gz->sink = sink;
    gz->baton = baton;
    gz->out_bytes = 0;
    apr_pool_cleanup_register(p, gz, gzip_cleanup, apr_pool_cleanup_null);
    *out = gz;
    return APR_SUCCESS;
}

/* Run deflate over what is in z.next_in with flush, handing every full
 * (or, at the end, partial) output buffer to the sink. */
static apr_status_t pump(sm_gzip *gz, int flush)
{
    int zr;
    apr_status_t rv;

    do {
        gz->z.next_out = gz->out;
        gz->z.avail_out = OUT_SIZE;
        zr = deflate(&gz->z, flush);
        if (zr == Z_STREAM_ERROR)
            return APR_EGENERAL;
        if (gz->z.avail_out < OUT_SIZE) {
            apr_size_t n = OUT_SIZE - gz->z.avail_out;
            if ((rv = gz->sink(gz->baton, (const char *)gz->out, n))
                != APR_SUCCESS)
                return rv;
            gz->out_bytes += n;
        }
    } while (gz->z.avail_out == 0 || (flush == Z_FINISH
                                      && zr != Z_STREAM_END));
    return APR_SUCCESS;
}

apr_status_t sm_gzip_write(void *baton, const char *data, apr_size_t len)
{
    sm_gzip *gz = baton;
    apr_status_t rv;

    if (!gz->live)
        return APR_EINVAL;
    while (len) {
        /* avail_in is an unsigned int. */
        uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
        gz->z.next_in = (unsigned char *)data;
        gz->z.avail_in = n;
        if ((rv = pump(gz, Z_NO_FLUSH)) != APR_SUCCESS)
            return rv;
        data += n;
        len -= n;
    }
    return APR_SUCCESS;
}

apr_status_t sm_gzip_finish(sm_gzip *gz)
{
    apr_status_t rv;

    if (!gz->live)
        return APR_EINVAL;
    gz->z.next_in = NULL;
    gz->z.avail_in = 0;
    rv = pump(gz, Z_FINISH);
    gzip_cleanup(gz);
    return rv;
}

apr_off_t sm_gzip_out_bytes(const sm_gzip *gz)
{
    return gz->out_bytes;
}

/* Is the q parameter list starting at s (after the coding's ';') one that
 * refuses the coding (q=0, q=0.0, ... q=0.000)? */
static int q_is_zero(const char *s, const char *end)
{
    while (s < end) {
        const char *semi = memchr(s, ';', (apr_size_t)(end - s));
        const char *p = s, *stop = semi ? semi : end;
        while (p < stop && (*p == ' ' || *p == '\t'))
            p++;
        if (stop - p >= 2 && apr_tolower(p[0]) == 'q' && p[1] == '=') {
            p += 2;
            if (p >= stop || *p != '0')
                return 0;
            for (p++; p < stop && (*p == '.' || *p == '0'); p++)
                ;
            while (p < stop && (*p == ' ' || *p == '\t'))
                p++;
            return p == stop;
        }
        s = semi ? semi + 1 : end;
    }
    return 0;
}

int sm_accepts_gzip(const char *ae)
{
    const char *s = ae;

    if (!ae)
        return 0;
    while (*s) {
        const char *comma = strchr(s, ','), *end = comma ? comma
                                                         : s + strlen(s);
        const char *name = s, *name_end;
        apr_size_t n;

        while (name < end && (*name == ' ' || *name == '\t'))
            name++;
        name_end = name;
        while (name_end < end && *name_end != ';' && *name_end != ' '
               && *name_end != '\t')
            name_end++;
        n = (apr_size_t)(name_end - name);
        if (((n == 4 && strncasecmp(name, "gzip", 4) == 0)
             || (n == 6 && strncasecmp(name, "x-gzip", 6) == 0))) {
            const char *params = memchr(name_end, ';',
                                        (apr_size_t)(end - name_end));
            return !(params && q_is_zero(params + 1, end));
        }
        s = comma ? comma + 1 : end;
    }
    return 0;
}
