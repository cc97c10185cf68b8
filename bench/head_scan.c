/* SPDX-License-Identifier: Apache-2.0 */
/* bench/head_scan.c: what the head scanner (src/head/sm_head.c) costs per page
 * and per KB of head read, on bench/cms_page.html (a WordPress-with-Yoast
 * shaped page: a ~6.7 KB head of 14 meta and 23 link tags, inline
 * scripts and styles), fed in one piece (httpd's mmap'd file bucket) and in
 * 2,000-byte pieces (a CGI's or a proxy's small buckets).  Compared with a
 * bare memchr('<') over the same bytes: the floor of any scanner.
 *
 *   bench/run --only headscan       (built and run by bench/run)
 *   or by hand, from the top of a built tree:
 *   cc -O2 -Isrc $(pkg-config --cflags apr-1) bench/head_scan.c \
 *      src/.libs/libsitemap.a \
 *      $(pkg-config --libs apr-1 apr-util-1 sqlite3 libpcre2-8 libidn2) \
 *      -lpthread \
 *      -o /tmp/head_scan && /tmp/head_scan bench/cms_page.html
 *
 * With a third argument, a piece size, it only scans the page n times in
 * pieces of that size and prints nothing: for counting instructions
 * (bench/head_instr: callgrind over two page counts, subtracted).  With a
 * fourth, "default", the scanner reads only what the default
 * configuration uses (no images, no description or publication time);
 * "memchr" or "masks" instead run a floor instead of the scanner
 * over the head (up to its "</head>"): memchr('<') from tag to tag, or
 * (x86-64) the structural pass of issue 35's design: 64 bytes at a time,
 * SSE2 masks of '<', '>', '"', '\'', '=' and blanks (bytes up to 0x20),
 * the quoted bytes by a prefix XOR of the quote mask, nothing visited. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <apr_general.h>
#include <apr_pools.h>

#include "head/sm_head.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static volatile size_t sink;

#if defined(__SSE2__)
#include <emmintrin.h>

/* The structural masks of doc[0..len), 64 bytes a block (the tail
 * padded), summed into sink so that none is optimised away. */
static void floor_masks(const char *doc, size_t len)
{
    const __m128i lt = _mm_set1_epi8('<'), gt = _mm_set1_epi8('>'),
                  dq = _mm_set1_epi8('"'), sq = _mm_set1_epi8('\''),
                  eq = _mm_set1_epi8('='), sp = _mm_set1_epi8(0x20);
    unsigned long long acc = 0, inside = 0;
    char tail[64];
    size_t at;

    for (at = 0; at < len; at += 64) {
        const char *b = doc + at;
        unsigned long long m0 = 0, m1 = 0, m2 = 0, m3 = 0, m4 = 0, m5 = 0,
                           q;
        int k;
        if (len - at < 64) {
            memset(tail, ' ', sizeof(tail));
            memcpy(tail, b, len - at);
            b = tail;
        }
#define MASK(v) ((unsigned long long)(unsigned)_mm_movemask_epi8(v) << (16 * k))
        for (k = 0; k < 4; k++) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)
                                        (b + 16 * k));
            m0 |= MASK(_mm_cmpeq_epi8(x, lt));
            m1 |= MASK(_mm_cmpeq_epi8(x, gt));
            m2 |= MASK(_mm_cmpeq_epi8(x, dq));
            m3 |= MASK(_mm_cmpeq_epi8(x, sq));
            m4 |= MASK(_mm_cmpeq_epi8(x, eq));
            m5 |= MASK(_mm_cmpeq_epi8(_mm_min_epu8(x, sp), x));
        }
#undef MASK
        q = m2;                         /* prefix XOR: quoted bytes */
        q ^= q << 1;
        q ^= q << 2;
        q ^= q << 4;
        q ^= q << 8;
        q ^= q << 16;
        q ^= q << 32;
        q ^= inside;
        inside = (unsigned long long)((long long)q >> 63);
        acc += (m0 & ~q) ^ (m1 & ~q) ^ m3 ^ m4 ^ m5;
    }
    sink += (size_t)acc;
}
#endif

