/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_robots: the robots.txt scanner (sm_robots), which sees the body of
 * whatever produces robots.txt, in the pieces httpd's buckets bring.
 *
 * Input: 8 bytes choosing where the body is cut, then the body.  The
 * scanner streams, so its answers must not depend on the cuts: the body fed
 * in one piece, in pieces cut where the input says, and one byte at a time
 * must give the same bytes to insert at the start (and the same place:
 * after a byte order mark, exactly when the body starts with one) and to
 * add at the end.  Those at the end are "" or whole lines: an optional
 * line end, then "Sitemap: URL" lines for URLs of the list only, each
 * ending like the body's last line. */
#include "fuzz.h"
#include "serve/sm_robots.h"

#include <apr_tables.h>

static const char *const urls[] = {
    "https://www.example.com/sitemap.xml",
    "https://static.example.com/news-sitemap.xml",
};

/* What the scanner says at the start of a long body (sm_robots_head,
 * asked here after the whole body) and at its end (sm_robots_tail). */
typedef struct {
    const char *head, *tail;
    apr_size_t head_len, offset, tail_len;
} answer;

static void scan(apr_pool_t *p, const apr_array_header_t *list,
                 const char *body, size_t n, uint64_t cuts, int bytewise,
                 answer *a)
{
    sm_robots *rb = sm_robots_create(p, list);
    size_t off = 0;

    while (off < n) {
        size_t piece = n - off;

        if (bytewise)
            piece = 1;
        else if (cuts) {
            /* The next 4 bits of the seed: a piece of 1 to 16 bytes, or
             * (0) up to 300, past the scanner's small internal steps. */
            unsigned k = (unsigned)(cuts & 15);
            cuts = cuts >> 4 | cuts << 60;
            piece = k ? k : 300;
            if (piece > n - off)
                piece = n - off;
        }
        {
            /* Each piece in a buffer of its own exact size. */
            char *copy = malloc(piece);
            if (!copy)
                abort();
            memcpy(copy, body + off, piece);
            sm_robots_feed(rb, copy, piece);
            free(copy);
        }
        off += piece;
    }
    a->head = sm_robots_head(rb, p, &a->head_len, &a->offset);
    a->tail = sm_robots_tail(rb, p, &a->tail_len);
}

static int same(const answer *a, const answer *b)
{
    return a->head_len == b->head_len && a->offset == b->offset
           && memcmp(a->head, b->head, a->head_len) == 0
           && a->tail_len == b->tail_len
           && memcmp(a->tail, b->tail, a->tail_len) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    apr_array_header_t *list = apr_array_make(p, 2, sizeof(char *));
    uint64_t cuts = 0;
    answer whole, cut, bytes;
    const char *s, *eol, *added;
    apr_size_t wlen;
    size_t i;

    for (i = 0; i < 8 && size; i++)
        cuts = cuts << 8 | fuzz_take_byte(&data, &size);
    for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++)
        APR_ARRAY_PUSH(list, const char *) = urls[i];

    scan(p, list, (const char *)data, size, 0, 0, &whole);
    scan(p, list, (const char *)data, size, cuts, 0, &cut);
    FUZZ_ASSERT(same(&cut, &whole));
    if (size <= 4096) {
        scan(p, list, (const char *)data, size, 0, 1, &bytes);
        FUZZ_ASSERT(same(&bytes, &whole));
    }

    /* The head goes after a byte order mark, or at the very start. */
    FUZZ_ASSERT(whole.offset == 0
                || (whole.offset == 3 && size >= 3
                    && memcmp(data, "\xEF\xBB\xBF", 3) == 0));
    FUZZ_ASSERT(whole.offset == 3 || size < 3
                || memcmp(data, "\xEF\xBB\xBF", 3) != 0);

    /* The shape of what is added at the end. */
    added = whole.tail;
    wlen = whole.tail_len;
    FUZZ_ASSERT(strlen(added) == wlen);
    s = added;
    if (wlen) {
        eol = wlen >= 2 && added[wlen - 2] == '\r' ? "\r\n" : "\n";
        FUZZ_ASSERT(added[wlen - 1] == '\n');
        if (strncmp(s, eol, strlen(eol)) == 0) {
            /* A line end first only when the body lacks one. */
            FUZZ_ASSERT(size && data[size - 1] != '\n');
            s += strlen(eol);
        }
        while (*s) {
            int known = 0;
            FUZZ_ASSERT(strncmp(s, "Sitemap: ", 9) == 0);
            s += 9;
            for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
                size_t ul = strlen(urls[i]);
                if (strncmp(s, urls[i], ul) == 0
                    && strncmp(s + ul, eol, strlen(eol)) == 0) {
                    s += ul + strlen(eol);
                    known = 1;
                    break;
                }
            }
            FUZZ_ASSERT(known);
        }
    }
    apr_pool_destroy(p);
    return 0;
}
