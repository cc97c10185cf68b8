/* SPDX-License-Identifier: Apache-2.0 */
/* sm_recorder_int.h: what sm_recorder.c (the request side: queue, memory,
 * sites) and sm_recorder_write.c (the writer thread and the stores) share.
 * Nothing else includes it.
 *
 * A writer (sm_writer) owns one lock, one queue, one memory of written
 * URLs and one thread, for any number of stores; a recorder (sm_recorder)
 * is one store of it, with its sites, its connection and its faults.  So a
 * server with a thousand store files has one thread and one memory per
 * process, as a server with one. */
#ifndef SM_RECORDER_INT_H
#define SM_RECORDER_INT_H

#include "record/sm_recorder.h"
#include "record/sm_memory.h"

#include <apr_file_info.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>

/* A URL is written again after this long even when nothing changed, so its
 * last_seen stays fresh for SitemapExpire (at most once an hour per process). */
#define SM_REC_REFRESH_SEC 3600

/* A writer thread that committed within this long is making progress:
 * requests past its catch_up wait for it (sm_recorder_add). */
#define SM_REC_PROGRESS_RECENT apr_time_from_sec(1)
/* How often problems are logged, spills looked for, and expiry runs. */
#define SM_REC_LOG_EVERY apr_time_from_sec(60)
#define SM_REC_EXPIRE_EVERY apr_time_from_sec(3600)
/* A store file not written for this long is closed (its descriptors and
 * cache go) until its next batch; SM_REC_CLOSED_CHECK is how often its path
 * is looked at meanwhile (deleted: created again; replaced: forgotten),
 * or half the idle time when that is shorter (tests). */
#define SM_REC_IDLE_CLOSE apr_time_from_sec(60)
/* Store files a writer keeps open at once (a SQLite file in WAL mode is
 * three descriptors): opening one more closes the one written least
 * recently first, so a thousand stores starting at once, or written in
 * turn, never run the process out of descriptors. */
#define SM_REC_MAX_OPEN_FILES 32
#define SM_REC_CLOSED_CHECK apr_time_from_sec(30)
/* A failing store is tried again after 1 s, then 2, 4 ... at most 60 s
 * (sm_recorder_fault.c): a few attempts a minute, not thousands. */
#define SM_REC_RETRY_MIN apr_time_from_sec(1)
#define SM_REC_RETRY_MAX apr_time_from_sec(60)

/* Verdict notes (sm_recorder_note): slots of the per-process memory of
 * notes handed over, and the most taken a second. */
#define SM_REC_NOTE_SLOTS 4096
/* The stored robots.txt rules are read back this often; a sweep takes
 * this many URLs a chunk, with this pause between chunks. */
#define SM_REC_ROBOTS_CHECK apr_time_from_sec(5)
#define SM_REC_ROBOTS_CHUNK 1000
#define SM_REC_ROBOTS_PAUSE apr_time_from_msec(10)
#define SM_REC_NOTES_PER_SEC 100

typedef struct {
    sm_change change;
    apr_uint64_t key;           /* the URL's identity in its store */
    sm_recorder *rec;           /* its store */
} sm_rec_item;

typedef struct {
    apr_uint64_t key;
    apr_size_t pos;             /* 1 + position in items; 0: empty */
} sm_rec_slot;

/* A batch owns a pool with its own allocator: filled by request threads
 * under the lock, written by the writer thread after the swap. */
typedef struct {
    apr_pool_t *pool;
    /* (recorder, key) -> 1 + position in items: open addressing, kept at
     * most half full (apr_hash costs twice as much and allocates per
     * entry). */
    sm_rec_slot *slots;
    apr_size_t mask;
    apr_array_header_t *items;  /* sm_rec_item */
    apr_time_t first;           /* when the oldest item arrived */
    int kept;                   /* of the items, put back for a failing
                                   store's retry (not new work) */
} sm_rec_batch;