static void floor_only(const char *doc, size_t head_len, int n,
                       const char *which)
{
    int i;

    for (i = 0; i < n; i++) {
        if (strcmp(which, "memchr") == 0) {
            const char *s = doc, *end = doc + head_len;
            while ((s = memchr(s, '<', (size_t)(end - s))))
                s++;
            sink += (size_t)(end - doc);
        }
#if defined(__SSE2__)
        else {
            floor_masks(doc, head_len);
        }
#endif
    }
}

/* What the scanner reads: everything (sm_head_create: SitemapImages On
 * and a news sitemap or llms.txt), or with "default" as the fourth
 * argument what the default configuration reads (neither). */
static unsigned wants = SM_HEAD_WANT_ALL;

static double scan(apr_pool_t *root, const char *doc, size_t len,
                   size_t piece, int n)
{
    double t0 = now_ns();
    int i;

    for (i = 0; i < n; i++) {
        apr_pool_t *p;
        sm_head *h;
        size_t at = 0;
        apr_pool_create(&p, root);
        h = sm_head_create_ex(p, wants);
        while (at < len) {
            size_t k = len - at < piece ? len - at : piece;
            if (sm_head_feed(h, doc + at, k))
                break;
            at += k;
        }
        sink += sm_head_result_get(h)->noindex;
        apr_pool_destroy(p);
    }
    return (now_ns() - t0) / n;
}

static double floor_memchr(const char *doc, size_t len, int n)
{
    double t0 = now_ns();
    int i;

    for (i = 0; i < n; i++) {
        const char *s = doc, *end = doc + len;
        size_t tags = 0;
        while ((s = memchr(s, '<', (size_t)(end - s)))) {
            tags++;
            s++;
        }
        sink += tags;
    }
    return (now_ns() - t0) / n;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "bench/cms_page.html";
    int n = argc > 2 ? atoi(argv[2]) : 100000;
    FILE *f = fopen(path, "rb");
    static char doc[1 << 20];
    size_t len, head_len;
    apr_pool_t *root;
    double whole, pieces, floor_ns;
    const char *end;

    if (!f) {
        perror(path);
        return 1;
    }
    len = fread(doc, 1, sizeof(doc) - 1, f);
    fclose(f);
    doc[len] = '\0';
    end = strstr(doc, "</head>");
    head_len = end ? (size_t)(end - doc) + 7 : len;
    apr_initialize();
    apr_pool_create(&root, NULL);
    if (argc > 4 && strcmp(argv[4], "default") == 0)
        wants = 0;
    else if (argc > 4) {
        floor_only(doc, head_len, n, argv[4]);
        apr_terminate();
        return 0;
    }
    if (argc > 3) {
        size_t piece = (size_t)atol(argv[3]);
        scan(root, doc, len, piece ? piece : len, n);
        apr_terminate();
        return 0;
    }

    scan(root, doc, len, len, n / 10);           /* warm up */
    whole = scan(root, doc, len, len, n);
    pieces = scan(root, doc, len, 2000, n);
    floor_ns = floor_memchr(doc, head_len, n);
    printf("page %s: %zu bytes, head %zu bytes (%.2f KB)\n", path, len,
           head_len, head_len / 1024.0);
    printf("scanner, one piece:      %7.0f ns/page  %6.0f ns/KB  %6.0f MB/s\n",
           whole, whole / (head_len / 1024.0), head_len / whole * 1e3);
    printf("scanner, 2000-byte pieces: %5.0f ns/page  %6.0f ns/KB\n", pieces,
           pieces / (head_len / 1024.0));
    printf("floor, memchr('<') only: %7.0f ns/page  %6.0f ns/KB\n", floor_ns,
           floor_ns / (head_len / 1024.0));
    apr_terminate();
    return 0;
}
