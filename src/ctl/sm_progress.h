/* SPDX-License-Identifier: Apache-2.0 */
/* sm_progress.h: a one-line progress meter for long sitemapctl work
 * (import: bytes of the logs read, lines per second, time left; then the
 * URLs written), redrawn in place on a terminal.
 *
 * Nothing is drawn during the first SM_PROGRESS_DELAY (short work shows
 * nothing), then at most every SM_PROGRESS_EVERY; the line is erased when
 * the work is done, so only the command's own summary stays.  The caller
 * decides whether there is a terminal (sm_progress_start with fd -1 turns
 * the meter off: output that is not a terminal gets nothing). */
#ifndef SM_PROGRESS_H
#define SM_PROGRESS_H

#include <apr.h>
#include <apr_time.h>

#define SM_PROGRESS_DELAY apr_time_from_msec(200)
#define SM_PROGRESS_EVERY apr_time_from_msec(200)

typedef struct {
    int fd;                 /* -1: off */
    const char *what;       /* "reading logs", "writing URLs" */
    apr_off_t total;        /* the whole work, in bytes or items; <= 0:
                               unknown */
    int bytes;              /* units are bytes (else items) */
    apr_time_t start, last;
    apr_size_t drawn;       /* characters on the screen now */
} sm_progress;

/* Start a meter on fd (-1: draw nothing) for work of total units. */
void sm_progress_start(sm_progress *pg, int fd, const char *what,
                       apr_off_t total, int bytes, apr_time_t now);

/* done units of the total, lines read so far (0 for none): redraws when
 * it is time. */
void sm_progress_update(sm_progress *pg, apr_off_t done, apr_uint64_t lines,
                        apr_time_t now);

/* Erase the line, if one was drawn. */
void sm_progress_end(sm_progress *pg);

/* The text of one line into buf (NUL-terminated, truncated to len):
 * "reading logs: 12.3 MiB of 45.6 MiB (27%), 812,345 lines/s, 0:03 left",
 * without the parts it cannot know (no total: no share or time left; no
 * lines: no rate).  Returns its length. */
apr_size_t sm_progress_format(char *buf, apr_size_t len, const char *what,
                              int bytes, apr_off_t done, apr_off_t total,
                              apr_uint64_t lines,
                              apr_interval_time_t elapsed);

#endif
