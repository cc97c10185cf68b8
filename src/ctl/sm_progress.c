/* SPDX-License-Identifier: Apache-2.0 */
/* sm_progress.c: see sm_progress.h. */
#include "ctl/sm_progress.h"

#include <apr_strings.h>

#include <string.h>
#include <unistd.h>

/* "512 KiB", "12.3 MiB", "4.1 GiB" */
static void amount(char *buf, apr_size_t len, int bytes, apr_off_t n)
{
    if (!bytes)
        apr_snprintf(buf, len, "%" APR_OFF_T_FMT, n);
    else if (n < 1024 * 1024)
        apr_snprintf(buf, len, "%" APR_OFF_T_FMT " KiB", n / 1024);
    else if (n < (apr_off_t)10 * 1024 * 1024 * 1024)
        apr_snprintf(buf, len, "%.1f MiB", (double)n / (1024.0 * 1024.0));
    else
        apr_snprintf(buf, len, "%.1f GiB",
                     (double)n / (1024.0 * 1024.0 * 1024.0));
}

/* "0:07", "12:30", "3:05:00" */
static void duration(char *buf, apr_size_t len, double secs)
{
    long s = secs < 0 ? 0 : (long)(secs + 0.5);
    if (s >= 3600)
        apr_snprintf(buf, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60,
                     s % 60);
    else
        apr_snprintf(buf, len, "%ld:%02ld", s / 60, s % 60);
}

apr_size_t sm_progress_format(char *buf, apr_size_t len, const char *what,
                              int bytes, apr_off_t done, apr_off_t total,
                              apr_uint64_t lines,
                              apr_interval_time_t elapsed)
{
    char a[32], b[32], t[32];
    double secs = (double)elapsed / APR_USEC_PER_SEC;
    apr_size_t n;

    amount(a, sizeof(a), bytes, done);
    if (total > 0) {
        amount(b, sizeof(b), bytes, total);
        apr_snprintf(buf, len, "%s: %s of %s (%d%%)", what, a, b,
                     done >= total ? 100
                                   : (int)((double)done * 100 / (double)total));
    }
    else {
        apr_snprintf(buf, len, "%s: %s", what, a);
    }
    n = strlen(buf);
    if (lines && secs > 0 && n < len)
        apr_snprintf(buf + n, len - n, ", %.0f lines/s",
                     (double)lines / secs);
    n = strlen(buf);
    if (total > 0 && done > 0 && secs > 0 && done < total && n < len) {
        duration(t, sizeof(t), secs * (double)(total - done) / (double)done);
        apr_snprintf(buf + n, len - n, ", %s left", t);
    }
    return strlen(buf);
}

void sm_progress_start(sm_progress *pg, int fd, const char *what,
                       apr_off_t total, int bytes, apr_time_t now)
{
    memset(pg, 0, sizeof(*pg));
    pg->fd = fd;
    pg->what = what;
    pg->total = total;
    pg->bytes = bytes;
    pg->start = now;
}

/* Write it all; a terminal that refuses is not worth an error. */
static void put(int fd, const char *s, apr_size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (apr_size_t)w;
    }
}

void sm_progress_update(sm_progress *pg, apr_off_t done, apr_uint64_t lines,
                        apr_time_t now)
{
    char line[160];
    apr_size_t n;

    if (pg->fd < 0 || now - pg->start < SM_PROGRESS_DELAY
        || (pg->last && now - pg->last < SM_PROGRESS_EVERY))
        return;
    pg->last = now;
    line[0] = '\r';
    n = 1 + sm_progress_format(line + 1, sizeof(line) - 1, pg->what,
                               pg->bytes, done, pg->total, lines,
                               now - pg->start);
    /* "\033[K" erases what a longer line before left. */
    if (n + 4 <= sizeof(line)) {
        memcpy(line + n, "\033[K", 3);
        n += 3;
    }
    put(pg->fd, line, n);
    pg->drawn = n;
}

void sm_progress_end(sm_progress *pg)
{
    if (pg->fd >= 0 && pg->drawn)
        put(pg->fd, "\r\033[K", 4);
    pg->drawn = 0;
}
