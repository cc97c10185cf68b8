/* SPDX-License-Identifier: Apache-2.0 */
/* sm_head_images.h: the head reader's images (sm_head.h): which <meta>
 * and <link> name one, kept inline so that a page without any pays a
 * length compare per <meta> name and a memchr per <link> rel. */
#ifndef SM_HEAD_IMAGES_H
#define SM_HEAD_IMAGES_H

#include <string.h>

#include <apr_pools.h>

#include "head/sm_head.h"
#include "head/sm_head_bytes.h"

/* The forms an image is declared in (sm_head_image.form). */
enum { SM_HEAD_IMAGE_OG = 0, SM_HEAD_IMAGE_TWITTER, SM_HEAD_IMAGE_SRC,
       SM_HEAD_IMAGE_FORMS };

/* Is s[0..n) (any case) equal to the lowercase word w? */
static APR_INLINE int sm_img_ci_is(const char *s, apr_size_t n,
                                   const char *w, apr_size_t wn)
{
    apr_size_t i;

    if (n != wn)
        return 0;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'A' && c <= 'Z' ? c | 0x20 : c) != (unsigned char)w[i])
            return 0;
    }
    return 1;
}
#define SM_IMG_IS(s, n, w) sm_img_ci_is(s, n, w, sizeof(w) - 1)

/* The form a <meta> property or name value declares: og:image (and its
 * og:image:url, og:image:secure_url), twitter:image (and the older
 * twitter:image:src); -1 for anything else (v NULL: none).  One folded
 * word compared for most values (sm_head_bytes.h). */
static APR_INLINE int sm_head_image_meta_form(const char *v, apr_size_t n)
{
    apr_uint64_t w;

    /* the five lengths: 8, 12, 13, 17 and 19 */
    if (!v || n > 19 || !((1u << n) & 0xA3100u))
        return -1;
    w = folded_word(v, 8, v + n);
    if (w == WORD("og:image")) {
        if (n == 8 || SM_IMG_IS(v + 8, n - 8, ":url")
            || SM_IMG_IS(v + 8, n - 8, ":secure_url"))
            return SM_HEAD_IMAGE_OG;
    }
    else if (w == WORD("twitter:") && (n == 13 || n == 17)) {
        if (SM_IMG_IS(v + 8, n - 8, "image")
            || SM_IMG_IS(v + 8, n - 8, "image:src"))
            return SM_HEAD_IMAGE_TWITTER;
    }
    return -1;
}

/* Does a <link> rel value end with the token image_src (it is the only
 * one in practice; a rel that names it before another is not read)?  Its
 * last two bytes decide for nearly every other rel. */
int sm_head_image_rel_slow(const char *v, apr_size_t n);
static APR_INLINE int sm_head_image_rel(const char *v, apr_size_t n)
{
    return n >= 9 && (v[n - 1] | 0x20) == 'c' && (v[n - 2] | 0x20) == 'r'
           && sm_head_image_rel_slow(v, n);
}

/* Note the raw (not yet decoded) value v[0..n) as an image of form into
 * res->images (made on the first), unless counts[form] already reached
 * SM_HEAD_MAX_IMAGES, or it is empty, too long or already there. */
void sm_head_image_add(apr_pool_t *p, sm_head_result *res, unsigned *counts,
                       int form, const char *v, apr_size_t n);

#endif
