/* SPDX-License-Identifier: Apache-2.0 */
/* sm_gzip.h: gzip for sitemaps: a streaming compressor that is itself an
 * sm_sink (so a document can be written compressed to any sink), and
 * the Accept-Encoding test.
 *
 * The output is deterministic (zlib's gzip header with mtime 0 and no
 * name), so every server of a farm with the same zlib makes the same bytes
 * from the same document and may give them the same ETag. */
#ifndef SM_GZIP_H
#define SM_GZIP_H

#include <apr_pools.h>

#include "util/sm_sink.h"

/* The compression level of every gzip rendition.  Measured on a 6.8 MB,
 * 50,000-URL page (bench/RESULTS.md): level 1 costs 39 ms and gives 1.37
 * MB, level 6 (zlib's and mod_deflate's default) 97 ms for 1.22 MB (11%
 * smaller), level 9 260 ms.  The first request for a changed page pays
 * render + compress, and must stay within 3x a plain render (~21 ms): only
 * level 1 fits, and the 11% are paid once per crawler fetch of a page that
 * is sent at static-file cost anyway. */
#define SM_GZIP_LEVEL 1

typedef struct sm_gzip sm_gzip;

/* A compressor at level writing to sink; its zlib state (about 256 KiB at
 * level 1) is freed with p, or by sm_gzip_finish. */
apr_status_t sm_gzip_create(sm_gzip **out, apr_pool_t *p, int level,
                            sm_sink *sink, void *baton);

/* Compress len bytes (an sm_sink: baton is the sm_gzip). */
apr_status_t sm_gzip_write(void *baton, const char *data, apr_size_t len);

/* Flush the rest and the gzip trailer to the sink; frees zlib's state. */
apr_status_t sm_gzip_finish(sm_gzip *gz);

/* Bytes handed to the sink so far. */
apr_off_t sm_gzip_out_bytes(const sm_gzip *gz);

/* Does an Accept-Encoding header value (NULL: absent) accept gzip?  The
 * codings "gzip" and "x-gzip" (any case) count unless their q is 0
 * (RFC 9110, 12.5.3); "*" is not taken for gzip (plain is always
 * acceptable, so nothing is lost by sending it). */
int sm_accepts_gzip(const char *accept_encoding);

#endif
