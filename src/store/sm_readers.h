/* SPDX-License-Identifier: Apache-2.0 */
/* sm_readers.h: a process's read-only connections to one store, opened
 * when a request needs one and none is idle, reused while they are used,
 * and closed once idle for a while (sm_readers_close_idle, which the
 * writer's thread calls): a server with a thousand store files keeps
 * connections, descriptors and caches only for the sites being read.
 *
 * apr_reslist is not used because it closes an idle resource only when
 * the same list is used again: a site whose sitemap was fetched once would
 * keep its connection (and its page cache) for the life of the process. */
#ifndef SM_READERS_H
#define SM_READERS_H

#include <apr_pools.h>
#include <apr_time.h>

#include "util/sm_log.h"
#include "store/sm_store.h"

typedef struct sm_readers sm_readers;

/* Readers of the store at where (a path or URI; SM_STORE_READER).  At most
 * keep (16 at most) idle connections are kept (more are closed when
 * released), and at most 16 in the whole process, all stores together; one idle for longer
 * than idle is closed by sm_readers_close_idle.  Failures to
 * open are logged at debug level through log (the caller answers 503). */
apr_status_t sm_readers_create(sm_readers **out, apr_pool_t *p,
                               const char *where, int keep,
                               apr_interval_time_t idle,
                               const sm_logger *log);

/* A reader on the store now at the path (not a deleted or replaced file),
 * or NULL when none can be opened, and then err (len bytes) says why.
 * Thread-safe. */
sm_store *sm_readers_acquire(sm_readers *r, char *err, apr_size_t len);

/* Done with st: kept for the next request.  Thread-safe. */
void sm_readers_release(sm_readers *r, sm_store *st);

/* st failed: closed, not kept.  Thread-safe. */
void sm_readers_invalidate(sm_readers *r, sm_store *st);

/* Close the connections idle since before now - idle.  Thread-safe. */
void sm_readers_close_idle(sm_readers *r, apr_time_t now);

/* Connections open now (in use or idle), for tests and the status page. */
int sm_readers_open_count(sm_readers *r);

#endif
