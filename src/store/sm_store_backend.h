/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_backend.h: the backends behind sm_store.h, private to
 * src/store (and to the unit tests of a backend).  A backend is a row of
 * the table in sm_store.c; nothing outside src/store names one. */
#ifndef SM_STORE_BACKEND_H
#define SM_STORE_BACKEND_H

#include "store/sm_store.h"

typedef struct {
    const char *name;
    /* A local file (see sm_store_is_file). */
    int is_file;
    /* Does where name a store of this backend?  The last row takes all. */
    int (*names)(const char *where);
    /* NULL when where is valid for this backend, else why not; NULL: any. */
    const char *(*location_problem)(apr_pool_t *p, const char *where);
    /* stopping: see sm_store_open_stoppable */
    apr_status_t (*open)(sm_store **out, apr_pool_t *p, const char *where,
                         int flags, int busy_timeout_ms,
                         const sm_logger *log, const volatile int *stopping,
                         char *errmsg, apr_size_t errlen);
    apr_status_t (*check)(apr_pool_t *p, const char *where,
                          int busy_timeout_ms, apr_array_header_t *problems,
                          sm_store_about *about, char *errmsg,
                          apr_size_t errlen);
    void (*init)(void);     /* once per process; NULL: nothing */
} sm_store_backend;

/* The backend of where (never NULL). */
const sm_store_backend *sm_store_backend_of(const char *where);

/* Does where name a PostgreSQL store (a postgresql:// or postgres://
 * URI)?  Known in every build, so one without PostgreSQL can say so. */
int sm_store_is_pg(const char *where);

void sm_store_sqlite_init(void);

/* Open (creating it, its schema, and migrating an older schema when
 * allowed) the SQLite store at path.  On failure *out is NULL and errmsg
 * (at least 256 bytes, may be NULL) says why. */
apr_status_t sm_store_open_sqlite(sm_store **out, apr_pool_t *p,
                                  const char *path, int flags,
                                  int busy_timeout_ms, const sm_logger *log,
                                  char *errmsg, apr_size_t errlen);

/* The PostgreSQL store (sm_store_pg.c): where is a libpq connection URI
 * (postgresql://... or postgres://...).  Flags as above (CREATE: create the
 * schema when it is missing and the role may; READONLY: never write; BULK
 * and PROBE change nothing).  busy_timeout_ms bounds every wait for a lock
 * (lock_timeout); connecting and statements have their own bounds. */
#define SM_PG_SCHEMA_VERSION 13
/* NULL when libpq can parse uri, otherwise why not (from p). */
const char *sm_store_pg_uri_check(apr_pool_t *p, const char *uri);
apr_status_t sm_store_open_pg(sm_store **out, apr_pool_t *p, const char *uri,
                              int flags, int busy_timeout_ms,
                              const sm_logger *log,
                              const volatile int *stopping, char *errmsg,
                              apr_size_t errlen);
apr_status_t sm_store_check_pg(apr_pool_t *p, const char *uri,
                               int busy_timeout_ms,
                               apr_array_header_t *problems,
                               sm_store_about *about, char *errmsg,
                               apr_size_t errlen);

/* Check the file at path without changing it: SQLite's integrity_check,
 * the application_id, the schema version, and that the page summaries and
 * URL counts agree with the URLs.  APR_ENOENT when the file does not
 * exist (nothing is created); another error when it cannot be opened at
 * all or is no store this code can read: not SQLite, not a mod_sitemap
 * store, a newer schema (errmsg says why); otherwise APR_SUCCESS, with one sentence per
 * problem found pushed onto problems (const char *; none: the file is
 * sound) and, when about is not NULL, what could be read of the file. */
apr_status_t sm_store_check_sqlite(apr_pool_t *p, const char *path,
                                   int busy_timeout_ms,
                                   apr_array_header_t *problems,
                                   sm_store_about *about,
                                   char *errmsg, apr_size_t errlen);

#endif
