/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of export split in two processes (sm_ctl_export_remote.h):
 * the files a child makes and its parent writes are those a plain export
 * writes, stale pages go the same way, and the parent refuses requests
 * for names outside the directory it was given. */
#include "unit.h"

#include "ctl/sm_ctl.h"
#include "ctl/sm_ctl_export_remote.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BASE "http://h.example"

static sm_store *store_with(unit_ctx *u, int n)
{
    sm_site_conf site = { BASE, 2, 0, 0, NULL, 0 };
    sm_change *c = apr_pcalloc(u->pool, sizeof(*c) * (apr_size_t)n);
    sm_apply_stats stats;
    sm_store *st;
    char err[512];
    int i;

    if (sm_store_open(&st, u->pool,
                             apr_pstrcat(u->pool, u->dir, "/s.db", NULL),
                             SM_STORE_CREATE, 1000, NULL, err,
                             sizeof(err)) != APR_SUCCESS)
        fail_msg("open: %s", err);
    for (i = 0; i < n; i++) {
        c[i].op = SM_CHANGE_RECORD;
        c[i].site = &site;
        c[i].url = apr_psprintf(u->pool, "/p%d", i);
        c[i].last_modified = apr_time_from_sec(1795323556 + i);
        c[i].seen = apr_time_from_sec(1795400000);
    }
    assert_int_equal(sm_store_apply(st, c, n, &stats), APR_SUCCESS);
    return st;
}

static sm_settings *settings(unit_ctx *u)
{
    sm_settings *set = apr_pcalloc(u->pool, sizeof(*set));
    assert_null(sm_settings_parse(u->pool, sm_settings_format(
        u->pool, "/maps/site.xml", 2, NULL, NULL, NULL), set));
    return set;
}

