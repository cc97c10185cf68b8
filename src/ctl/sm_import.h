/* SPDX-License-Identifier: Apache-2.0 */
/* sm_import.h: learning a site from Apache access logs (sitemapctl import).
 *
 * A log line is reduced to the facts the module would have seen
 * (sm_response) and judged by the same sm_rules_decide as live traffic.
 * What a log cannot tell is assumed as documented in sm_import_create.
 * Lines are aggregated in memory (one entry per URL: the newest recording
 * line and the newest forgetting line), so a URL is written once however
 * often it was requested, and the logs may be given in any order.
 *
 * Formats: Apache's common and combined formats ("%h %l %u %t \"%r\" %>s
 * %b" and the same with "\"%{Referer}i\" \"%{User-agent}i\""), also with
 * a leading "%v" or "%v:%p" field (vhost_combined), and with %t written as
 * [day/Mon/year:hh:mm:ss zone] or as epoch seconds (%{%s}t, %{sec}t,
 * %{msec}t, %{usec}t).  Files may be plain or gzip-compressed (told apart
 * by their content, not their name). */
#ifndef SM_IMPORT_H
#define SM_IMPORT_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

#include "record/sm_rules.h"
#include "store/sm_store.h"

/* ---- one line ------------------------------------------------------------ */

typedef struct {
    const char *user;       /* %u; NULL when "-" */
    apr_time_t time;        /* %t */
    const char *method;     /* NULL when the request is "-" or not a
                               request line */
    const char *target;     /* the request-target, unescaped */
    int status;             /* %>s */
} sm_log_entry;

/* The last timestamp parsed, so that lines of the same second cost one
 * comparison. */
typedef struct {
    char text[40];
    apr_size_t len;
    apr_time_t time;
    apr_time_t now;     /* what "now" is for sm_time_plausible; 0: the
                           clock at each new time text */
} sm_log_time_cache;

/* Parse one line (without its line end).  A time that is not plausible
 * (sm_time_plausible: before 1990, more than a day ahead) makes the line
 * malformed, as does a time zone beyond +-14:00.  The line is changed in place
 * (the request is unescaped: \" \\ \xhh \n \t ...); the strings in out
 * point into it.  Returns NULL, or a short static reason when the line is
 * malformed.  tc may be NULL. */
const char *sm_log_parse_line(char *line, apr_size_t len, sm_log_entry *out,
                              sm_log_time_cache *tc);

/* Is target (its path's last segment) a file type that is never a page
 * (an image, a style sheet, a script, an archive, ...)?  The heuristic
 * standing in for the Content-Type a log does not hold. */
int sm_import_not_a_page(const char *target);

/* ---- a whole import ------------------------------------------------------ */

typedef struct sm_import sm_import;

#define SM_IMPORT_MAX_SAMPLES 5

typedef struct {
    apr_uint64_t lines;         /* lines read */
    apr_uint64_t malformed;     /* lines that could not be parsed */
    apr_uint64_t record_lines;  /* lines that record a URL */
    apr_uint64_t forget_lines;  /* lines that forget one (404, 410, 301) */
    apr_uint64_t ignored;       /* parsed, but nothing to do */
    /* Why lines were ignored: the reasons of sm_rules_decide ("status",
     * "not GET", "content type", "excluded", "query", ...) and counts. */
    int nreasons;
    struct { const char *why; apr_uint64_t count; } reasons[24];
    /* The first malformed lines: "file:line: reason: text". */
    int nsamples;
    const char *samples[SM_IMPORT_MAX_SAMPLES];
    apr_uint64_t urls;          /* distinct URLs learned */
} sm_import_stats;

/* rules: as the module's (content_types: only the first is used, as the
 * type of every line that is taken for a page); base: the site's
 * canonical base URL (for the length limit).  guess_types: when non-zero,
 * 200 lines whose path ends in a file type sm_import_not_a_page knows are
 * taken for non-pages ("content type"); otherwise every 200 line is taken
 * for a page. */
sm_import *sm_import_create(apr_pool_t *p, const sm_rules *rules,
                            const char *base, int guess_types);

/* One line, as sm_log_parse_line takes it (changed in place).  where
 * names it in samples of malformed lines (may be NULL). */
void sm_import_line(sm_import *im, char *line, apr_size_t len,
                    const char *where);

/* Read a whole file (plain or gzip; "-" is standard input) line by line.
 * APR_SUCCESS, or an error with err saying why; the lines read before an
 * error (a damaged or truncated gzip file) are kept. */
apr_status_t sm_import_file(sm_import *im, const char *path, char *err,
                            apr_size_t errlen);

/* Told while a file is read, after each chunk (about 1 MiB): bytes is how
 * far into the file reading got (for gzip, into the compressed file), and
 * lines the lines read so far by the whole import. */
typedef void sm_import_progress_fn(void *baton, apr_off_t bytes,
                                   apr_uint64_t lines);
void sm_import_set_progress(sm_import *im, sm_import_progress_fn *fn,
                            void *baton);

/* Can path be opened for reading?  The same errors sm_import_file would
 * give at once, checked before anything is imported. */
apr_status_t sm_import_check_file(const char *path, char *err,
                                  apr_size_t errlen);

const sm_import_stats *sm_import_get_stats(const sm_import *im);

/* The changes the import amounts to, in URL order (strcmp; so that new
 * URLs go on pages beside their neighbours, and big imports write the
 * store's URL index in order): per URL, the newest line wins.  A URL whose newest line
 * records it gives SM_CHANGE_SEED with last_modified and seen = the time
 * of its newest recording line; one whose newest line forgets it gives
 * SM_CHANGE_FORGET.  The array (of sm_change) is allocated from p and
 * points into the import's memory and to site. */
apr_array_header_t *sm_import_changes(sm_import *im, apr_pool_t *p,
                                      const sm_site_conf *site);

#endif
