/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the renditions' core: the gzip compressor as a sink, the
 * Accept-Encoding test, rendition files (hit, miss for another key,
 * damaged, symlinked) and eviction. */
#include "unit.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "util/sm_gzip.h"
#include "serve/sm_rend_index.h"
#include "serve/sm_rendition.h"

typedef struct {
    char *data;
    apr_size_t len, cap;
} membuf;

static apr_status_t to_mem(void *baton, const char *data, apr_size_t len)
{
    membuf *m = baton;
    if (m->len + len > m->cap) {
        m->cap = (m->len + len) * 2;
        m->data = realloc(m->data, m->cap);
    }
    memcpy(m->data + m->len, data, len);
    m->len += len;
    return APR_SUCCESS;
}

static char *inflate_all(const char *in, apr_size_t len, apr_size_t *out_len)
{
    z_stream z;
    apr_size_t cap = 1 << 20;
    char *out = malloc(cap);

    memset(&z, 0, sizeof(z));
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)len;
    z.next_out = (unsigned char *)out;
    z.avail_out = (uInt)cap;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = z.total_out;
    inflateEnd(&z);
    return out;
}

/* Some XML-like text, n lines. */
static const char *text(apr_pool_t *p, int n)
{
    char *s = apr_pcalloc(p, (apr_size_t)n * 64 + 1), *q = s;
    int i;
    for (i = 0; i < n; i++)
        q += sprintf(q, "<url><loc>https://e.example/%07d</loc></url>\n", i);
    return s;
}

static void test_gzip_round_trip(void **state)
{
    apr_pool_t *p = ((unit_ctx *)*state)->pool;
    const char *t = text(p, 20000);
    membuf m = { NULL, 0, 0 }, m2 = { NULL, 0, 0 };
    sm_gzip *gz;
    apr_size_t n, i;
    char *back;

    assert_int_equal(sm_gzip_create(&gz, p, SM_GZIP_LEVEL, to_mem, &m),
                     APR_SUCCESS);
    /* in uneven pieces */
    for (i = 0; i < strlen(t); i += 777)
        assert_int_equal(sm_gzip_write(gz, t + i, strlen(t) - i < 777
                                                  ? strlen(t) - i : 777),
                         APR_SUCCESS);
    assert_int_equal(sm_gzip_finish(gz), APR_SUCCESS);
    assert_int_equal(sm_gzip_out_bytes(gz), (apr_off_t)m.len);
    assert_true(m.len < strlen(t) / 4);
    back = inflate_all(m.data, m.len, &n);
    assert_int_equal(n, strlen(t));
    assert_memory_equal(back, t, n);
    /* deterministic: the same bytes again (one write this time) */
    assert_int_equal(sm_gzip_create(&gz, p, SM_GZIP_LEVEL, to_mem, &m2),
                     APR_SUCCESS);
    assert_int_equal(sm_gzip_write(gz, t, strlen(t)), APR_SUCCESS);
    assert_int_equal(sm_gzip_finish(gz), APR_SUCCESS);
    assert_int_equal(m2.len, m.len);
    assert_memory_equal(m2.data, m.data, m.len);
    free(back);
    free(m.data);
    free(m2.data);
}

static void test_accepts_gzip(void **state)
{
    (void)state;
    assert_true(sm_accepts_gzip("gzip"));
    assert_true(sm_accepts_gzip("deflate, gzip"));
    assert_true(sm_accepts_gzip("br;q=1.0, GZIP;q=0.5"));
    assert_true(sm_accepts_gzip("x-gzip"));
    assert_true(sm_accepts_gzip("gzip ; q=0.001"));
    assert_false(sm_accepts_gzip(NULL));
    assert_false(sm_accepts_gzip(""));
    assert_false(sm_accepts_gzip("identity"));
    assert_false(sm_accepts_gzip("gzip;q=0"));
    assert_false(sm_accepts_gzip("gzip; q=0.000"));
    assert_false(sm_accepts_gzip("br, gzip;q=0.0"));
    assert_false(sm_accepts_gzip("gzipx, xgzip"));
    assert_false(sm_accepts_gzip("*"));
}

static sm_rend_dir *open_dir(unit_ctx *u, apr_off_t max)
{
    sm_rend_dir *d;
    char err[256];
    assert_int_equal(sm_rend_dir_open(&d, u->pool,
                                      apr_pstrcat(u->pool, u->dir, "/r", NULL),
                                      max, err, sizeof(err)), APR_SUCCESS);
    return d;
}