struct sm_writer {
    /* What every request reads (sm_recorder_repeat, and the lock of its
     * rarer paths), in one cache line: the writer is allocated on a line
     * of its own (sm_cache_lines). */
    sm_memory memory;
    apr_thread_mutex_t *lock;   /* the queue's and every recorder's state;
                                   also memory.lock */
    apr_pool_t *pool;
    apr_pool_t *thread_pool;    /* the stores' pools and the writer's
                                   scratch (sm_private_pool: the writer's
                                   own allocator), write_lock held */
    apr_thread_cond_t *wake;    /* the thread: work to do, or stop */
    apr_thread_cond_t *room;    /* requests: the queue has room again */
    apr_thread_t *thread;
    int running, stopping;
    int batch_size, queue_max;
    /* Past this many changes queued, requests wait for the thread to
     * take them while it makes progress (sm_recorder_add): 2 x
     * batch_size, at most queue_max. */
    int catch_up;
    apr_time_t progress;        /* when a write last committed (lock) */
    int in_upkeep;              /* the thread walks its stores (expiry,
                                   idle closes): not waited for (lock) */
    apr_interval_time_t flush_interval;     /* the shortest of its stores' */
    apr_interval_time_t idle_close;
    apr_interval_time_t closed_check;   /* of a store closed while idle */
    sm_rec_batch *pending, *spare;
    /* The stores: fixed once the thread runs. */
    sm_recorder **rec_v;
    int rec_n, rec_cap;
    /* Held by whoever writes (the thread, or a caller of flush). */
    apr_thread_mutex_t *write_lock;
    apr_time_t next_upkeep;     /* the earliest store upkeep due */
    int open_files;             /* store files open now */
    sm_writer_upkeep_fn *upkeep_fn;
    void *upkeep_baton;
    apr_time_t next_upkeep_fn;
    /* (lock) The earliest retry of a store whose changes wait in the
     * queue for it (kept); when losses not yet logged are due; 0: none. */
    apr_time_t retry_at, loss_due;
    apr_uint64_t rand_state;    /* the retries' jitter */
    /* Notes handed over (sm_recorder_note), read and written without the
     * lock: the hash of the latest in each slot, and the count of the
     * current second. */
    apr_uint64_t note_seen[SM_REC_NOTE_SLOTS];
    apr_uint64_t note_second;
    apr_uint32_t note_count;
};

struct sm_recorder {
    /* Read by every request, without the lock. */
    sm_writer *w;
    /* Seeds the memory's keys and the raw facts' hashes: the store's
     * identity and the generation of its memory.  Forgetting what was
     * written to this store (it failed, was replaced or deleted) moves the
     * generation: its entries in the shared memory are never found again
     * and age out, the other stores' stay. */
    apr_uint64_t mix;
    apr_uint64_t id_seed;       /* the store's identity alone */
    apr_uint64_t generation;
    /* The forgotten URLs of other processes (sm_recorder_forget.c): the
     * shared ring followed (NULL: none) and the count of its entries this
     * process took (lock; read without it by sm_recorder_repeat). */
    sm_rec_forget_ring *forget_from;
    apr_uint64_t forget_seen;

    sm_recorder_conf conf;
    apr_pool_t *pool;
    int is_file;                /* SQLite: closed when idle */
    int faulted;                /* the last write or open failed (lock) */
    /* (lock) Its retries back off (sm_recorder_fault.c): not tried
     * before retry_at; retry_delay doubles with each failure in a row. */
    apr_interval_time_t retry_delay;
    apr_time_t retry_at;
    int held;                   /* its changes kept in the queue for retry */
    apr_uint64_t outage_dropped;    /* lost since it failed */
    /* The sites written through this recorder (expiry, settings, spills):
     * site_v never moves once the writer runs (its room is reserved
     * before, sm_recorder_reserve_sites), so that sites added later, from
     * request threads (under lock), are read by the writer without it:
     * site_n is published last (release) and read with acquire. */
    const sm_site_conf **site_v;
    int site_n, site_cap;
    struct {
        sm_site_maker_fn *fn;
        sm_base_test_fn *owns;
        void *baton;
    } maker_v[8];
    int maker_n;
    sm_recorder_stats stats;
    sm_recorder_shared *shared; /* NULL: not shared */
    apr_uint64_t dropped_unlogged;
    apr_time_t last_drop_log;

