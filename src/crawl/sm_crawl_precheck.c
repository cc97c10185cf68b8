/* SPDX-License-Identifier: Apache-2.0 */
/* sm_crawl_precheck.c: may this User-Agent be a crawler's?  Asked for
 * every request, so it must cost next to nothing for an ordinary visitor.
 *
 * Each crawler's needle is a piece of its pattern's literal (at most
 * SM_NEEDLE_MAX bytes), chosen so that the crawlers share as few first
 * two bytes as can be, the rarest in ordinary browsers' User-Agents (a
 * sample below) first: Googlebot and bingbot share "bot".  The scan
 * compares 16 bytes at a time (SSE2; 32 with AVX2 where the CPU has it,
 * and with one key in a single pass that finds the NUL as it goes:
 * fused) against the needles' first two bytes, case-insensitively,
 * and compares a whole needle only where they are.  A User-Agent with no
 * needle in it cannot match any pattern: no regex runs.
 * sm_crawl_visitor, the request path's one call, finds the User-Agent
 * field and asks the same.  Measured with callgrind on t/unit/test_crawl's
 * precheck_cost and visitor_cost and by bench/instr's steady-crawlers
 * row: see src/crawl/README.md. */
#include "crawl/sm_crawl_int.h"

#include <apr_lib.h>

#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#if defined(__SSE2__) && defined(__GNUC__) && defined(__x86_64__) \
    && !defined(SM_NO_AVX2)
#define SM_HAVE_AVX2 1
#endif

/* What ordinary browsers send: the byte pairs rare here make good keys. */
static const char ua_sample[] =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, "
    "like Gecko) Chrome/120.0.0.0 Safari/537.36\n"
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.1 Safari/605.1.15\n"
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/"
    "605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1\n"
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like "
    "Gecko) Chrome/120.0.0.0 Mobile Safari/537.36\n"
    "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 "
    "Firefox/120.0\n"
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, "
    "like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.0.0\n";

/* How often the pair a b (lowercase) is in the sample. */
static int pair_freq(unsigned char a, unsigned char b)
{
    const unsigned char *u = (const unsigned char *)ua_sample;
    int n = 0;

    for (; u[0] && u[1]; u++)
        if (apr_tolower(u[0]) == a && apr_tolower(u[1]) == b)
            n++;
    return n;
}

/* Where a needle starting with a b may sit in literal: the last such pair
 * with at least 3 bytes (or the whole literal) from it, so that crawlers
 * named alike share a needle ("googlebot" and "bingbot": "bot"); -1:
 * none. */
static int needle_start(const char *literal, unsigned char a,
                        unsigned char b)
{
    apr_size_t len = strlen(literal), min_left = len < 3 ? len : 3, i;
    int at = -1;

    for (i = 0; i + min_left <= len; i++)
        if ((unsigned char)literal[i] == a
            && (unsigned char)literal[i + 1] == b)
            at = (int)i;
    return at;
}

static int covered(const sm_crawl_list *l, const int *done, unsigned char a,
                   unsigned char b)
{
    int i, n = 0;

    for (i = 0; i < l->crawlers->nelts; i++)
        if (!done[i] && needle_start(sm_crawl_get(l, i)->literal, a, b) >= 0)
            n++;
    return n;
}

static void add_needle(sm_crawl_list *l, const char *lit, int at)
{
    sm_needle nd;
    int k;

    memset(&nd, 0, sizeof(nd));
    nd.len = (int)strlen(lit + at);
    if (nd.len > SM_NEEDLE_MAX)
        nd.len = SM_NEEDLE_MAX;
    for (k = 0; k < nd.len; k++) {
        nd.text[k] = (unsigned char)lit[at + k];
        nd.mask[k] = apr_isalpha(nd.text[k]) ? 0x20 : 0;
    }
    for (k = 0; k < l->n_needles; k++)
        if (l->needles[k].len == nd.len
            && memcmp(l->needles[k].text, nd.text, (size_t)nd.len) == 0)
            return;
    l->needles[l->n_needles++] = nd;
}