static void render_kind(unit_ctx *u, sm_rend_dir *d, const char *stem,
                        const sm_rend_key *key, const char *body,
                        sm_rend_kind kind)
{
    apr_pool_t *p;
    sm_rend_writer *w;

    apr_pool_create(&p, u->pool);
    assert_int_equal(sm_rend_writer_create(&w, d, p, stem, key, kind),
                     APR_SUCCESS);
    assert_int_equal(sm_rend_write(w, body, strlen(body)), APR_SUCCESS);
    assert_int_equal(sm_rend_commit(w), APR_SUCCESS);
    apr_pool_destroy(p);
}

static void render(unit_ctx *u, sm_rend_dir *d, const char *stem,
                   const sm_rend_key *key, const char *body)
{
    render_kind(u, d, stem, key, body, SM_REND_SITE);
}

static char *read_body(apr_pool_t *p, apr_file_t *f, apr_off_t off,
                       apr_off_t len)
{
    char *buf = apr_palloc(p, (apr_size_t)len + 1);
    apr_size_t n = (apr_size_t)len;
    assert_int_equal(apr_file_seek(f, APR_SET, &off), APR_SUCCESS);
    assert_int_equal(apr_file_read_full(f, buf, n, &n), APR_SUCCESS);
    buf[n] = '\0';
    return buf;
}

static void test_files(void **state)
{
    unit_ctx *u = *state;
    sm_rend_dir *d = open_dir(u, 1 << 30);
    sm_rend_key k1 = { 1, 2 }, k2 = { 1, 3 };
    const char *body = text(u->pool, 300);
    apr_file_t *f;
    apr_off_t off, len;
    apr_size_t n;
    char *back, *path;

    assert_int_equal(sm_rend_open(d, u->pool, "s-p1", SM_REND_PLAIN, &k1, &f,
                                  &off, &len), APR_ENOENT);
    render(u, d, "s-p1", &k1, body);
    assert_int_equal(sm_rend_open(d, u->pool, "s-p1", SM_REND_PLAIN, &k1, &f,
                                  &off, &len), APR_SUCCESS);
    assert_int_equal(off, SM_REND_HEADER);
    assert_int_equal(len, (apr_off_t)strlen(body));
    assert_string_equal(read_body(u->pool, f, off, len), body);
    assert_int_equal(sm_rend_open(d, u->pool, "s-p1", SM_REND_GZIP, &k1, &f,
                                  &off, &len), APR_SUCCESS);
    back = inflate_all(read_body(u->pool, f, off, len), (apr_size_t)len, &n);
    assert_int_equal(n, strlen(body));
    assert_memory_equal(back, body, n);
    free(back);
    /* another key is a miss; a new render replaces the files */
    assert_int_equal(sm_rend_open(d, u->pool, "s-p1", SM_REND_PLAIN, &k2, &f,
                                  &off, &len), APR_ENOENT);
    render(u, d, "s-p1", &k2, "<new/>");
    assert_int_equal(sm_rend_open(d, u->pool, "s-p1", SM_REND_PLAIN, &k1, &f,
                                  &off, &len), APR_ENOENT);
    assert_int_equal(sm_rend_open(d, u->pool, "s-p1", SM_REND_PLAIN, &k2, &f,
                                  &off, &len), APR_SUCCESS);
    assert_string_equal(read_body(u->pool, f, off, len), "<new/>");
    /* a truncated file is a miss */
    path = apr_pstrcat(u->pool, u->dir, "/r/s-p1.xml", NULL);
    assert_int_equal(truncate(path, SM_REND_HEADER + 2), 0);
    assert_int_equal(sm_rend_open(d, u->pool, "s-p1", SM_REND_PLAIN, &k2, &f,
                                  &off, &len), APR_ENOENT);
    /* a symlink to a valid rendition is not followed */
    render(u, d, "s-p2", &k1, body);
    assert_int_equal(rename(apr_pstrcat(u->pool, u->dir, "/r/s-p2.xml", NULL),
                            apr_pstrcat(u->pool, u->dir, "/elsewhere", NULL)),
                     0);
    assert_int_equal(symlink(apr_pstrcat(u->pool, u->dir, "/elsewhere", NULL),
                             apr_pstrcat(u->pool, u->dir, "/r/s-p2.xml",
                                         NULL)), 0);
    assert_int_equal(sm_rend_open(d, u->pool, "s-p2", SM_REND_PLAIN, &k1, &f,
                                  &off, &len), APR_ENOENT);
}

/* A writer let go without commit (a store or disk failure mid-render)
 * leaves nothing behind, and the previous rendition stays served. */
