/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_indexnow.h: the SQLite backend's IndexNow entries
 * (sm_store_sqlite_indexnow.c), shared with sm_store_sqlite.c only. */
#ifndef SM_STORE_SQLITE_INDEXNOW_H
#define SM_STORE_SQLITE_INDEXNOW_H

#include <sqlite3.h>

#include "store/sm_store.h"

/* IndexNow's tables, created by every writer's open.  Added without a
 * schema version of their own (CREATE TABLE IF NOT EXISTS): readers and
 * older writers never touch them, so the store stays readable by every
 * version of the same schema, and the schema number stays free for the
 * changes that need one. */
extern const char sm_sqlite_indexnow_tables[];

sqlite3 *sm_sqlite_handle(sm_store *st);

apr_status_t sm_sqlite_indexnow_claim(sm_store *st, apr_pool_t *p,
                                      const char *base, apr_time_t now,
                                      apr_interval_time_t lease,
                                      sm_indexnow_batch *out);
apr_status_t sm_sqlite_indexnow_finish(sm_store *st, const char *base,
                                       const sm_indexnow_batch *batch,
                                       const sm_indexnow_result *result);
apr_status_t sm_sqlite_indexnow_queue(sm_store *st, const char *base,
                                      const char *const *urls, int n,
                                      int *queued);
apr_status_t sm_sqlite_indexnow_stats(sm_store *st, apr_pool_t *p,
                                      const char *base,
                                      apr_array_header_t **out);

#endif