/* Greedy: the pair most crawlers' literals hold, then the rarest; again
 * for the crawlers left. */
void sm_crawl_choose_needles(sm_crawl_list *l)
{
    int n = l->crawlers->nelts, done[SM_CRAWL_MAX], left = 0, i;

#ifdef SM_HAVE_AVX2
    l->avx2 = __builtin_cpu_supports("avx2");
#endif
    l->n_needles = l->n_keys = 0;
    l->always = 0;
    for (i = 0; i < n; i++) {
        done[i] = strlen(sm_crawl_get(l, i)->literal) < 2;
        if (done[i])
            l->always = 1;
        else
            left++;
    }
    while (left > 0) {
        int best_n = 0, best_f = 0, k;
        unsigned char a = 0, b = 0;

        for (i = 0; i < n; i++) {
            const char *lit = sm_crawl_get(l, i)->literal;
            apr_size_t j;
            for (j = 0; !done[i] && lit[j] && lit[j + 1]; j++) {
                unsigned char x = (unsigned char)lit[j];
                unsigned char y = (unsigned char)lit[j + 1];
                int c = covered(l, done, x, y), f;
                if (c < best_n)
                    continue;
                f = pair_freq(x, y);
                if (c > best_n || f < best_f) {
                    best_n = c;
                    best_f = f;
                    a = x;
                    b = y;
                }
            }
        }
        k = l->n_keys++;
        l->key0[k] = a;
        l->key1[k] = b;
        l->mask0[k] = apr_isalpha(a) ? 0x20 : 0;
        l->mask1[k] = apr_isalpha(b) ? 0x20 : 0;
        l->key_from[k] = l->n_needles;
        for (i = 0; i < n; i++) {
            const char *lit = sm_crawl_get(l, i)->literal;
            int at = done[i] ? -1 : needle_start(lit, a, b);
            if (at < 0)
                continue;
            done[i] = 1;
            left--;
            add_needle(l, lit, at);
        }
        l->key_from[k + 1] = l->n_needles;
    }
    memset(l->vec[0], l->key0[0], 32);
    memset(l->vec[1], l->mask0[0], 32);
    memset(l->vec[2], l->key1[0], 32);
    memset(l->vec[3], l->mask1[0], 32);
    l->fast = l->avx2 && l->n_keys == 1 && !l->always;
}

/* Is a needle of key k at one of the positions bits (of the bytes from
 * ua + at) marks?  The slow path: only where the key's two bytes are. */
static int hits(const sm_crawl_list *l, int k, const unsigned char *ua,
                apr_size_t at, apr_size_t len, unsigned bits)
{
    for (; bits; bits &= bits - 1) {
        apr_size_t pos = at + (apr_size_t)__builtin_ctz(bits);
        int i, j;

        for (i = l->key_from[k]; i < l->key_from[k + 1]; i++) {
            const sm_needle *n = &l->needles[i];
            if (pos + (apr_size_t)n->len > len)
                continue;
            for (j = 2; j < n->len
                        && (ua[pos + (apr_size_t)j] | n->mask[j])
                           == n->text[j]; j++)
                ;
            if (j == n->len)
                return 1;
        }
    }
    return 0;
}

#ifdef __SSE2__
/* Key k's positions among the 16 bytes at p (17 readable). */
static APR_INLINE unsigned keys16(const unsigned char *p, __m128i m0,
                                  __m128i k0, __m128i m1, __m128i k1)
{
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + 1));

    return (unsigned)_mm_movemask_epi8(_mm_and_si128(
        _mm_cmpeq_epi8(_mm_or_si128(a, m0), k0),
        _mm_cmpeq_epi8(_mm_or_si128(b, m1), k1)));
}