static void test_abort(void **state)
{
    unit_ctx *u = *state;
    sm_rend_dir *d = open_dir(u, 1 << 30);
    sm_rend_key k1 = { 1, 1 }, k2 = { 2, 2 };
    apr_pool_t *p;
    sm_rend_writer *w;
    apr_file_t *f;
    apr_off_t off, len;
    apr_dir_t *dir;
    apr_finfo_t fi;
    int files = 0;

    render(u, d, "s-p1", &k1, "<old/>");
    apr_pool_create(&p, u->pool);
    assert_int_equal(sm_rend_writer_create(&w, d, p, "s-p1", &k2,
                                           SM_REND_SITE), APR_SUCCESS);
    assert_int_equal(sm_rend_write(w, "<new", 4), APR_SUCCESS);
    apr_pool_destroy(p);
    assert_int_equal(sm_rend_open(d, u->pool, "s-p1", SM_REND_PLAIN, &k1, &f,
                                  &off, &len), APR_SUCCESS);
    assert_string_equal(read_body(u->pool, f, off, len), "<old/>");
    assert_int_equal(apr_dir_open(&dir, apr_pstrcat(u->pool, u->dir, "/r",
                                                    NULL), u->pool),
                     APR_SUCCESS);
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, dir)
           == APR_SUCCESS)
        if (fi.filetype == APR_REG && strncmp(fi.name, ".index", 6) != 0)
            files++;
    apr_dir_close(dir);
    assert_int_equal(files, 2);     /* s-p1.xml and s-p1.xml.gz only */
}

static void test_evict(void **state)
{
    unit_ctx *u = *state;
    sm_rend_dir *d = open_dir(u, 1 << 20);
    const char *body = text(u->pool, 4000);     /* ~180 KB plain */
    sm_rend_key k = { 7, 7 };
    apr_file_t *f;
    apr_off_t off, len;
    int i, removed;

    for (i = 0; i < 8; i++) {
        struct timespec ts[2] = { { 1000 + i, 0 }, { 1000 + i, 0 } };
        const char *stem = apr_psprintf(u->pool, "s-p%d", i);
        render(u, d, stem, &k, body);
        /* older files were used less recently */
        utimensat(AT_FDCWD, apr_pstrcat(u->pool, u->dir, "/r/", stem, ".xml",
                                        NULL), ts, 0);
    }
    assert_int_equal(sm_rend_evict(d, u->pool, &removed, NULL), APR_SUCCESS);
    assert_true(removed > 0);
    /* the least recently used went first, the newest stayed */
    assert_int_equal(sm_rend_open(d, u->pool, "s-p0", SM_REND_PLAIN, &k, &f,
                                  &off, &len), APR_ENOENT);
    assert_int_equal(sm_rend_open(d, u->pool, "s-p7", SM_REND_PLAIN, &k, &f,
                                  &off, &len), APR_SUCCESS);
    {
        apr_dir_t *dir;
        apr_finfo_t fi;
        apr_off_t total = 0;
        assert_int_equal(apr_dir_open(&dir, apr_pstrcat(u->pool, u->dir, "/r",
                                                        NULL), u->pool),
                         APR_SUCCESS);
        while (apr_dir_read(&fi, APR_FINFO_SIZE | APR_FINFO_NAME, dir)
               == APR_SUCCESS)
            if (fi.filetype == APR_REG)
                total += fi.size;
        apr_dir_close(dir);
        assert_true(total <= 1 << 20);
    }
}

/* The renditions in the directory (not the index): their count and
 * total size. */
static apr_off_t dir_total(unit_ctx *u, int *count)
{
    apr_dir_t *dir;
    apr_finfo_t fi;
    apr_off_t total = 0;

    *count = 0;
    assert_int_equal(apr_dir_open(&dir, apr_pstrcat(u->pool, u->dir, "/r",
                                                    NULL), u->pool),
                     APR_SUCCESS);
    while (apr_dir_read(&fi, APR_FINFO_SIZE | APR_FINFO_NAME
                             | APR_FINFO_TYPE, dir) == APR_SUCCESS)
        if (fi.filetype == APR_REG && fi.name[0] != '.') {
            total += fi.size;
            (*count)++;
        }
    apr_dir_close(dir);
    return total;
}

static int has(unit_ctx *u, sm_rend_dir *d, const char *stem,
               const sm_rend_key *k, sm_rend_enc enc)
{
    apr_file_t *f;
    apr_off_t off, len;
    return sm_rend_open(d, u->pool, stem, enc, k, &f, &off, &len)
           == APR_SUCCESS;
}

/* Host-made sites' files go first: a configured site's rendition, the
 * least recently used of all, outlives a flood of newer ones. */
