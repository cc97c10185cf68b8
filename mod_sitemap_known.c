/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_known.c: the static files whose last response was a
 * confirmed repeat, so that the next one needs neither the head filter nor
 * the rules (mod_sitemap_record.h, SITEMAP_HEAD_SKIPPED).
 *
 * A slot per raw facts' first part (the site, the method, the target, the
 * robots.txt rules' generation: the note's first, made by the prefetch at
 * translate_name) holds the file then (inode, mtime, size), its content
 * type (mod_mime's: the same pointer each time; a script's, set by the
 * script, is not there yet at insert_filter), the four hashed headers'
 * values and the raw facts' hash.  At insert_filter, a static file still
 * the same is served without the head filter (its insertion and its place
 * in the chain cost a steady request about 200 instructions); at
 * log_transaction, the same four values are the same raw facts, which the
 * recorder's memory is asked about without hashing them or running the
 * rules again (they ran when the slot was filled, on the same type and
 * target).  Anything else takes the ordinary way (mod_sitemap_record.c:
 * the head read from the file when it is no repeat).
 *
 * Per process (a graceful restart starts empty) and bounded: KNOWN_SLOTS
 * slots of 160 bytes, two ways a set (direct-mapped, the bench's 50 pages
 * had a pair or two sharing a slot, which took turns: 8% of its requests
 * went through the filter).  Event's threads share it: a
 * slot's seq is odd while one thread writes it (the only writer: the
 * others leave it alone), and a reader that sees it move takes no answer
 * from it. */
#include "mod_sitemap_record.h"

#include "http_request.h"

#include "util/sm_etag.h"

#define KNOWN_SLOTS 1024        /* a power of 2 */
#define KNOWN_VALUES 96         /* the four values' bytes at most */

typedef struct {
    apr_uint32_t seq;           /* odd while written */
    apr_uint16_t len[4];        /* each value's length + 1; 0: absent */
    apr_uint64_t first;         /* 0: empty */
    apr_uint64_t raw;
    apr_ino_t inode;
    apr_time_t mtime;
    apr_off_t size;
    const char *type;
    char values[KNOWN_VALUES];
} known_file;

static known_file known[KNOWN_SLOTS];

/* n's first part when it is the current one, else 0. */
static APR_INLINE apr_uint64_t key_of(const sitemap_head_note *n)
{
    return n && n->first_site
                   && n->first_generation == sitemap_disallow_generation
           ? n->first : 0;
}

/* first's slot (read again under its seq by the caller), NULL: none. */
static APR_INLINE known_file *slot_of(apr_uint64_t first)
{
    known_file *k = &known[first & (KNOWN_SLOTS - 2)];

    if (k->first == first)
        return k;
    return k[1].first == first ? k + 1 : NULL;
}

/* The slot to fill for first: its own, an empty one, else one of the set's
 * two by a bit of the time (no least-recently-used state to keep). */
static known_file *slot_for(apr_uint64_t first, apr_time_t now)
{
    known_file *k = slot_of(first);

    if (k)
        return k;
    k = &known[first & (KNOWN_SLOTS - 2)];
    if (!k->first)
        return k;
    if (!k[1].first)
        return k + 1;
    return k + ((now >> 10) & 1);
}

/* A writer's hold on k (seq made odd), or 0 when another thread has it. */
static int slot_take(known_file *k, apr_uint32_t *seq)
{
    apr_uint32_t s = __atomic_load_n(&k->seq, __ATOMIC_RELAXED);

    if ((s & 1) || !__atomic_compare_exchange_n(&k->seq, &s, s + 1, 0,
                                                __ATOMIC_ACQUIRE,
                                                __ATOMIC_RELAXED))
        return 0;
    /* The odd seq seen before any field written (a no-op on x86; the
     * acquire above does not order the exchange's own store). */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    *seq = s + 2;
    return 1;
}

static void slot_give(known_file *k, apr_uint32_t seq)
{
    __atomic_store_n(&k->seq, seq, __ATOMIC_RELEASE);
}

/* Did k stay unwritten since s was read (its fields read between)? */
static APR_INLINE int slot_held(const known_file *k, apr_uint32_t s)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(&k->seq, __ATOMIC_RELAXED) == s;
}

