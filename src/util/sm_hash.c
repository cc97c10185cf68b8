/* SPDX-License-Identifier: Apache-2.0 */
/* sm_hash.c: see sm_hash.h.  A multiply-rotate mix over 8-byte words,
 * finished with MurmurHash3's fmix64.  Short strings are the rule (paths,
 * header values): the tail is read as the string's last 8 bytes (or byte by
 * byte when shorter), never through a variable-length memcpy call. */
#include "util/sm_hash.h"
#include "util/sm_hot.h"

#include <string.h>

#define K1 APR_UINT64_C(0xc4ceb9fe1a85ec53)
#define K2 APR_UINT64_C(0xff51afd7ed558ccd)

static apr_uint64_t mix(apr_uint64_t h, apr_uint64_t v)
{
    h ^= v * K1;
    h = (h << 31) | (h >> 33);
    return h * K2 + APR_UINT64_C(0x52dce729);
}

static apr_uint64_t fmix(apr_uint64_t h)
{
    h ^= h >> 33;
    h *= K2;
    h ^= h >> 33;
    h *= K1;
    return h ^ (h >> 33);
}

/* Inlined into each caller: a steady request hashes four or five short
 * strings, and a call each (sm_hash_str's two) cost more than the words'
 * mixing of most. */
#if defined(__GNUC__)
#define SM_INLINE_ALWAYS __attribute__((always_inline)) inline
#else
#define SM_INLINE_ALWAYS inline
#endif

SM_INLINE_ALWAYS static apr_uint64_t fold(apr_uint64_t h,
                                          const unsigned char *s,
                                          apr_size_t n)
{
    apr_uint64_t w = 0;
    apr_size_t len = n;

    if (n >= 8) {
        for (; n > 8; s += 8, n -= 8) {
            memcpy(&w, s, 8);
            h = mix(h, w);
        }
        /* The last 8 bytes, overlapping the previous word when n < 8. */
        memcpy(&w, s + n - 8, 8);
        h = mix(h, w);
        w = 0;
    }
    else {
        while (n--)
            w |= (apr_uint64_t)s[n] << (8 * n);
    }
    return mix(h, w ^ len);             /* the length ends every string */
}

apr_uint64_t sm_hash_bytes(apr_uint64_t h, const void *p, apr_size_t n)
{
    return fmix(fold(h, p, n));
}

SM_HOT apr_uint64_t sm_hash_str(apr_uint64_t h, const char *s)
{
    if (!s)
        return fmix(mix(h, APR_UINT64_C(0x6a09e667f3bcc908)));
    return fmix(fold(h, (const unsigned char *)s, strlen(s)));
}

apr_uint64_t sm_hash_u64(apr_uint64_t h, apr_uint64_t v)
{
    return fmix(mix(h, v));
}

SM_HOT apr_uint64_t sm_hash_strs(apr_uint64_t h, const char *const *strs,
                                 int n)
{
    int i;

    for (i = 0; i < n; i++)
        h = strs[i] ? fold(h, (const unsigned char *)strs[i], strlen(strs[i]))
                    : mix(h, APR_UINT64_C(0x6a09e667f3bcc908));
    return fmix(h);
}
