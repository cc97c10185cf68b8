/* SPDX-License-Identifier: Apache-2.0 */
/* sm_head_bytes.h: the byte-level search of the head scanner (sm_head.c
 * only): byte classes of the HTML tokenizer, ASCII case-insensitive words,
 * and the first byte of a set found a word (eight bytes) at a time.
 * Written by hand: the C library's memchr finds one byte, strcspn and
 * strpbrk need NUL-terminated text (a page's buckets are not), and no
 * library at hand folds ASCII case without a locale. */
#ifndef SM_HEAD_BYTES_H
#define SM_HEAD_BYTES_H

#include <string.h>

#include <apr.h>

#if defined(__SSE2__)
#include <emmintrin.h>    /* x86-64 always has it */
#endif

/* Byte classes of the tokenizer, one table lookup per byte. */
enum { C_SPACE = 1, C_SLASH = 2, C_EQ = 4, C_GT = 8, C_COMMA = 16,
       C_AMP = 32 };
static const unsigned char byte_class[256] = {
    ['\t'] = C_SPACE, ['\n'] = C_SPACE, ['\f'] = C_SPACE, ['\r'] = C_SPACE,
    [' '] = C_SPACE, ['/'] = C_SLASH, ['='] = C_EQ, ['>'] = C_GT,
    [','] = C_COMMA, ['&'] = C_AMP
};
#define IN_CLASS(c, set) (byte_class[(unsigned char)(c)] & (set))
#define IS_SPACE(c) IN_CLASS(c, C_SPACE)
#define IS_ALPHA(c) ((unsigned)(((unsigned char)(c) | 0x20) - 'a') < 26)

/* Is s[0..n) the word lower (n bytes of lowercase ASCII letters) in any
 * case?  For a letter, c | 0x20 is its lowercase and no other byte maps to
 * it: no locale, no table, no branch per byte on the case. */
static APR_INLINE int ci_is(const char *s, apr_size_t n, const char *lower,
                            apr_size_t lower_len)
{
    apr_size_t i;

    if (n != lower_len)
        return 0;
    for (i = 0; i < n; i++)
        if (((unsigned char)s[i] | 0x20) != (unsigned char)lower[i])
            return 0;
    return 1;
}
#define CI_IS(s, n, word) ci_is(s, n, word, sizeof(word) - 1)

/* Eight bytes at a time (SWAR): the first byte of a word in a set is
 * found without a branch per byte, which is what makes this scanner fast
 * in a busy server, where the loops' exits of a byte-wise one are
 * mispredicted.  load8 reads s[0..8) as a little-endian word on any host;
 * in each *_BYTES mask the lowest flagged byte is exactly the first match
 * (a borrow only flags bytes above a true one), so only that is used. */
#define ONES  0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
#define EQ_BYTES(w, c) ((((w) ^ (ONES * (c))) - ONES) & ~((w) ^ (ONES * (c))) \
                        & HIGHS)
#define BELOW_BYTES(w, n) (((w) - ONES * (n)) & ~(w) & HIGHS)

static APR_INLINE apr_uint64_t load8(const char *s)
{
    apr_uint64_t w;

    memcpy(&w, s, 8);
#if APR_IS_BIGENDIAN
    w = __builtin_bswap64(w);
#endif
    return w;
}

#define FIRST_BYTE(mask) ((apr_size_t)__builtin_ctzll(mask) >> 3)

/* The first byte at or after p in class set (C_SPACE counting only ASCII
 * whitespace), or end.  set: C_SPACE plus any of C_SLASH, C_EQ, C_GT,
 * C_COMMA, C_AMP. */
static APR_INLINE const char *find_class(const char *p, const char *end,
                                         int set)
{
    while (end - p >= 8) {
        apr_uint64_t w = load8(p), m = BELOW_BYTES(w, 0x21);
        if (set & C_SLASH)
            m |= EQ_BYTES(w, '/');
        if (set & C_EQ)
            m |= EQ_BYTES(w, '=');
        if (set & C_GT)
            m |= EQ_BYTES(w, '>');
        if (set & C_COMMA)
            m |= EQ_BYTES(w, ',');
        if (set & C_AMP)
            m |= EQ_BYTES(w, '&');
        if (!m) {
            p += 8;
            continue;
        }
        p += FIRST_BYTE(m);
        if (IN_CLASS(*p, set))
            return p;
        p++;            /* a control byte that is not whitespace */
    }
    while (p < end && !IN_CLASS(*p, set))
        p++;
    return p;
}

#if defined(__SSE2__)
/* With SSE2 (x86-64): the first byte of p[0..16) that ends a name (a
 * blank, '/', '>', and '=' when eq is set), or NULL when none does, when
 * fewer than 16 bytes are left, or when the first byte up to 0x20 is a
 * control byte that is no blank (find_class decides then).  One min
 * (bytes up to 0x20), three compares and a movemask. */
