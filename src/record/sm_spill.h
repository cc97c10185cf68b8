/* SPDX-License-Identifier: Apache-2.0 */
/* sm_spill.h: changes that a stopping process could not write, kept in
 * files beside the store for the next process that opens it.
 *
 * A process that stops while its store fails (locked, read-only, replaced
 * by something that is not a store) writes what it still has queued to
 * "<store>.spill-XXXXXX" in the store's directory: created exclusively
 * (O_EXCL: never through a planted link) with an unpredictable name, mode
 * 0600, written under another exclusive name first and linked into place
 * only once complete, so a reader never sees half a file.  The next writer
 * (any process of any later generation) claims each such file by renaming
 * it, checks that it is a regular file owned by itself, reads it back into
 * its queue and removes it.  The format is one line per change, every
 * field %-escaped, with a header and a closing line carrying the count. */
#ifndef SM_SPILL_H
#define SM_SPILL_H

#include <apr_pools.h>

#include "store/sm_store.h"

/* Write changes[0..n) to a new spill file of the store at db_path.  On
 * failure errmsg says why and nothing is left behind. */
apr_status_t sm_spill_write(apr_pool_t *p, const char *db_path,
                            const sm_change *changes, int n,
                            char *errmsg, apr_size_t errlen);

/* One change read back; site is NULL, base names it (the callback finds
 * the configured site, or skips the change).  Strings live until the
 * callback returns. */
typedef void sm_spill_fn(void *baton, const char *base,
                         const sm_change *change);

/* Claim and read every complete spill file of the store at db_path, at
 * most max_changes changes in all (a file is read whole: the first one
 * may pass the bound; the others wait for the next call).  *files and
 * *changes count what was taken (and removed); problems (a file that is
 * not ours, a line that does not parse) are logged and the file is
 * left, renamed "<store>.spill-bad-XXXXXX", for an administrator. */
apr_status_t sm_spill_take(apr_pool_t *p, const char *db_path,
                           int max_changes, sm_spill_fn *fn, void *baton,
                           const sm_logger *log, int *files, int *changes);

#endif
