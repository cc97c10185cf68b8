/* SPDX-License-Identifier: Apache-2.0 */
/* sm_rendition.h: the cache of renditions: the exact bytes of a sitemap
 * document, plain and gzip, kept as files in one directory per server.
 *
 * Each document has a stem (unique in the directory: the site and which
 * document) and two files, STEM.xml and STEM.xml.gz.  Each file starts
 * with a header (SM_REND_HEADER) holding the key of what made the bytes
 * (see sm_rend_key) and the body's length; the body follows and is sent
 * as it is (mmap or sendfile from that offset).  A file whose header does not hold the
 * key asked for is a miss, so a rendition can never be served for another
 * version of its document: a new version is rendered and renamed over
 * the old file.
 *
 * Files are made safely whoever runs this: the directory is opened once
 * with O_NOFOLLOW, every file is created relative to it with
 * O_CREAT|O_EXCL|O_NOFOLLOW under a private temporary name, and renamed
 * into place; files are opened for reading with O_NOFOLLOW and must be
 * regular.  A symlink planted in the directory is never followed (a
 * rename replaces it). */
#ifndef SM_RENDITION_H
#define SM_RENDITION_H

#include <apr_file_io.h>
#include <apr_pools.h>

#include "serve/sm_xml.h"

/* What makes a document's bytes, in 128 bits: the caller hashes the store
 * data and the settings; sm_rend_* fold in the rendition format and the
 * zlib version. */
typedef struct {
    apr_uint64_t a, b;
} sm_rend_key;

typedef enum { SM_REND_PLAIN = 0, SM_REND_GZIP = 1 } sm_rend_enc;

/* Whose document: a configured site's, or a site SitemapSiteFromHost made
 * from a Host (which anyone can invent): eviction takes those first.  The
 * header's byte SM_REND_KEY_BYTES holds it (0 in files of earlier builds:
 * a configured site). */
typedef enum { SM_REND_SITE = 0, SM_REND_HOST_SITE = 1 } sm_rend_kind;

/* The body starts one page into the file: httpd maps a file bucket into
 * memory (EnableMMAP) only at a page-aligned offset, and reads it in 8 KB
 * pieces otherwise.  The key takes the first SM_REND_KEY_BYTES. */
#define SM_REND_HEADER 4096
#define SM_REND_KEY_BYTES 64

typedef struct sm_rend_dir sm_rend_dir;

/* Open (creating it, mode 0750, if missing: its parent must exist) the
 * directory path.  max_bytes bounds the files it holds (sm_rend_evict).
 * On failure err says why. */
apr_status_t sm_rend_dir_open(sm_rend_dir **out, apr_pool_t *p,
                              const char *path, apr_off_t max_bytes,
                              char *err, apr_size_t errlen);
const char *sm_rend_dir_path(const sm_rend_dir *d);

/* The rendition of stem in enc made for key: on success f (closed with p),
 * the offset and the length of its body.  APR_ENOENT when there is none
 * for that key (absent, older, not a regular file, damaged).  A hit whose
 * access time is more than a minute old gets it moved to now (the LRU
 * order of sm_rend_evict). */
apr_status_t sm_rend_open(sm_rend_dir *d, apr_pool_t *p, const char *stem,
                          sm_rend_enc enc, const sm_rend_key *key,
                          apr_file_t **f, apr_off_t *offset,
                          apr_off_t *length);

/* Writing both renditions of stem in one pass: the plain bytes go to
 * STEM.xml and through a gzip compressor (SM_GZIP_LEVEL) to STEM.xml.gz,
 * each under a temporary name until sm_rend_commit renames them into
 * place.  Memory: two 64 KiB buffers and zlib's state.  Uncommitted
 * temporary files are removed when p is cleared. */
typedef struct sm_rend_writer sm_rend_writer;

apr_status_t sm_rend_writer_create(sm_rend_writer **out, sm_rend_dir *d,
                                   apr_pool_t *p, const char *stem,
                                   const sm_rend_key *key,
                                   sm_rend_kind kind);

/* An sm_xml_sink: baton is the sm_rend_writer. */
apr_status_t sm_rend_write(void *baton, const char *data, apr_size_t len);

/* Finish both files (headers written last) and rename them into place,
 * recorded in the directory's index (sm_rend_index.h). */
apr_status_t sm_rend_commit(sm_rend_writer *w);

/* The body sizes written (after sm_rend_commit). */
void sm_rend_sizes(const sm_rend_writer *w, apr_off_t *plain,
                   apr_off_t *gzip);

/* Bring the directory's renditions under max_bytes, removing host-made
 * sites' files first, then the least recently used, through the index
 * (sm_rend_index.h: O(1) amortised, the directory read only to build the
 * index); without a usable index by reading the directory.  Temporary
 * files left for more than an hour (a crashed writer) and anything else
 * at a rendition's name that is not a regular file are removed when the
 * directory is read.  *removed counts the files removed, *scanned the
 * directory entries read (either may be NULL).  Call it after a render,
 * not per request. */
apr_status_t sm_rend_evict(sm_rend_dir *d, apr_pool_t *p, int *removed,
                           int *scanned);

#endif
