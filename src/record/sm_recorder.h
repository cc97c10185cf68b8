/* SPDX-License-Identifier: Apache-2.0 */
/* sm_recorder.h: the per-process write path between requests and the stores.
 *
 * Requests never wait on SQLite in the steady state:
 *   - a fixed-size memory of recently written URLs (a 4-way set-associative
 *     table of 64-bit hashes, no allocation) drops repeats at once;
 *   - new or changed URLs go into a pending batch (deduplicated: the last
 *     change of a URL wins) that a background thread writes in one
 *     transaction at least every flush_interval, or sooner when the batch
 *     reaches batch_size;
 *   - a full queue makes the request wait for the writer (backpressure);
 *     only while the store is known to be faulty are changes dropped, and
 *     then they are counted and logged, never silently lost.
 * A failed batch is put back (up to the queue's size) and retried; the
 * store is reopened after a fault, or when its file was replaced or
 * deleted.  sm_recorder_stop writes everything still pending.
 *
 * One writer (sm_writer: the thread, the queue, the memory and its lock)
 * serves any number of stores, one recorder each: a server with a thousand
 * store files has one writer thread and one memory per process.  A store
 * file not written for a minute is closed until its next batch. */
#ifndef SM_RECORDER_H
#define SM_RECORDER_H

#include <apr_pools.h>
#include <apr_time.h>

#include "util/sm_log.h"
#include "store/sm_store.h"

typedef struct sm_recorder sm_recorder;
typedef struct sm_writer sm_writer;

typedef struct {
    const char *db_path;
    apr_interval_time_t flush_interval;  /* longest wait in memory */
    int batch_size;                      /* write early at this many */
    int queue_max;                       /* backpressure beyond this */
    int busy_timeout_ms;                 /* SQLite lock wait per batch */
    const sm_logger *log;
    /* What to open when db_path, which messages show, is a URI with its
     * password masked (sm_uri_mask); NULL: db_path. */
    const char *db_uri;
    /* Where changes not written at a stop are kept: files named
     * <spill_path>.spill-*, read back by the next writer of the store;
     * NULL: db_path (beside the store's file).  A URI store needs one. */
    const char *spill_path;
    /* The writer this store joins (sm_writer_create; it must not run yet);
     * NULL: one of its own, with flush_interval, batch_size and queue_max
     * above (given a writer, only flush_interval counts: the writer
     * writes at least as often as its stores ask). */
    sm_writer *writer;
    /* A store file not written for this long is closed; 0: a minute. */
    apr_interval_time_t idle_close;
    /* A failing store's retries: the first wait and the longest (each
     * drawn between half of it and all of it); 0: 1 s and 60 s. */
    apr_interval_time_t retry_min, retry_max;
    /* Changes lost are logged at most this often, and at the latest this
     * long after they were lost; 0: a minute. */
    apr_interval_time_t loss_log_every;
} sm_recorder_conf;

/* A writer for stores to join: batches of batch_size, a queue of at most
 * queue_max changes (all stores together).  It lives in (and is stopped
 * with) pool p; the recorders that join it must live as long. */
apr_status_t sm_writer_create(sm_writer **out, apr_pool_t *p, int batch_size,
                              int queue_max);

/* Counters, for tests, logs and benchmarks. */
typedef struct {
    apr_uint64_t offered;       /* changes handed to sm_recorder_add */
    apr_uint64_t skipped;       /* dropped as repeats by the memory */
    apr_uint64_t queued;        /* went into a batch */
    apr_uint64_t written;       /* committed to the store */
    apr_uint64_t dropped;       /* lost to a store fault (logged) */
    apr_uint64_t waits;         /* times a request waited for room */
    apr_uint64_t batches;       /* transactions committed */
    apr_uint64_t refused_full;  /* new URLs refused by max_urls */
    apr_uint64_t faults;        /* attempts to open or write that failed */
    apr_uint64_t noted;         /* verdict notes queued (sm_recorder_note) */
    apr_uint64_t notes_skipped; /* notes dropped: seen, over the rate or
                                   no room */
} sm_recorder_stats;