/* Blocks of 16 bytes (len >= 17); the last one overlaps the one before. */
static int scan16(const sm_crawl_list *l, int k, const unsigned char *ua,
                  apr_size_t len)
{
    const __m128i m0 = _mm_set1_epi8((char)l->mask0[k]);
    const __m128i k0 = _mm_set1_epi8((char)l->key0[k]);
    const __m128i m1 = _mm_set1_epi8((char)l->mask1[k]);
    const __m128i k1 = _mm_set1_epi8((char)l->key1[k]);
    apr_size_t i, last = len - 17;
    unsigned bits;

    for (i = 0; i < last; i += 16)
        if (__builtin_expect((bits = keys16(ua + i, m0, k0, m1, k1)) != 0, 0)
            && hits(l, k, ua, i, len, bits))
            return 1;
    bits = keys16(ua + last, m0, k0, m1, k1);
    return bits && hits(l, k, ua, last, len, bits);
}
#endif

#ifdef SM_HAVE_AVX2
/* Key k's positions among the 32 bytes at p (33 readable). */
__attribute__((target("avx2")))
static APR_INLINE unsigned keys32(const unsigned char *p, __m256i m0,
                                  __m256i k0, __m256i m1, __m256i k1)
{
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)p);
    __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p + 1));

    return (unsigned)_mm256_movemask_epi8(_mm256_and_si256(
        _mm256_cmpeq_epi8(_mm256_or_si256(a, m0), k0),
        _mm256_cmpeq_epi8(_mm256_or_si256(b, m1), k1)));
}

/* The same, 32 bytes at a time (len >= 33). */
__attribute__((target("avx2")))
static APR_INLINE int scan32(const sm_crawl_list *l, int k,
                             const unsigned char *ua, apr_size_t len)
{
    const __m256i m0 = _mm256_set1_epi8((char)l->mask0[k]);
    const __m256i k0 = _mm256_set1_epi8((char)l->key0[k]);
    const __m256i m1 = _mm256_set1_epi8((char)l->mask1[k]);
    const __m256i k1 = _mm256_set1_epi8((char)l->key1[k]);
    apr_size_t i, last = len - 33;
    unsigned bits;

    for (i = 0; i < last; i += 32)
        if (__builtin_expect((bits = keys32(ua + i, m0, k0, m1, k1)) != 0, 0)
            && hits(l, k, ua, i, len, bits))
            return 1;
    bits = keys32(ua + last, m0, k0, m1, k1);
    return bits && hits(l, k, ua, last, len, bits);
}
#endif

/* Short User-Agents, or no SSE2: a byte at a time. */
static int scan1(const sm_crawl_list *l, const unsigned char *ua,
                 apr_size_t len)
{
    apr_size_t i;
    int k;

    for (i = 0; i + 1 < len; i++)
        for (k = 0; k < l->n_keys; k++)
            if ((ua[i] | l->mask0[k]) == l->key0[k]
                && (ua[i + 1] | l->mask1[k]) == l->key1[k]
                && hits(l, k, ua, i, len, 1))
                return 1;
    return 0;
}

static int scan(const sm_crawl_list *l, const char *agent)
{
    const unsigned char *ua = (const unsigned char *)agent;
    apr_size_t len = strlen(agent);
    int k;

#ifdef __SSE2__
    if (len >= 17) {
        for (k = 0; k < l->n_keys; k++)
            if (scan16(l, k, ua, len))
                return 1;
        return 0;
    }
#else
    (void)k;
#endif
    return scan1(l, ua, len);
}

#ifdef SM_HAVE_AVX2
__attribute__((target("avx2")))
static int scan_avx2(const sm_crawl_list *l, const char *agent)
{
    const unsigned char *ua = (const unsigned char *)agent;
    apr_size_t len = strlen(agent);
    int k;

    if (len < 33)
        return scan(l, agent);
    if (l->n_keys == 1)
        return scan32(l, 0, ua, len);
    for (k = 0; k < l->n_keys; k++)
        if (scan32(l, k, ua, len))
            return 1;
    return 0;
}
#endif