    /* Owned by whoever holds the writer's write_lock. */
    apr_pool_t *store_pool;     /* NULL while no store is open */
    sm_store *store;
    apr_time_t last_used;       /* opened or written */
    int closed_idle;            /* closed when idle, identity below */
    int synced;                 /* sites whose rows the file is known to
                                   have (forget_written: 0, so the next
                                   open writes them again) */
    apr_ino_t ino;
    apr_dev_t dev;
    apr_time_t last_expire;
    apr_time_t last_prune;      /* of the makers' sites (0: not yet) */
    apr_time_t next_check;      /* of the store while idle */
    apr_time_t next_spill_scan; /* for other processes' spills */
    apr_time_t next_due;        /* of any of these */
    apr_interval_time_t expire_every;   /* hourly, sooner for short expiry */
    apr_time_t last_fault_log, last_full_log;
    apr_uint64_t faults_unlogged, refused_unlogged;
    sm_rec_item **out;          /* this store's part of the batch written */
    unsigned char *out_held;    /* of which held (sm_store_apply_held) */
    int out_n;
    int out_tx;                 /* transactions it took */
    char reason[600];           /* why the last write failed */
    apr_int64_t crawl_day;      /* UTC day whose crawl days were last
                                   looked at (sm_recorder_crawl_days.c) */
    apr_time_t stale_checked;   /* SitemapIndexNowStale's last look */
    int crawl_todo;             /* what sm_rec_crawl_days is to do */
    /* The site's robots.txt rules as stored (sm_recorder_robots.c);
     * NULL: not followed (no memory for them). */
    struct sm_rec_robots *robots;
    /* (lock) Since when an entry of the ring was counted but not written
     * (0: none); after SM_REC_FORGET_STUCK it is taken as lapped. */
    apr_time_t forget_stuck;
    /* (write_lock) Of rec->out: which removed a stored row. */
    unsigned char *out_removed;
};

/* ---- sm_recorder.c ---- */
int sm_rec_sites_now(const sm_recorder *rec);
apr_uint64_t sm_rec_memory_key(const sm_recorder *rec, apr_uint64_t key);
/* Put a copy of c into b (replacing an earlier change of the same URL of
 * the same store).  Holds the writer's lock.
 * A full queue makes a request wait for the next write, whichever store
 * it is for: the write swaps the queue out first, so a failing store's
 * retry never holds up the others' changes for longer than one attempt. */
void sm_rec_batch_put(sm_rec_batch *b, sm_recorder *rec, const sm_change *c,
                      apr_uint64_t key, apr_time_t now);
apr_size_t sm_rec_batch_find(const sm_rec_batch *b, apr_uint64_t key);
void sm_rec_batch_reset(sm_rec_batch *b);
apr_uint64_t sm_rec_change_key(const sm_recorder *rec, const sm_change *c);
/* Hand each store its items of b (rec->out, in order): the stores
 * touched (writer thread, without lock). */
sm_recorder **sm_rec_split_batch(sm_rec_batch *b, int *touched);
/* Changes of rec are forgotten (the generation moves).  Holds lock. */
void sm_rec_forget_locked(sm_recorder *rec);
int sm_rec_should_log(apr_time_t *last, apr_time_t now);

/* ---- sm_recorder_fault.c (lock held) ---- */
/* rec failed to open or write: faulted, its next retry set. */
void sm_rec_failed(sm_recorder *rec, apr_time_t now);
/* May rec be tried now (not failing, or its retry is due)? */
int sm_rec_may_try(const sm_recorder *rec, apr_time_t now);
/* n changes of rec are lost: counted, and logged at once or within a
 * minute (rate-limited). */
