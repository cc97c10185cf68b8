/* SPDX-License-Identifier: Apache-2.0 */
/* sm_sink.h: where streamed output goes.  The module's sinks pass bytes
 * down httpd's filter chain, sitemapctl's write a file; the XML writer,
 * gzip and inflate all write to one, so any of them can feed another. */
#ifndef SM_SINK_H
#define SM_SINK_H

#include <apr_errno.h>

/* Take len bytes of data; anything but APR_SUCCESS stops the writer. */
typedef apr_status_t sm_sink(void *baton, const char *data, apr_size_t len);

#endif