#ifdef SM_HAVE_AVX2
/* The usual case (AVX2, one key) in one pass, without strlen: 32 bytes
 * at a time from the start, the key's two bytes and the NUL looked for
 * in the same block with one test, 13 instructions a block: a browser's
 * User-Agent of 70 bytes is three blocks.  A block's loads (33 bytes) may
 * read past the NUL, never past the page the string starts in (lim;
 * pages are 4 KB or more on the CPUs that have AVX2); the bytes past the
 * NUL never count.  Hence no_sanitize_address: what it reads past the
 * string cannot fault and is masked off (the loads are written here, not
 * in keys32: an inlined function keeps its own sanitizer checks, clang).
 * NULL: no crawler's; else the block from which scan_avx2 must say (the
 * key's two bytes before the NUL, or the page's end): it takes the rest's
 * length and compares the needles.  (Looking first for one of the key's
 * bytes, 10 instructions a block, cost Safari and Chrome on phones more
 * than it saved: "b" is in their "WebKit" and "Mobile".) */
__attribute__((target("avx2"), no_sanitize_address))
static APR_INLINE const char *fused(const sm_crawl_list *l,
                                    const char *agent)
{
    const unsigned char *p = (const unsigned char *)agent;
    const unsigned char *lim =
        (const unsigned char *)(((apr_uintptr_t)p | 4095) - 32);
    const __m256i *v = (const __m256i *)(const void *)l->vec;
    const __m256i k0 = _mm256_loadu_si256(v), m0 = _mm256_loadu_si256(v + 1);
    const __m256i k1 = _mm256_loadu_si256(v + 2);
    const __m256i m1 = _mm256_loadu_si256(v + 3);
    const __m256i zero = _mm256_setzero_si256();

    for (; p <= lim; p += 32) {
        const __m256i *q = (const __m256i *)(const void *)p;
        __m256i a = _mm256_loadu_si256(q);
        __m256i b = _mm256_loadu_si256(
            (const __m256i *)(const void *)(p + 1));
        __m256i h = _mm256_and_si256(
            _mm256_cmpeq_epi8(_mm256_or_si256(a, m0), k0),
            _mm256_cmpeq_epi8(_mm256_or_si256(b, m1), k1));
        __m256i z = _mm256_cmpeq_epi8(a, zero);
        __m256i any = _mm256_or_si256(h, z);

        if (__builtin_expect(!_mm256_testz_si256(any, any), 0)) {
            unsigned zs = (unsigned)_mm256_movemask_epi8(z);

            /* The key before the NUL (all 32 when none)? */
            if (!((unsigned)_mm256_movemask_epi8(h)
                  & ((zs & (0u - zs)) - 1u)))
                return NULL;
            break;
        }
    }
    return (const char *)p;
}

__attribute__((target("avx2"), no_sanitize_address))
static int scan_fused(const sm_crawl_list *l, const char *agent)
{
    const char *rest = fused(l, agent);

    return rest ? scan_avx2(l, rest) : 0;
}
#endif

static APR_INLINE int precheck(const sm_crawl_list *l, const char *agent)
{
#ifdef SM_HAVE_AVX2
    if (__builtin_expect(l->fast, 1) && agent)
        return scan_fused(l, agent);
#endif
    if (__builtin_expect(l->n_keys > 0 && !l->always, 1) && agent) {
#ifdef SM_HAVE_AVX2
        if (l->avx2)
            return scan_avx2(l, agent);
#endif
        return scan(l, agent);
    }
    /* No crawler (0), or one with no literal (the patterns decide). */
    return agent && l->always;
}

int sm_crawl_precheck(const sm_crawl_list *l, const char *agent)
{
    return precheck(l, agent);
}

