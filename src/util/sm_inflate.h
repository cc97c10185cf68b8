/* SPDX-License-Identifier: Apache-2.0 */
/* sm_inflate.h: a streaming decoder (zlib) for the bodies a handler or a
 * backend sends with "Content-Encoding: gzip" (or x-gzip) or "deflate",
 * so that the head reader and the robots.txt filter read the text, not
 * its encoding.  Memory is zlib's state and one 16 KiB window of output,
 * whatever the body's size. */
#ifndef SM_INFLATE_H
#define SM_INFLATE_H

#include <apr_pools.h>

#include "util/sm_sink.h"

typedef struct sm_inflate sm_inflate;

/* The coding a Content-Encoding value names if the decoder reads it: 1
 * gzip / x-gzip, 2 deflate (zlib, or the raw deflate some servers send),
 * 0 anything else (none, identity, br, zstd, a list of codings). */
int sm_inflate_coding(const char *content_encoding);

/* A decoder (coding from sm_inflate_coding, not 0) handing what it
 * decodes to sink; zlib's state is freed with p. */
apr_status_t sm_inflate_create(sm_inflate **out, apr_pool_t *p, int coding,
                               sm_sink *sink, void *baton);

/* Decode len more bytes of the body.  APR_SUCCESS (also once the stream
 * has ended: what follows it is ignored), the sink's first failure, or
 * APR_EINVAL for data that is not of the coding (the sink may have been
 * given a part).  After an error every call returns it again. */
apr_status_t sm_inflate_feed(sm_inflate *z, const char *data,
                             apr_size_t len);

/* The stream's end was seen. */
int sm_inflate_done(const sm_inflate *z);

/* Decoded bytes handed to the sink so far. */
apr_off_t sm_inflate_out_bytes(const sm_inflate *z);

#endif
