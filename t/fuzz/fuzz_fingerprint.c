/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_fingerprint: the content fingerprint (sm_fingerprint), which reads
 * the whole body of every page without validators, in the pieces httpd's
 * buckets bring.
 *
 * Input: 8 bytes choosing where the body is cut, then the body.  The
 * fingerprint must not depend on the cuts: the body in one piece, in the
 * pieces the input says and one byte at a time give the same value, never
 * 0; and the body with one more comment before it (what a timing report
 * adds) gives it too unless the body could end inside a tag or comment. */
#include "fuzz.h"
#include "head/sm_fingerprint.h"

static uint64_t fp_of(apr_pool_t *p, const char *body, size_t n,
                      uint64_t cuts, int bytewise)
{
    sm_fingerprint *fp = sm_fingerprint_create(p);
    size_t off = 0;

    while (off < n) {
        size_t piece = n - off;
        char *copy;

        if (bytewise)
            piece = 1;
        else if (cuts) {
            unsigned k = (unsigned)(cuts & 15);
            cuts = cuts >> 4 | cuts << 60;
            piece = k ? k : 300;
            if (piece > n - off)
                piece = n - off;
        }
        if (!(copy = malloc(piece)))
            abort();
        memcpy(copy, body + off, piece);
        sm_fingerprint_feed(fp, copy, piece);
        free(copy);
        off += piece;
    }
    return sm_fingerprint_end(fp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p;
    uint64_t cuts = 0, whole;
    const char *body;
    size_t n;

    if (size < 8)
        return 0;
    memcpy(&cuts, data, 8);
    body = (const char *)data + 8;
    n = size - 8;
    p = fuzz_pool();
    whole = fp_of(p, body, n, 0, 0);
    if (!whole)
        abort();
    if (fp_of(p, body, n, cuts, 0) != whole
        || (n < 4096 && fp_of(p, body, n, 0, 1) != whole)) {
        fprintf(stderr, "fingerprint depends on where the body is cut\n");
        abort();
    }
    /* A comment before a document that starts with a tag changes
     * nothing. */
    if (n && body[0] == '<' && n < 4096) {
        static const char c[] = "<!-- generated in 0.123 s -->";
        char *with = malloc(sizeof(c) - 1 + n);
        if (!with)
            abort();
        memcpy(with, c, sizeof(c) - 1);
        memcpy(with + sizeof(c) - 1, body, n);
        if (fp_of(p, with, sizeof(c) - 1 + n, 0, 0) != whole) {
            fprintf(stderr, "a leading comment changed the fingerprint\n");
            abort();
        }
        free(with);
    }
    apr_pool_destroy(p);
    return 0;
}
