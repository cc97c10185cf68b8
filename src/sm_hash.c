/* sm_hash.c: see sm_hash.h.  A multiply-xorshift mix over 8-byte words
 * (the finaliser is MurmurHash3's fmix64). */
#include "sm_hash.h"

#include <string.h>

#define MUL APR_UINT64_C(0xff51afd7ed558ccd)

static apr_uint64_t mix(apr_uint64_t h, apr_uint64_t v)
{
    h ^= v * APR_UINT64_C(0xc4ceb9fe1a85ec53);
    h = (h << 31) | (h >> 33);
    return h * MUL + APR_UINT64_C(0x52dce729);
}

static apr_uint64_t fmix(apr_uint64_t h)
{
    h ^= h >> 33;
    h *= MUL;
    h ^= h >> 33;
    h *= APR_UINT64_C(0xc4ceb9fe1a85ec53);
    return h ^ (h >> 33);
}

apr_uint64_t sm_hash_bytes(apr_uint64_t h, const void *p, apr_size_t n)
{
    const unsigned char *s = p;
    apr_uint64_t w;
    apr_size_t len = n;

    for (; n >= 8; s += 8, n -= 8) {
        memcpy(&w, s, 8);
        h = mix(h, w);
    }
    if (n) {
        w = 0;
        memcpy(&w, s, n);
        h = mix(h, w);
    }
    return fmix(h ^ len);
}

apr_uint64_t sm_hash_str(apr_uint64_t h, const char *s)
{
    if (!s)
        return fmix(h ^ APR_UINT64_C(0x6a09e667f3bcc908));
    return sm_hash_bytes(h, s, strlen(s));
}

apr_uint64_t sm_hash_u64(apr_uint64_t h, apr_uint64_t v)
{
    return fmix(mix(h, v));
}
