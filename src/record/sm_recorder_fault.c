/* SPDX-License-Identifier: Apache-2.0 */
/* sm_recorder_fault.c: what a failing store costs (issue 33).
 *
 * Retries back off: a store that failed is not tried again (neither by a
 * batch nor by the writer's upkeep) before its retry time, which doubles
 * from SM_REC_RETRY_MIN to SM_REC_RETRY_MAX with every failure in a row,
 * each wait drawn at random between half of it and all of it, so that the
 * processes of a farm that lost their database together do not retry in
 * step.  Meanwhile the writer sleeps (a stop wakes it at once), and the
 * store's changes wait in the queue.
 *
 * Losses are logged within a minute: the first at once, the next ones at
 * most once a minute per store, by the writer thread even when nothing
 * else happens (sm_rec_report_losses).  All callers hold the writer's
 * lock. */
#include "record/sm_recorder_int.h"

#include <unistd.h>

static apr_uint64_t next_random(sm_writer *w)
{
    apr_uint64_t x = w->rand_state;

    if (!x)
        x = (apr_uint64_t)apr_time_now() ^ ((apr_uint64_t)getpid() << 32)
            ^ (apr_uint64_t)(apr_uintptr_t)w;
    /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    w->rand_state = x ? x : 1;
    return x * 2685821657736338717ULL;
}

static apr_interval_time_t retry_min(const sm_recorder *rec)
{
    return rec->conf.retry_min > 0 ? rec->conf.retry_min : SM_REC_RETRY_MIN;
}

static apr_interval_time_t retry_max(const sm_recorder *rec)
{
    apr_interval_time_t max = rec->conf.retry_max > 0 ? rec->conf.retry_max
                                                      : SM_REC_RETRY_MAX;

    return max < retry_min(rec) ? retry_min(rec) : max;
}

void sm_rec_failed(sm_recorder *rec, apr_time_t now)
{
    apr_interval_time_t d, half;

    rec->faulted = 1;
    rec->stats.faults++;
    if (!rec->retry_delay)
        rec->retry_delay = retry_min(rec);
    else if (rec->retry_delay < retry_max(rec) / 2)
        rec->retry_delay *= 2;
    else
        rec->retry_delay = retry_max(rec);
    d = rec->retry_delay;
    half = d / 2;
    rec->retry_at = now + half + (apr_interval_time_t)
                    (next_random(rec->w) % (apr_uint64_t)(d - half + 1));
}

int sm_rec_may_try(const sm_recorder *rec, apr_time_t now)
{
    return !rec->faulted || now >= rec->retry_at;
}

static apr_interval_time_t loss_every(const sm_recorder *rec)
{
    return rec->conf.loss_log_every > 0 ? rec->conf.loss_log_every
                                        : SM_REC_LOG_EVERY;
}

static void log_losses(sm_recorder *rec, apr_time_t now)
{
    rec->last_drop_log = now;
    if (!rec->dropped_unlogged)
        return;
    sm_log(rec->conf.log, SM_LOG_ERR, 0,
           "store %s: %" APR_UINT64_T_FMT " changes lost (not recorded: "
           "the store %s and the queue of %d changes was full) since the "
           "last report; they are recorded again when next served",
           rec->conf.db_path, rec->dropped_unlogged,
           rec->faulted ? "is failing" : "was failing", rec->w->queue_max);
    rec->dropped_unlogged = 0;
}

void sm_rec_count_lost(sm_recorder *rec, apr_uint64_t n, apr_time_t now)
{
    sm_writer *w = rec->w;
    apr_time_t due;

    if (!n)
        return;
    rec->stats.dropped += n;
    SM_REC_SHARE(rec, dropped, n);
    rec->dropped_unlogged += n;
    rec->outage_dropped += n;
    if (!rec->last_drop_log || now - rec->last_drop_log >= loss_every(rec)) {
        log_losses(rec, now);
        return;
    }
    /* Rate-limited: the writer logs the count when the minute is up. */
    due = rec->last_drop_log + loss_every(rec);
    if (!w->loss_due || due < w->loss_due) {
        w->loss_due = due;
        if (w->running)
            apr_thread_cond_signal(w->wake);
    }
}

apr_time_t sm_rec_report_losses(sm_writer *w, apr_time_t now)
{
    apr_time_t next = 0;
    int i;

    for (i = 0; i < w->rec_n; i++) {
        sm_recorder *rec = w->rec_v[i];
        apr_time_t due;
        if (!rec->dropped_unlogged)
            continue;
        due = rec->last_drop_log + loss_every(rec);
        if (now >= due)
            log_losses(rec, now);
        else if (!next || due < next)
            next = due;
    }
    w->loss_due = next;
    return next;
}

void sm_rec_works(sm_recorder *rec, int written)
{
    rec->retry_delay = 0;
    rec->retry_at = 0;
    if (!rec->faulted)
        return;
    rec->faulted = 0;
    sm_log(rec->conf.log, SM_LOG_WARN, 0,
           "store %s works again; recording resumed: %d changes kept while "
           "it failed were written, %" APR_UINT64_T_FMT " lost while it "
           "failed (recorded again when next served)", rec->conf.db_path,
           written, rec->outage_dropped);
    rec->outage_dropped = 0;
    rec->dropped_unlogged = 0;
}