void sm_rec_count_lost(sm_recorder *rec, apr_uint64_t n, apr_time_t now);
/* Log the losses due; returns when the next are due (0: none). */
apr_time_t sm_rec_report_losses(sm_writer *w, apr_time_t now);
/* rec took a write (written of its kept changes) or opened again. */
void sm_rec_works(sm_recorder *rec, int written);

/* ---- sm_recorder_robots.c (write_lock held) ---- */
typedef struct sm_rec_robots sm_rec_robots;
sm_rec_robots *sm_rec_robots_make(apr_pool_t *p);
/* Before a write: the stored rules read when due; each RECORD or SEED of
 * a URL they disallow made a FORGET with the verdict; a ROBOTS change's
 * rules taken at once (the sweep due).  Fails (rec->reason set) when the
 * stored rules cannot be read: the write must fail too. */
apr_status_t sm_rec_robots_filter(sm_recorder *rec, apr_pool_t *p,
                                  sm_change *changes, int n, apr_time_t now);
/* Upkeep of an open store: the stored rules read when due, one chunk of a
 * sweep; returns when it is next due. */
apr_time_t sm_rec_robots_upkeep(sm_recorder *rec, apr_time_t now);

#define SM_REC_SHARE(rec, field, n) \
    do { if ((rec)->shared && (n)) \
             __atomic_fetch_add(&(rec)->shared->field, (apr_uint64_t)(n), \
                                __ATOMIC_RELAXED); } while (0)

/* ---- sm_recorder_forget.c ---- */
/* An entry counted but not written for this long is taken as lapped (its
 * writer died between the two): the store's memory is forgotten. */
#define SM_REC_FORGET_STUCK apr_time_from_sec(1)
/* Did other processes forget URLs this one has not dropped yet?  One
 * relaxed load each (the repeat path). */
static inline int sm_rec_forget_due(const sm_recorder *rec)
{
    const sm_rec_forget_ring *sh = __atomic_load_n(&rec->forget_from,
                                                   __ATOMIC_RELAXED);

    return sh && __atomic_load_n(&sh->seq, __ATOMIC_RELAXED)
                 != __atomic_load_n(&rec->forget_seen, __ATOMIC_RELAXED);
}
/* Drop them from the memory (lock held / not held). */
void sm_rec_forget_follow_locked(sm_recorder *rec, apr_time_t now);
void sm_rec_forget_follow(sm_recorder *rec);
/* After a commit (write_lock held): publish the keys of rec->out[from]
 * to rec->out[from + n - 1] whose out_removed is set. */
void sm_rec_forget_publish(sm_recorder *rec, int from, int n);

/* ---- sm_recorder_crawl_days.c (the writer's upkeep) ---- */
/* Is the day's crawl coverage to be taken (once a UTC day a store), or
 * SitemapIndexNowStale's look due (hourly, and at the writer's start)?
 * What is due is marked as done, whether or not the store opens. */
int sm_rec_crawl_days_due(sm_recorder *rec, apr_time_t now);
/* Do it for every site of rec (its store open): logged when it fails,
 * not tried again before it is due again. */
void sm_rec_crawl_days(sm_recorder *rec, apr_time_t now);

/* ---- sm_recorder_write.c ---- */
void *APR_THREAD_FUNC sm_rec_writer_main(apr_thread_t *thd, void *data);
/* Take the pending batch and write it.  Called with lock and write_lock
 * held; returns with them held.  Returns whether every store took its part. */
enum { SM_REC_FLUSH_THREAD, SM_REC_FLUSH_CALLER, SM_REC_FLUSH_FINAL };
/* how: THREAD (the writer thread) does not try a failing store before its
 * retry time; CALLER (sm_recorder_flush) tries every store; FINAL (at a
 * stop) does not try a failing store again. */
int sm_rec_flush_locked(sm_writer *w, int how);
/* At a stop, with write_lock and lock held and no thread: keep what is
 * left in spill files, close the stores. */
void sm_rec_spill_and_close(sm_writer *w);

#endif