/* Is key "User-Agent" (ASCII case-insensitively, as strcasecmp)?  Its
 * first byte is known to be u or U.  A byte at a time: nothing past the
 * key's end is read. */
static APR_INLINE int ua_key_bytes(const char *k)
{
    return (k[1] | 0x20) == 's' && (k[2] | 0x20) == 'e'
           && (k[3] | 0x20) == 'r' && k[4] == '-' && (k[5] | 0x20) == 'a'
           && (k[6] | 0x20) == 'g' && (k[7] | 0x20) == 'e'
           && (k[8] | 0x20) == 'n' && (k[9] | 0x20) == 't' && !k[10];
}

#ifdef __SSE2__
/* The same in one SSE2 compare of the key's 11 bytes (the NUL too) where
 * the 16 bytes from the key cannot cross into the next page: the load may
 * read past a shorter key's NUL, as fused does, never into a page
 * the key does not start in, and only the first 11 lanes count (a shorter
 * key's NUL is among them, and differs from the byte wanted there).
 * Hence no_sanitize_address.  Near a page's end, a byte at a time. */
__attribute__((no_sanitize_address))
static APR_INLINE int ua_key(const char *k)
{
    static const char want[16] = "user-agent";      /* NUL-padded */
    static const char fold[16] = {
        0x20, 0x20, 0x20, 0x20, 0, 0x20, 0x20, 0x20, 0x20, 0x20, 0
    };

    if (__builtin_expect(((apr_uintptr_t)k & 4095) <= 4096 - 16, 1)) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)k);
        __m128i f = _mm_loadu_si128((const __m128i *)(const void *)fold);
        __m128i w = _mm_loadu_si128((const __m128i *)(const void *)want);
        unsigned eq = (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_or_si128(x, f), w));
        return (eq & 0x7ffu) == 0x7ffu;
    }
    return ua_key_bytes(k);
}
#else
#define ua_key ua_key_bytes
#endif

/* The first field named User-Agent among fields, in one pass that looks
 * at the first byte of most keys (apr_table_get's key checksum and
 * strcasecmp cost 102 instructions); NULL: none. */
static APR_INLINE const char *ua_field(const apr_array_header_t *fields)
{
    const apr_table_entry_t *e = (const apr_table_entry_t *)fields->elts;
    const apr_table_entry_t *end = e + fields->nelts;

    for (; e < end; e++)
        if ((e->key[0] | 0x20) == 'u' && ua_key(e->key))
            return e->val;
    return NULL;
}

#ifdef SM_HAVE_AVX2
/* The rare end of visitor_fused, apart so that the usual path saves no
 * register. */
__attribute__((noinline, target("avx2")))
static const char *visitor_rest(const sm_crawl_list *l, const char *rest,
                                const char *ua)
{
    return scan_avx2(l, rest) ? ua : NULL;
}

/* The usual case: the pass and the one-pass scan in one leaf function. */
__attribute__((noinline, target("avx2"), no_sanitize_address))
static const char *visitor_fused(const sm_crawl_list *l,
                                 const apr_array_header_t *fields)
{
    const char *ua = ua_field(fields), *rest;

    if (!ua || !(rest = fused(l, ua)))
        return NULL;
    return visitor_rest(l, rest, ua);
}
#endif

__attribute__((noinline))
static const char *visitor_any(const sm_crawl_list *l,
                               const apr_array_header_t *fields)
{
    const char *ua = ua_field(fields);

    return precheck(l, ua) ? ua : NULL;
}

/* Measured by bench/instr's steady-crawlers row (the module's visitor
 * cost) and t/unit/test_crawl's visitor_cost. */
const char *sm_crawl_visitor(const sm_crawl_list *l,
                             const apr_array_header_t *fields)
{
#ifdef SM_HAVE_AVX2
    if (__builtin_expect(l->fast, 1))
        return visitor_fused(l, fields);
#endif
    return visitor_any(l, fields);
}
