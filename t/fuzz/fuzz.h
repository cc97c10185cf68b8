/* SPDX-License-Identifier: Apache-2.0 */
/* t/fuzz/fuzz.h: what every fuzz target shares (see t/fuzz/README).
 *
 * A target is one file t/fuzz/fuzz_NAME.c defining LLVMFuzzerTestOneInput;
 * it is linked against the core's sources (every src/ file) built with ASan and
 * UBSan.  Inputs are handed to the core in buffers of their exact size
 * (malloc, not a pool), so that reading one byte past the end is caught:
 * APR pools carve allocations out of big blocks, where ASan sees nothing,
 * which is why the targets also check invariants (lengths, allowed bytes,
 * idempotence) on what the core returns. */
#ifndef SM_FUZZ_H
#define SM_FUZZ_H

#include <apr_general.h>
#include <apr_pools.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A fresh pool for one input, under a root made once. */
static inline apr_pool_t *fuzz_pool(void)
{
    static apr_pool_t *root;
    apr_pool_t *p;

    if (!root) {
        if (apr_initialize() != APR_SUCCESS
            || apr_pool_create(&root, NULL) != APR_SUCCESS)
            abort();
    }
    if (apr_pool_create(&p, root) != APR_SUCCESS)
        abort();
    return p;
}

/* A NUL-terminated copy of d[0..n) in a buffer of exactly n + 1 bytes
 * (free it).  An embedded NUL simply ends the string early. */
static inline char *fuzz_cstr(const uint8_t *d, size_t n)
{
    char *s = malloc(n + 1);

    if (!s)
        abort();
    memcpy(s, d, n);
    s[n] = '\0';
    return s;
}

/* An invariant of the code under test: print it and abort, which
 * libFuzzer reports as a crash (with the input saved). */
#define FUZZ_ASSERT(cond)                                                  \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__,     \
                    __LINE__, #cond);                                      \
            abort();                                                       \
        }                                                                  \
    } while (0)

/* Take the first byte of the input as option bits (0 when empty). */
static inline unsigned fuzz_take_byte(const uint8_t **d, size_t *n)
{
    unsigned b = 0;

    if (*n) {
        b = **d;
        (*d)++;
        (*n)--;
    }
    return b;
}

#endif
