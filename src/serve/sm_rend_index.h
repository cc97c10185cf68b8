/* SPDX-License-Identifier: Apache-2.0 */
/* sm_rend_index.h: the index of a renditions directory, so that keeping
 * SitemapCacheMaxSize costs a render O(1) amortised instead of a
 * directory scan (issue 33).
 *
 * Why an SQLite file in the directory, not a per-process index nor
 * shared memory: every process (prefork or event children, the children
 * of the generations a graceful restart leaves running) writes into one
 * directory, so each must see the others' files and the total they take;
 * a per-process index would miss them, and httpd's shared memory is made
 * again by each generation.  SQLite gives the processes one index with
 * their locking, survives restarts, and finds the next file to remove
 * through a B-tree, never by reading every entry.
 *
 * The file .index (with its -wal and -shm) holds a row per rendition
 * file: name, size, kind (a SitemapSiteFromHost site or a configured
 * one) and last use; triggers keep the total.  A file is renamed into
 * place and recorded in one transaction, so the row is always the file's
 * last writer's.  Eviction takes the host-made sites' files first, then
 * the least recently used; a hit moves only the file's access time
 * (sm_rend_open, at most once a minute), and the index takes it when the
 * file comes up for removal (a second chance, paid by that hit).
 *
 * The directory is read in full only to build the index: when .index is
 * missing (new, removed, replaced by another inode, damaged) and once
 * every (files + SM_REND_SWEEP) renders, which also removes a crashed
 * writer's temporary files and what else does not belong.  The index is
 * a cache: written without fsync, rebuilt from the files when lost. */
#ifndef SM_REND_INDEX_H
#define SM_REND_INDEX_H

#include <apr_pools.h>
#include <sys/stat.h>

#include "serve/sm_rendition.h"

#define SM_REND_SWEEP 1000

typedef struct sm_rend_index sm_rend_index;

/* The index of the directory at path, opened at its first use. */
apr_status_t sm_rend_index_create(sm_rend_index **out, apr_pool_t *p,
                                  const char *path);

/* Rename the two temporary files of one document into place (tmp[i] to
 * name[i], i an sm_rend_enc) and record them.  Without a usable index the
 * files are still renamed; errno-style failure of a rename only. */
apr_status_t sm_rend_index_commit(sm_rend_index *ix, int dfd,
                                  const char *const tmp[2],
                                  const char *const name[2],
                                  const apr_off_t size[2],
                                  sm_rend_kind kind);

/* Bring the directory under max_bytes (see above); *removed counts the
 * files removed, *scanned the directory entries read.  APR_ENOTIMPL when
 * the index cannot be used (the caller scans). */
apr_status_t sm_rend_index_evict(sm_rend_index *ix, int dfd,
                                 apr_off_t max_bytes, int *removed,
                                 int *scanned);

/* Read the whole directory: remove temporary files older than an hour
 * and non-regular entries at a rendition's name, and call fn for each
 * regular rendition file (fn returns nonzero to stop). */
typedef int (*sm_rend_visit_fn)(void *baton, int dfd, const char *name,
                                const struct stat *sb);
apr_status_t sm_rend_scan(int dfd, sm_rend_visit_fn fn, void *baton,
                          int *removed, int *scanned);

#endif