static void test_evict_host_sites_first(void **state)
{
    unit_ctx *u = *state;
    sm_rend_dir *d = open_dir(u, 1 << 20);
    const char *body = text(u->pool, 4000);     /* ~180 KB plain */
    sm_rend_key k = { 5, 5 };
    int i, removed, n;

    render(u, d, "site-p1", &k, body);
    for (i = 0; i < 12; i++) {
        render_kind(u, d, apr_psprintf(u->pool, "h%d-p1", i), &k, body,
                    SM_REND_HOST_SITE);
        assert_int_equal(sm_rend_evict(d, u->pool, &removed, NULL),
                         APR_SUCCESS);
        assert_true(dir_total(u, &n) <= 1 << 20);
    }
    assert_true(has(u, d, "site-p1", &k, SM_REND_PLAIN));
    assert_true(has(u, d, "site-p1", &k, SM_REND_GZIP));
    assert_false(has(u, d, "h0-p1", &k, SM_REND_PLAIN));
    assert_true(has(u, d, "h11-p1", &k, SM_REND_PLAIN));
    /* among configured sites: the least recently used */
    for (i = 0; i < 6; i++) {
        render(u, d, apr_psprintf(u->pool, "site-p%d", i + 2), &k, body);
        assert_int_equal(sm_rend_evict(d, u->pool, &removed, NULL),
                         APR_SUCCESS);
    }
    assert_false(has(u, d, "h11-p1", &k, SM_REND_PLAIN));
    assert_false(has(u, d, "site-p1", &k, SM_REND_PLAIN));
    assert_true(has(u, d, "site-p7", &k, SM_REND_PLAIN));
    assert_true(dir_total(u, &n) <= 1 << 20);
}

/* n files at rendition names, size bytes each (sparse: no disk). */
static void prefill(unit_ctx *u, int n, off_t size)
{
    int i;
    for (i = 0; i < n; i++) {
        char *path = apr_psprintf(u->pool, "%s/r/%016x-p%d.xml%s", u->dir,
                                  (unsigned)i, i, i % 2 ? ".gz" : "");
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0640);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, size), 0);
        close(fd);
    }
}

/* The directory is read once, to build the index; then a render reads
 * none of it, and another process (another handle, its own connection)
 * sees the same total. */
static void test_index_reads_directory_once(void **state)
{
    unit_ctx *u = *state;
    sm_rend_dir *d = open_dir(u, (apr_off_t)1 << 40), *other;
    sm_rend_key k = { 9, 9 };
    int removed = -1, scanned = -1, n;
    char err[256];

    prefill(u, 20000, 8192);
    assert_int_equal(sm_rend_evict(d, u->pool, &removed, &scanned),
                     APR_SUCCESS);
    assert_true(scanned >= 20000);
    assert_int_equal(removed, 0);
    render(u, d, "s-p1", &k, "<x/>");
    assert_int_equal(sm_rend_evict(d, u->pool, &removed, &scanned),
                     APR_SUCCESS);
    assert_int_equal(scanned, 0);
    assert_int_equal(removed, 0);
    /* half the bound: half the files go, the newest (s-p1) stays */
    assert_int_equal(sm_rend_dir_open(&other, u->pool,
                                      apr_pstrcat(u->pool, u->dir, "/r",
                                                  NULL),
                                      10000 * 8192, err, sizeof(err)),
                     APR_SUCCESS);
    assert_int_equal(sm_rend_evict(other, u->pool, &removed, &scanned),
                     APR_SUCCESS);
    assert_int_equal(scanned, 0);
    assert_true(removed >= 10000 && removed <= 10003);
    assert_true(dir_total(u, &n) <= 10000 * 8192);
    assert_true(has(u, d, "s-p1", &k, SM_REND_PLAIN));
    assert_int_equal(sql_int(apr_pstrcat(u->pool, u->dir, "/r/.index", NULL),
                             "SELECT files FROM meta"), n);
}

/* The index removed (as removing the directory's contents may): the next
 * use builds it again from the files, and the bound holds for them. */
static void test_index_rebuilt(void **state)
{
    unit_ctx *u = *state;
    sm_rend_dir *d = open_dir(u, 100 * 8192);
    const char *ix = apr_pstrcat(u->pool, u->dir, "/r/.index", NULL);
    int removed, scanned, n;

    assert_int_equal(sm_rend_evict(d, u->pool, &removed, &scanned),
                     APR_SUCCESS);
    prefill(u, 300, 8192);
    /* files the index has not seen are not counted yet */
    assert_int_equal(sm_rend_evict(d, u->pool, &removed, &scanned),
                     APR_SUCCESS);
    assert_int_equal(removed, 0);
    assert_int_equal(unlink(ix), 0);
    (void)unlink(apr_pstrcat(u->pool, ix, "-wal", NULL));
    (void)unlink(apr_pstrcat(u->pool, ix, "-shm", NULL));
    assert_int_equal(sm_rend_evict(d, u->pool, &removed, &scanned),
                     APR_SUCCESS);
    assert_true(scanned >= 300);
    assert_int_equal(removed, 200);
    assert_true(dir_total(u, &n) <= 100 * 8192);
    assert_int_equal(n, 100);
}

