/* SPDX-License-Identifier: Apache-2.0 */
/* sm_log.h: how the core reports problems without knowing about httpd.
 *
 * The core never includes httpd headers.  Whoever embeds it (the module,
 * sitemapctl, the unit tests) supplies a callback; the module points it at
 * ap_log_error, sitemapctl at stderr. */
#ifndef SM_LOG_H
#define SM_LOG_H

#include <apr_errno.h>

typedef enum {
    SM_LOG_ERR = 0,
    SM_LOG_WARN,
    SM_LOG_INFO,
    SM_LOG_DEBUG
} sm_log_level;

typedef void sm_log_fn(void *baton, sm_log_level level, apr_status_t rv,
                       const char *msg);

typedef struct {
    sm_log_fn *fn;      /* NULL: messages are discarded */
    void *baton;
    sm_log_level max;   /* messages above this level are not even formatted */
} sm_logger;

/* printf-style; formats into a bounded stack buffer (no allocation). */
void sm_log(const sm_logger *lg, sm_log_level level, apr_status_t rv,
            const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