static APR_INLINE const char *name_end16(const char *p, const char *end,
                                         int eq)
{
    __m128i x, d;
    unsigned m;

    if (end - p < 16)
        return NULL;
    x = _mm_loadu_si128((const __m128i *)(const void *)p);
    d = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x20)), x),
                     _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('/')),
                                  _mm_cmpeq_epi8(x, _mm_set1_epi8('>'))));
    if (eq)
        d = _mm_or_si128(d, _mm_cmpeq_epi8(x, _mm_set1_epi8('=')));
    m = (unsigned)_mm_movemask_epi8(d);
    if (!m)
        return NULL;
    p += __builtin_ctz(m);
    return IN_CLASS(*p, C_SPACE | C_SLASH | C_GT | C_EQ) ? p : NULL;
}
#endif

/* The first c at or after p, or NULL.  With SSE2 (x86-64), inline: 32
 * bytes a step (two compares, one test), then 16, memchr for the last 15
 * of the chunk; elsewhere the two words ahead inline (most attribute
 * values are short), memchr beyond.  Also a tag's '>' where quotes do not
 * count (a tag not read, an end tag): no call for a short search. */
static APR_INLINE const char *find_byte(const char *p, const char *end,
                                        char c)
{
#if defined(__SSE2__)
    const __m128i cc = _mm_set1_epi8(c);

    while (end - p >= 32) {
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
            _mm_loadu_si128((const __m128i *)(const void *)p), cc))
            | (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
            _mm_loadu_si128((const __m128i *)(const void *)(p + 16)), cc))
              << 16;
        if (m)
            return p + __builtin_ctz(m);
        p += 32;
    }
    while (end - p >= 16) {
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
            _mm_loadu_si128((const __m128i *)(const void *)p), cc));
        if (m)
            return p + __builtin_ctz(m);
        p += 16;
    }
#else
    if (end - p >= 16) {
        apr_uint64_t m = EQ_BYTES(load8(p), (unsigned char)c);
        if (m)
            return p + FIRST_BYTE(m);
        m = EQ_BYTES(load8(p + 8), (unsigned char)c);
        if (m)
            return p + 8 + FIRST_BYTE(m);
        p += 16;
    }
#endif
    return memchr(p, c, (apr_size_t)(end - p));
}

/* s[0..n) (n <= 8) as a little-endian word with ASCII letters folded to
 * lowercase (c | 0x20: exact for letters, and WORD constants hold letters
 * only), the bytes past n zero. */
static APR_INLINE apr_uint64_t folded_word(const char *s, apr_size_t n,
                                           const char *end)
{
    apr_uint64_t w = 0, keep = n >= 8 ? ~0ULL : (1ULL << (8 * n)) - 1;
    apr_size_t i;

    if (end - s >= 8) {
        w = load8(s);
    }
    else {
        for (i = 0; i < n && i < 8; i++)
            w |= (apr_uint64_t)(unsigned char)s[i] << (8 * i);
    }
    return (w | 0x2020202020202020ULL) & keep;
}

/* The high bit of each byte of x that is zero, exactly (no borrow from a
 * lower byte, unlike EQ_BYTES: any flagged byte is true, not only the
 * lowest). */
#define ZERO_BYTES(x) (~((((x) & 0x7f7f7f7f7f7f7f7fULL) \
                          + 0x7f7f7f7f7f7f7f7fULL) | (x) \
                         | 0x7f7f7f7f7f7f7f7fULL))

/* May v[0..len) hold a word containing the two letters pair (lowercase),
 * in any case?  Not when it has no '&' (no reference to decode) and the
 * two letters are nowhere side by side in it.  Eight bytes a load, the
 * loads seven bytes apart (a pair may straddle two). */
static APR_INLINE int may_hold(const char *v, apr_size_t len,
                               const char *pair)
{
    const apr_uint64_t c0 = ONES * (unsigned char)pair[0],
                       c1 = ONES * (unsigned char)pair[1];
    apr_size_t i = 0;

    for (; i + 8 <= len; i += 7) {
        apr_uint64_t w = load8(v + i), f = w | 0x2020202020202020ULL;
        if (ZERO_BYTES(w ^ (ONES * '&'))
            || (ZERO_BYTES(f ^ c0) & (ZERO_BYTES(f ^ c1) >> 8)))
            return 1;
    }
    for (; i < len; i++) {
        if (v[i] == '&' || (i + 1 < len
                            && ((unsigned char)v[i] | 0x20) == (c0 & 0xff)
                            && ((unsigned char)v[i + 1] | 0x20)
                               == (c1 & 0xff)))
            return 1;
    }
    return 0;
}

#define WORD_BYTE(s, i) \
    ((apr_uint64_t)((i) < sizeof(s) - 1 ? (unsigned char)(s)[(i) < sizeof(s) - 1 ? (i) : 0] : 0) \
     << (8 * (i)))
#define WORD(s) (WORD_BYTE(s, 0) | WORD_BYTE(s, 1) | WORD_BYTE(s, 2) \
                 | WORD_BYTE(s, 3) | WORD_BYTE(s, 4) | WORD_BYTE(s, 5) \
                 | WORD_BYTE(s, 6) | WORD_BYTE(s, 7))

#endif