/* Forgotten URLs kept in shared memory for every process to drop: the
 * count ever published, on a line of its own (every request reads it),
 * and the latest SM_REC_FORGET_RING keys, entry n at
 * n % SM_REC_FORGET_RING with mark n + 1 once its key is written.  To be
 * allocated on a cache line (sm_cache_lines; the module's segment is
 * aligned so). */
#define SM_REC_FORGET_RING 128
typedef struct {
    apr_uint64_t key;           /* sm_rec_change_key: the same everywhere */
    apr_uint64_t mark;          /* n + 1 once entry n's key is written */
} sm_rec_forget_entry;
typedef struct sm_rec_forget_ring {
    apr_uint64_t seq __attribute__((aligned(64)));
    sm_rec_forget_entry entry[SM_REC_FORGET_RING]
        __attribute__((aligned(64)));
} sm_rec_forget_ring;

/* The same counts kept where every process of the server sees them (the
 * module puts this struct in shared memory; several recorders may add to
 * one).  Added to with atomic adds, only where the recorder already holds
 * its lock (never on the repeat path, sm_recorder_repeat); a reader sees
 * each counter whole, not all of them at one instant.  (URLs added and
 * removed per day are the store's: sm_store_recent.) */
typedef struct {
    apr_uint64_t recorded;      /* SM_CHANGE_RECORD changes offered */
    apr_uint64_t forgotten;     /* SM_CHANGE_FORGET changes offered */
    apr_uint64_t skipped;       /* repeats dropped by the memory */
    apr_uint64_t queued, written, refused_full, dropped;
    apr_uint64_t faults;        /* failed writes */
    apr_uint64_t last_write;    /* apr_time_t of the last good write */
    apr_uint64_t last_fault;    /* apr_time_t of the last failed write */
    char last_fault_why[256];   /* its reason (last writer wins) */
    /* URLs whose stored row a FORGET removed, as every process's writer
     * publishes them after its commit, for every process to drop from its
     * memory at its next repeat check (sm_recorder_forget.c); NULL: none.
     * Apart, so that a copy of the counters (the status page's) does not
     * copy it; in the same shared memory, mapped at the same address in
     * every child. */
    struct sm_rec_forget_ring *forget;
} sm_recorder_shared;

/* From now on also count into shared (NULL: stop), and follow the URLs
 * other processes forget (from those forgotten after this call on). */
void sm_recorder_share(sm_recorder *rec, sm_recorder_shared *shared);

/* The ring of forgotten URLs alone (sm_recorder_forget.c; for tests).
 * put: publish key as the next entry (any process, any thread).  take:
 * hand fn the keys of the entries from *seen to seq, moving *seen past
 * each; returns SM_REC_FORGET_OK when it reached seq,
 * SM_REC_FORGET_UNWRITTEN when it stopped at an entry counted but not yet
 * written (*seen left on it: try again later), SM_REC_FORGET_LAPPED when
 * entries were overwritten before they were read (*seen moved to seq:
 * the caller forgets everything of the store). */
enum { SM_REC_FORGET_OK, SM_REC_FORGET_UNWRITTEN, SM_REC_FORGET_LAPPED };
typedef void sm_rec_forget_fn(void *baton, apr_uint64_t key);
void sm_rec_forget_put(sm_rec_forget_ring *sh, apr_uint64_t key);
int sm_rec_forget_take(sm_rec_forget_ring *sh, apr_uint64_t *seen,
                       sm_rec_forget_fn *fn, void *baton);

/* fn(baton, now) runs in the writer's thread every half minute (or half
 * idle_close, when shorter), traffic or not: for upkeep that must not wait
 * for a request (the module closes idle readers there).  One per writer;
 * before it starts. */
typedef void sm_writer_upkeep_fn(void *baton, apr_time_t now);
void sm_writer_upkeep(sm_writer *w, sm_writer_upkeep_fn *fn, void *baton);

/* conf is copied.  The recorder lives in pool p; without conf->writer
 * it is stopped with p. */
