/* SPDX-License-Identifier: Apache-2.0 */
/* sm_hash.h: a fast 64-bit hash of byte strings, for the recorder's
 * in-memory keys (never stored: a change of the function only costs one
 * round of rewrites of recently seen URLs).
 *
 * APR's apr_hashfunc_default is 32 bits and reads a byte at a time; here a
 * collision would make the recorder skip a different URL, and the hash runs
 * on every request, so this one reads 8 bytes at a time into 64 bits. */
#ifndef SM_HASH_H
#define SM_HASH_H

#include <apr.h>

#define SM_HASH_SEED APR_UINT64_C(0x9e3779b97f4a7c15)

/* Fold n bytes at p into h; chain calls to hash several strings (the
 * length is folded in too, so "ab"+"c" and "a"+"bc" differ). */
apr_uint64_t sm_hash_bytes(apr_uint64_t h, const void *p, apr_size_t n);

/* A NUL-terminated string, or NULL (which differs from ""). */
apr_uint64_t sm_hash_str(apr_uint64_t h, const char *s);

/* Several strings (NULL entries allowed) in one go: as chained
 * sm_hash_str calls would separate them, at less cost. */
apr_uint64_t sm_hash_strs(apr_uint64_t h, const char *const *strs, int n);

/* One 64-bit value. */
apr_uint64_t sm_hash_u64(apr_uint64_t h, apr_uint64_t v);

#endif
