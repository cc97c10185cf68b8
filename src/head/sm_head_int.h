/* SPDX-License-Identifier: Apache-2.0 */
/* sm_head_int.h: the head scanner's state, shared by its fast path
 * (sm_head.c: tags whole in a chunk) and its byte-wise path
 * (sm_head_split.c: tags and raw text's end tags split between chunks).
 * Not for use outside src/head. */
#ifndef SM_HEAD_INT_H
#define SM_HEAD_INT_H

#include <string.h>

#include "head/sm_head.h"
#include "head/sm_head_images.h"

typedef enum {
    S_DATA,         /* text: look for '<' */
    S_LT,           /* after '<' */
    S_BANG,         /* after "<!" (and bang_dashes '-') */
    S_COMMENT,      /* inside "<!-- ... -->" */
    S_BOGUS,        /* "<!DOCTYPE ...>", "<?...>": up to '>' */
    S_END_OPEN,     /* after "</" */
    S_TAG,          /* a tag in progress, up to its '>' */
    S_RAW,          /* raw text (script, style...): up to its end tag */
    S_RAW_END,      /* raw text after '<': matching "/name" */
    S_DONE
} scan_state;

/* Where a tag's '>' may be: only outside a quoted attribute value. */
typedef enum {
    T_TAG_NAME, T_BEFORE_NAME, T_ATTR_NAME, T_AFTER_NAME, T_BEFORE_VALUE,
    T_UNQUOTED, T_DQ, T_SQ,
    T_SKIP          /* a tag we do not read: up to the next '>' */
} tag_state;

struct sm_head {
    apr_pool_t *p;
    sm_head_result res;
    scan_state state;
    apr_size_t seen;            /* bytes consumed */
    int canonical_conflict;
    int template_depth;

    /* The tag in progress, without '<' and '>'. */
    tag_state tag;
    int tag_is_end;
    int tag_over;               /* not kept: longer than SM_HEAD_TAG_MAX,
                                   or not a tag we read */
    int kind;                   /* tag_kind, once the name is complete */
    apr_size_t name_len;
    apr_size_t tag_len;

    int bang_dashes;
    apr_size_t comment_len;     /* bytes of the comment so far */
    unsigned char back[3];      /* its last bytes, back[0] the last */

    const char *raw_name;       /* the raw-text element's name */
    apr_size_t raw_matched;     /* of "/name" after '<' */
    char raw_text[16];          /* those bytes as written (the longest raw
                                   name is 8 letters) */
    unsigned images[SM_HEAD_IMAGE_FORMS];   /* kept of each form */
    int in_json;                /* raw text kept as JSON-LD */
    char *json;                 /* SM_HEAD_JSONLD_MAX bytes, made at the
                                   first JSON-LD script */
    apr_size_t json_len;
    apr_time_t published_meta, published_ld;
    int in_title;               /* raw text kept as the title */
    apr_size_t title_len;
    unsigned wants;             /* SM_HEAD_WANT_*: set after the memset */
    /* a tag split between chunks, SM_HEAD_TAG_MAX bytes + the '>'
     * tag_end puts: made by the first (a page fed whole makes none) */
    char *tag_buf;
    char title[SM_HEAD_TITLE_MAX];
};

/* The attributes read, by name; a tag keeps the first of each. */
enum { A_REL, A_HREF, A_HREFLANG, A_NAME, A_CONTENT, A_PROPERTY, A_TYPE,
       A_COUNT };

typedef struct {
    const char *value;  /* raw, NULL: not seen */
    apr_size_t len;     /* set with value */
} attr;

/* No attribute seen yet: only the values are cleared (what a memset of
 * the whole array costs more than, measured with bench/head_scan). */
#define ATTRS_CLEAR(a) \
    do { \
        int k_; \
        for (k_ = 0; k_ < A_COUNT; k_++) \
            (a)[k_].value = NULL; \
    } while (0)

/* What a tag's name makes of it. */
typedef enum {
    K_OTHER = 0,    /* starts the body (<body>, <div>, <plaintext>...) */
    K_HEAD_OK,      /* may be in a head, nothing to read */
    K_RAW,          /* its content is text up to its own end tag */
    K_TEMPLATE,
    K_END_HEAD,     /* as an end tag: </head>, </body>, </html>, </br> */
    K_META, K_LINK, K_BASE      /* start tags whose attributes are read */
} tag_kind;

#define READS_ATTRS(kind) ((kind) >= K_META)

/* sm_head.c */
const char *sm_head_parse_attrs(const char *s, const char *end, attr *a);
tag_kind sm_head_classify(const char *s, apr_size_t n, const char *end,
                          int is_end, const char **raw_name);
void sm_head_on_tag(sm_head *h, tag_kind kind, int is_end, const attr *a);
const attr *sm_head_script_attrs(const sm_head *h, const char *s,
                                 const char *gt, attr *a);
void sm_head_finish_title(sm_head *h);
void sm_head_finish_jsonld(sm_head *h);
void sm_head_json_append(sm_head *h, const char *s, apr_size_t n);

/* sm_head_split.c */
void sm_head_tag_begin(sm_head *h, int is_end, const char *name,
                       apr_size_t len);
apr_size_t sm_head_scan_tag(sm_head *h, const char *d, apr_size_t len);
apr_size_t sm_head_scan_raw_end(sm_head *h, const char *d, apr_size_t len);

/* Raw text kept: the title's, or a JSON-LD script's. */
static APR_INLINE void title_append(sm_head *h, const char *s,
                                     apr_size_t n)
{
    if (!h->in_title) {
        if (h->in_json)
            sm_head_json_append(h, s, n);
        return;
    }
    if (n > SM_HEAD_TITLE_MAX - h->title_len)
        n = SM_HEAD_TITLE_MAX - h->title_len;
    memcpy(h->title + h->title_len, s, n);
    h->title_len += n;
}

#endif