apr_status_t sm_recorder_create(sm_recorder **out, apr_pool_t *p,
                                const sm_recorder_conf *conf);

/* Sites written through this recorder, for expiry, their settings and
 * spills (kept by reference).  Thread-safe.  Before sm_recorder_start any
 * number; after it, as many as were reserved: 0 when there is no room. */
int sm_recorder_add_site(sm_recorder *rec, const sm_site_conf *site);
/* Room for n sites added once the writer runs (SitemapSiteFromHost's). */
void sm_recorder_reserve_sites(sm_recorder *rec, int n);

/* Sites made on demand (SitemapSiteFromHost's): fn(baton, base) gives the
 * site of base, made now (and added with sm_recorder_add_site) when its
 * name is allowed, or NULL.  Asked for changes kept across a stop (spill
 * files) whose site this process has not made yet, so that they are not
 * dropped.  Called from the writer's thread.  At most 8 a recorder,
 * before the writer starts.  owns(baton, base): is base one of the sites
 * fn would make?  The writer's upkeep prunes the rows of those that never
 * held a URL (sm_store_prune_sites): at its first pass, then as often as
 * expiry runs (hourly, or four times per SitemapExpire when shorter). */
typedef const sm_site_conf *sm_site_maker_fn(void *baton, const char *base);
void sm_recorder_site_maker(sm_recorder *rec, sm_site_maker_fn *fn,
                            sm_base_test_fn *owns, void *baton);

/* Start the writer's background thread (once for all its recorders).
 * Without it (tests, sitemapctl), sm_recorder_flush writes. */
apr_status_t sm_recorder_start(sm_recorder *rec);

/* Hand over one change; its strings are copied.  Thread-safe.
 *
 * raw (0: none) is the caller's hash of every raw fact of the response
 * that decided this change: the site, the request target, status, method
 * and the headers the rules and the change read, joined by sm_recorder_raw
 * from the part known when the request arrives and the rest.  The recorder
 * remembers which URL and fingerprint it led to, so that the same
 * response again can be recognised by sm_recorder_repeat before any
 * parsing. */
void sm_recorder_add(sm_recorder *rec, const sm_change *change,
                     apr_uint64_t raw);

/* A repeat recognised by its final raw facts (known) whose facts seen
 * earlier in the same response (raw: the head filter's, before
 * mod_deflate suffixed the ETag) were not: raw leads where known does
 * from now on, so that the next such response is a repeat from its
 * start.  Without it, an alias of raw once evicted never came back (the
 * final facts' repeat decides nothing), and such a page's head was read
 * on every request.  Thread-safe; takes the lock (never on a repeat
 * whose start was known). */
void sm_recorder_repeat_alias(sm_recorder *rec, apr_uint64_t known,
                              apr_uint64_t raw, apr_time_t seen);

/* Verdict notes: a response the rules left out.  First ask
 * sm_recorder_note_skip with a hash of its raw facts (site, request
 * target, why, detail, status): 1 (drop it) when the same facts were
 * noted within the hour, by a lock-free per-process memory of the latest
 * SM_REC_NOTE_SLOTS (4096, one hash a slot), or when SM_REC_NOTES_PER_SEC
 * notes were taken this second; so a flood of one ignored URL costs a
 * hash and writes nothing.  Otherwise hand the note over with
 * sm_recorder_note: c->op is SM_CHANGE_NOTE, c->why says why (c->detail,
 * c->status with it).  It never waits for room (a full queue drops it);
 * the writer keeps the URL's latest verdict (sm_store_why) and nothing of
 * its listing changes. */
int sm_recorder_note_skip(sm_recorder *rec, apr_uint64_t facts,
                          apr_time_t seen);
void sm_recorder_note(sm_recorder *rec, const sm_change *c);

/* Crawl coverage: a crawler's verified fetch (c->op SM_CHANGE_CRAWL,
 * c->crawler, c->url, c->seen, c->status, c->sitemap; sm_store.h).  Queued
 * apart from the URL's own change and note (a fetch never takes their
 * place; a later fetch of the URL by the same crawler in the batch takes
 * the earlier one's), and after them when they were handed over first: so
 * hand the response's record over first, for a page's first fetch to
 * count as listed.  Never waits for room: 0 when the queue is full (the
 * fetch is dropped), 1 when queued.  Not kept across a stop. */