static char *slurp(apr_pool_t *p, const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = apr_palloc(p, 1 << 16);
    size_t n;

    if (!f)
        fail_msg("cannot open %s", path);
    n = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Export st into dir as a child and its parent would: the status the
 * child's export returned (its exit status), the parent's in *served. */
static int split_export(unit_ctx *u, sm_store *st, const char *dir,
                        sm_export_status *served)
{
    char err[512];
    int sv[2], status;
    pid_t pid;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sm_export_result res;
        sm_export_status es;

        close(sv[0]);
        sm_ctl_export_remote(sv[1]);
        es = sm_ctl_export(u->pool, st, BASE, settings(u), "/nowhere", &res,
                           err, sizeof(err));
        sm_store_close(st);
        _exit(es);
    }
    close(sv[1]);
    *served = sm_ctl_export_serve(u->pool, sv[0], dir, err, sizeof(err));
    close(sv[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_split_writes_what_export_writes(void **state)
{
    unit_ctx *u = *state;
    sm_store *st = store_with(u, 5);
    const char *plain = apr_pstrcat(u->pool, u->dir, "/plain", NULL);
    const char *split = apr_pstrcat(u->pool, u->dir, "/split", NULL);
    static const char *const files[] = { "site.xml", "site-1.xml",
                                         "site-2.xml", "site-3.xml" };
    sm_export_result res;
    sm_export_status served;
    char err[512];
    apr_size_t i;

    assert_int_equal(sm_ctl_export(u->pool, st, BASE, settings(u), plain,
                                   &res, err, sizeof(err)), SM_EXPORT_OK);
    assert_int_equal(res.files, 4);
    /* a stale page of an earlier export, and a file that is no page */
    assert_int_equal(mkdir(split, 0755), 0);
    assert_int_equal(mkdir(apr_pstrcat(u->pool, split, "/maps", NULL),
                           0755), 0);
    fclose(fopen(apr_pstrcat(u->pool, split, "/maps/site-9.xml", NULL), "w"));
    fclose(fopen(apr_pstrcat(u->pool, split, "/maps/keep.txt", NULL), "w"));
    assert_int_equal(split_export(u, st, split, &served), SM_EXPORT_OK);
    assert_int_equal(served, SM_EXPORT_OK);
    for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        const char *a = apr_pstrcat(u->pool, plain, "/maps/", files[i], NULL);
        const char *b = apr_pstrcat(u->pool, split, "/maps/", files[i], NULL);
        assert_string_equal(slurp(u->pool, a), slurp(u->pool, b));
    }
    assert_int_equal(access(apr_pstrcat(u->pool, split, "/maps/site-9.xml",
                                        NULL), F_OK), -1);
    assert_int_equal(access(apr_pstrcat(u->pool, split, "/maps/keep.txt",
                                        NULL), F_OK), 0);
    sm_store_close(st);
}

/* A request and its reply's status. */
static sm_export_status ask(unit_ctx *u, int fd, int type, const char *data,
                            apr_size_t len)
{
    char *reply;
    apr_size_t rlen;
    return sm_xr_call(u->pool, fd, type, data, len, &reply, &rlen);
}

/* The parent as a hostile child would drive it: nothing outside dir. */
static void test_parent_refuses_other_names(void **state)
{
    unit_ctx *u = *state;
    const char *dir = apr_pstrcat(u->pool, u->dir, "/target", NULL);
    const char *outside = apr_pstrcat(u->pool, u->dir, "/outside", NULL);
    char err[512];
    int sv[2], status;
    pid_t pid;

    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(sv[1]);
        _exit(sm_ctl_export_serve(u->pool, sv[0], dir, err, sizeof(err)));
    }
    close(sv[0]);
    /* no file before a directory; no . or .. segment */
    assert_int_equal(ask(u, sv[1], XR_FILE, "x", 1), SM_EXPORT_WRITE);
    assert_int_equal(ask(u, sv[1], XR_OPEN, "/../", 4), SM_EXPORT_WRITE);
    assert_int_equal(ask(u, sv[1], XR_OPEN, "/a/./", 5), SM_EXPORT_WRITE);
    assert_int_equal(ask(u, sv[1], XR_OPEN, "/", 1), SM_EXPORT_OK);
    assert_int_equal(ask(u, sv[1], XR_FILE, "../outside", 10),
                     SM_EXPORT_WRITE);
    assert_int_equal(ask(u, sv[1], XR_FILE, "a/b", 3), SM_EXPORT_WRITE);
    assert_int_equal(ask(u, sv[1], XR_FILE, "..", 2), SM_EXPORT_WRITE);
    assert_int_equal(ask(u, sv[1], XR_FILE, "a\0b", 3), SM_EXPORT_WRITE);
    assert_int_equal(ask(u, sv[1], XR_END, "", 0), SM_EXPORT_WRITE);
    /* a plain name is written, and an aborted one leaves nothing */
    assert_int_equal(ask(u, sv[1], XR_FILE, "ok.xml", 6), SM_EXPORT_OK);
    assert_int_equal(sm_xr_send(sv[1], XR_CHUNK, "hello", 5), 0);
    assert_int_equal(ask(u, sv[1], XR_END, "", 0), SM_EXPORT_OK);
    assert_int_equal(ask(u, sv[1], XR_FILE, "gone.xml", 8), SM_EXPORT_OK);
    assert_int_equal(sm_xr_send(sv[1], XR_CHUNK, "bye", 3), 0);
    assert_int_equal(sm_xr_send(sv[1], XR_ABORT, "", 0), 0);
    /* another directory (llms.txt's): not while a file is open */
    assert_int_equal(ask(u, sv[1], XR_FILE, "open.xml", 8), SM_EXPORT_OK);
    assert_int_equal(ask(u, sv[1], XR_OPEN, "/b/", 3), SM_EXPORT_WRITE);
    assert_int_equal(sm_xr_send(sv[1], XR_ABORT, "", 0), 0);
    assert_int_equal(ask(u, sv[1], XR_OPEN, "/b/../", 6), SM_EXPORT_WRITE);
    assert_int_equal(ask(u, sv[1], XR_OPEN, "/b/", 3), SM_EXPORT_OK);
    assert_int_equal(ask(u, sv[1], XR_FILE, "n.txt", 5), SM_EXPORT_OK);
    assert_int_equal(sm_xr_send(sv[1], XR_CHUNK, "news", 4), 0);
    assert_int_equal(ask(u, sv[1], XR_END, "", 0), SM_EXPORT_OK);
    close(sv[1]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), SM_EXPORT_OK);
    assert_string_equal(slurp(u->pool, apr_pstrcat(u->pool, dir, "/ok.xml",
                                                   NULL)), "hello");
    assert_int_equal(access(outside, F_OK), -1);
    assert_int_equal(access(apr_pstrcat(u->pool, dir, "/gone.xml", NULL),
                            F_OK), -1);
    assert_string_equal(slurp(u->pool, apr_pstrcat(u->pool, dir, "/b/n.txt",
                                                   NULL)), "news");
    {   /* only ok.xml and b/: no temporary file left behind */
        DIR *d = opendir(dir);
        struct dirent *de;
        int n = 0;
        while ((de = readdir(d)) != NULL)
            if (de->d_name[0] != '.' || (strcmp(de->d_name, ".")
                                         && strcmp(de->d_name, "..")))
                n++;
        closedir(d);
        assert_int_equal(n, 2);
    }
}

/* A request the parent cannot make sense of ends the export, an error. */
static void test_parent_stops_on_garbage(void **state)
{
    unit_ctx *u = *state;
    char err[512];
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(write(sv[1], "Z\1\0\0\0x", 6), 6);
    close(sv[1]);
    assert_int_equal(sm_ctl_export_serve(u->pool, sv[0], u->dir, err,
                                         sizeof(err)), SM_EXPORT_WRITE);
    close(sv[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_split_writes_what_export_writes, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_parent_refuses_other_names, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_parent_stops_on_garbage, unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