static APR_INLINE int static_file(const request_rec *r)
{
    return r->finfo.filetype == APR_REG && r->content_type
           && sitemap_served_as_file(r);
}

SM_HOT int sitemap_known_file(const request_rec *r,
                              const sitemap_head_note *n)
{
    apr_uint64_t first = key_of(n);
    const known_file *k;
    apr_uint32_t s;

    if (!first || !static_file(r) || !(k = slot_of(first)))
        return 0;
    s = __atomic_load_n(&k->seq, __ATOMIC_ACQUIRE);
    if ((s & 1) || k->first != first || k->inode != r->finfo.inode
        || k->mtime != r->finfo.mtime || k->size != r->finfo.size
        || k->type != r->content_type)
        return 0;
    return slot_held(k, s);
}

static const char *value_of(const sitemap_response_headers *h, int i)
{
    switch (i) {
    case 0: return h->last_modified;
    case 1: return h->etag;
    case 2: return h->x_robots_tag;
    default: return h->cache_control;
    }
}

void sitemap_known_remember(const request_rec *last,
                            const sitemap_head_note *note)
{
    apr_uint64_t first = key_of(note);
    apr_size_t l[4], total = 0, pos = 0;
    known_file *k;
    apr_uint32_t seq;
    int i;

    /* Only what sitemap_head_read_file can read if it must. */
    if (!first || !note->raw || !note->headers.etag || !static_file(last)
        || !sitemap_head_readable(last))
        return;
    for (i = 0; i < 4; i++) {
        const char *v = value_of(&note->headers, i);
        l[i] = v ? strlen(v) : 0;
        total += l[i];
    }
    if (total > KNOWN_VALUES)
        return;
    k = slot_for(first, last->request_time);
    if (!slot_take(k, &seq))
        return;
    k->first = first;
    k->raw = note->raw;
    k->inode = last->finfo.inode;
    k->mtime = last->finfo.mtime;
    k->size = last->finfo.size;
    k->type = last->content_type;
    for (i = 0; i < 4; i++) {
        const char *v = value_of(&note->headers, i);
        k->len[i] = v ? (apr_uint16_t)(l[i] + 1) : 0;
        if (v) {
            memcpy(k->values + pos, v, l[i]);
            pos += l[i];
        }
    }
    slot_give(k, seq);
}

void sitemap_known_forget(const sitemap_head_note *note)
{
    apr_uint64_t first = key_of(note);
    known_file *k;
    apr_uint32_t seq;

    if (!first)
        return;
    if ((k = slot_of(first)) && slot_take(k, &seq)) {
        k->first = 0;
        slot_give(k, seq);
    }
}

SM_HOT int sitemap_known_repeat(const request_rec *last,
                                const sitemap_head_note *n,
                                const sitemap_response_headers *h,
                                apr_uint64_t *raw)
{
    apr_uint64_t first = key_of(n);
    const known_file *k;
    const char *vals[4];
    apr_size_t pos = 0;
    apr_uint32_t s;
    int i;

    if (!first || !(k = slot_of(first)))
        return 0;
    s = __atomic_load_n(&k->seq, __ATOMIC_ACQUIRE);
    if ((s & 1) || k->first != first || k->type != last->content_type)
        return 0;
    vals[0] = h->last_modified;
    vals[1] = h->etag;
    vals[2] = h->x_robots_tag;
    vals[3] = h->cache_control;
    for (i = 0; i < 4; i++) {
        const char *v = vals[i];
        apr_size_t len = k->len[i];

        if (!v != !len)
            return 0;
        if (!v)
            continue;
        /* A torn read (a writer meanwhile: slot_held says so below) may
         * mix two fills' lengths: never past the slot's values. */
        if (len - 1 > KNOWN_VALUES - pos)
            return 0;
        /* strncmp: v ends at its NUL, the slot's value at len - 1.  The
         * ETag may have gained mod_deflate's suffix since the body began
         * (the slot keeps the filter's place's values): the same file. */
        if ((strncmp(v, k->values + pos, len - 1) != 0 || v[len - 1])
            && (i != 1 || !sm_etag_is_encoded_n(k->values + pos, len - 1, v)))
            return 0;
        pos += len - 1;
    }
    *raw = k->raw;
    return slot_held(k, s);
}