int sm_recorder_crawl(sm_recorder *rec, const sm_change *c);

/* SitemapImages: an image fetched for a page (c->op SM_CHANGE_IMAGE,
 * c->url the page, c->image the image's URL) or gone
 * (SM_CHANGE_IMAGE_GONE, c->image), with the raw facts of the response
 * as for sm_recorder_add: the same change again within the memory's
 * freshness is dropped, and its raw facts are a repeat
 * (sm_recorder_repeat).  Never waits for room (a full queue drops it);
 * not kept across a stop. */
void sm_recorder_image(sm_recorder *rec, const sm_change *c,
                       apr_uint64_t raw);
/* The site's robots.txt as a process read it from its file or served
 * it (c->op SM_CHANGE_ROBOTS, c->site, c->url "/robots.txt", c->detail
 * the body, at most SM_ROBOTS_BODY_MAX bytes, c->seen): the writer stores
 * it when it differs from the stored one, and then removes the site's
 * stored URLs its rules disallow (a sweep in chunks between batches, each
 * with the verdict "robots.txt line N disallows it for AGENT").  From then
 * on, and whatever process or server adds it, a URL the stored rules
 * disallow is never added (removed instead, with that verdict).  Hand it
 * over only when it changed: one item per site, never waits. */
void sm_recorder_robots(sm_recorder *rec, const sm_change *c);
/* fn(baton, site, body, len) runs in the writer's thread when the stored
 * rules of a site of rec are first read or change (body NULL: none
 * stored), seen before a batch that adds URLs or within 5 seconds: the
 * process follows them.  Before the writer starts. */
typedef void sm_recorder_robots_fn(void *baton, const sm_site_conf *site,
                                   const char *body, apr_size_t len);
void sm_recorder_robots_watch(sm_recorder *rec, sm_recorder_robots_fn *fn,
                              void *baton);

/* 1 when a response with these raw facts was handed to sm_recorder_add
 * before and what it changed is still fresh in the memory: nothing to do.
 * 0 (the caller decides and adds) when unknown, when the URL has since
 * been written with other facts or removed from the store by any process
 * sharing rec's sm_recorder_shared, when its refresh is due, when raw is
 * 0, or when the memory changed while it looked.  Thread-safe and
 * lock-free (with GCC's atomic builtins) except once after other
 * processes removed URLs (it takes the lock to drop them); not counted in
 * the stats, which count what sm_recorder_add is given. */
int sm_recorder_repeat(sm_recorder *rec, apr_uint64_t raw, apr_time_t seen);

/* The raw facts' hash in two parts.  first, a hash of what is known when
 * the request arrives (site, method, target), picks the memory line that
 * sm_recorder_repeat will read: sm_recorder_prefetch starts loading it
 * then, so that it is in the cache when the response is logged, tens of
 * microseconds later.  sm_recorder_raw joins first with rest (a hash of
 * everything, first included) into the raw that sm_recorder_repeat and
 * sm_recorder_add take.  So all the answers of one URL share one line of
 * three aliases: a URL with more than three answers in turn (say, a
 * Cache-Control that varies) pushes its own out, which costs a decision,
 * never a wrong answer. */
void sm_recorder_prefetch(const sm_recorder *rec, apr_uint64_t first);
apr_uint64_t sm_recorder_raw(apr_uint64_t first, apr_uint64_t rest);

/* Write everything pending now (for every store of the writer), in the
 * calling thread; fails when a store did not take its part. */
apr_status_t sm_recorder_flush(sm_recorder *rec);

/* Stop the writer thread and write what is pending, for every store of
 * the writer.  Idempotent; also run by the writer's pool cleanup. */
void sm_recorder_stop(sm_recorder *rec);

void sm_recorder_get_stats(sm_recorder *rec, sm_recorder_stats *out);

#endif
