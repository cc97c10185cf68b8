/* SPDX-License-Identifier: Apache-2.0 */
#include "util/sm_log.h"

#include <apr_lib.h>
#include <apr_strings.h>
#include <stdarg.h>

void sm_log(const sm_logger *lg, sm_log_level level, apr_status_t rv,
            const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    if (!lg || !lg->fn || level > lg->max)
        return;
    va_start(ap, fmt);
    apr_vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    lg->fn(lg->baton, level, rv, buf);
}