/* A damaged index (garbage where .index was) is removed: that eviction
 * reads the directory, the next builds a new index. */
static void test_index_damaged(void **state)
{
    unit_ctx *u = *state;
    const char *ix = apr_pstrcat(u->pool, u->dir, "/r/.index", NULL);
    sm_rend_dir *d = open_dir(u, 100 * 8192), *other;
    char junk[8192], err[256];
    int fd, removed, scanned, n;

    assert_int_equal(sm_rend_evict(d, u->pool, &removed, &scanned),
                     APR_SUCCESS);
    (void)unlink(apr_pstrcat(u->pool, ix, "-wal", NULL));
    (void)unlink(apr_pstrcat(u->pool, ix, "-shm", NULL));
    memset(junk, 'x', sizeof(junk));
    fd = open(ix, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
    close(fd);
    prefill(u, 300, 8192);
    assert_int_equal(sm_rend_dir_open(&other, u->pool,
                                      apr_pstrcat(u->pool, u->dir, "/r",
                                                  NULL),
                                      100 * 8192, err, sizeof(err)),
                     APR_SUCCESS);
    assert_int_equal(sm_rend_evict(other, u->pool, &removed, &scanned),
                     APR_SUCCESS);
    assert_int_equal(removed, 200);
    assert_true(scanned >= 300);
    assert_int_equal(access(ix, F_OK), -1);
    assert_int_equal(sm_rend_evict(other, u->pool, &removed, &scanned),
                     APR_SUCCESS);
    assert_int_equal(removed, 0);
    assert_true(scanned >= 100);
    assert_int_equal(sql_int(ix, "SELECT files FROM meta"), 100);
    /* the first handle notices the new file and uses it */
    assert_int_equal(sm_rend_evict(d, u->pool, &removed, &scanned),
                     APR_SUCCESS);
    assert_int_equal(scanned, 0);
    assert_true(dir_total(u, &n) <= 100 * 8192);
}

/* Once every (files + SM_REND_SWEEP) renders the directory is read: a
 * crashed writer's temporary file goes. */
static void test_index_sweep(void **state)
{
    unit_ctx *u = *state;
    sm_rend_dir *d = open_dir(u, 1 << 30);
    const char *ix = apr_pstrcat(u->pool, u->dir, "/r/.index", NULL);
    const char *tmp = apr_pstrcat(u->pool, u->dir, "/r/.tmp-1-1-x.xml",
                                  NULL);
    struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };
    sm_rend_key k = { 3, 3 };
    int fd, removed, scanned;

    render(u, d, "s-p1", &k, "<x/>");       /* builds the index */
    assert_int_equal(sm_rend_evict(d, u->pool, &removed, &scanned),
                     APR_SUCCESS);
    assert_true(scanned > 0);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0640);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(utimensat(AT_FDCWD, tmp, old, 0), 0);
    assert_int_equal(sm_rend_evict(d, u->pool, &removed, &scanned),
                     APR_SUCCESS);
    assert_int_equal(scanned, 0);
    assert_int_equal(access(tmp, F_OK), 0);
    sql_exec(ix, apr_psprintf(u->pool, "UPDATE meta SET renders = %d",
                              SM_REND_SWEEP + 2));
    assert_int_equal(sm_rend_evict(d, u->pool, &removed, &scanned),
                     APR_SUCCESS);
    assert_true(scanned > 0);
    assert_int_equal(removed, 1);
    assert_int_equal(access(tmp, F_OK), -1);
    assert_int_equal(sql_int(ix, "SELECT renders FROM meta"), 0);
    assert_int_equal(sql_int(ix, "SELECT files FROM meta"), 2);
    assert_true(has(u, d, "s-p1", &k, SM_REND_GZIP));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_gzip_round_trip, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_accepts_gzip, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_files, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_abort, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_evict, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_evict_host_sites_first, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_index_reads_directory_once, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_index_rebuilt, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_index_sweep, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_index_damaged, unit_setup, unit_teardown),
    };
    int rc;

    apr_initialize();
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    apr_terminate();
    return rc;
}
