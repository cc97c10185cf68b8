/* SPDX-License-Identifier: Apache-2.0 */
/* bench/mkstores.c: make N new store files as the module does at first
 * start (sm_store_open with SM_STORE_CREATE, then close), one after the
 * other, and print the wall-clock time: the cost of a new store without
 * httpd (bench/many_stores.py measures the server's first start).
 *
 *   mkstores DIR N [batch]  (DIR/s0.db ... DIR/s<N-1>.db, missing)
 *
 * batch: as the module's first start does, sm_store_make_new for all of
 * them (one sync), then each opened and closed as any store would be. */
#include "store/sm_store.h"

#include <apr_general.h>
#include <apr_strings.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    apr_pool_t *p, *sp;
    apr_time_t t0;
    char err[512];
    int n, i;

    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: mkstores DIR N [batch]\n");
        return 2;
    }
    n = atoi(argv[2]);
    apr_initialize();
    apr_pool_create(&p, NULL);
    t0 = apr_time_now();
    if (argc == 4) {
        const char **paths = apr_palloc(p, sizeof(*paths) * (apr_size_t)n);
        char *made = apr_palloc(p, (apr_size_t)n);
        for (i = 0; i < n; i++)
            paths[i] = apr_psprintf(p, "%s/s%d.db", argv[1], i);
        int k = sm_store_make_new(p, paths, n, made);
        printf("%d made together in %.1f ms\n", k,
               (double)(apr_time_now() - t0) / 1000.0);
    }
    for (i = 0; i < n; i++) {
        sm_store *st;
        apr_pool_create(&sp, p);
        if (sm_store_open(&st, sp, apr_psprintf(sp, "%s/s%d.db", argv[1], i),
                          SM_STORE_CREATE, 1000, NULL, err, sizeof(err))
            != APR_SUCCESS) {
            fprintf(stderr, "mkstores: %s\n", err);
            return 1;
        }
        sm_store_close(st);
        apr_pool_destroy(sp);
    }
    printf("%d stores made in %.1f ms (%.2f ms each)\n", n,
           (double)(apr_time_now() - t0) / 1000.0,
           (double)(apr_time_now() - t0) / 1000.0 / n);
    apr_terminate();
    return 0;
}
