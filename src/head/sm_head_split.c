/* SPDX-License-Identifier: Apache-2.0 */
/* sm_head_split.c: the head scanner's byte-wise path (see sm_head_int.h):
 * a tag split between two chunks, read byte by byte through the states
 * sm_head_parse_attrs walks, and the end tag of raw text so split. */
#include "head/sm_head_int.h"

#include "head/sm_head_bytes.h"

/* The byte-wise path, for a tag split between chunks: it is kept in
 * tag_buf (only its name, unless it is one we read). */
void sm_head_tag_begin(sm_head *h, int is_end, const char *name,
                      apr_size_t len)
{
    h->state = S_TAG;
    h->tag = T_TAG_NAME;
    h->tag_is_end = is_end;
    h->tag_over = 0;
    if (!h->tag_buf)
        h->tag_buf = apr_palloc(h->p, SM_HEAD_TAG_MAX + 1);
    memcpy(h->tag_buf, name, len);
    h->tag_len = len;
}

/* The tag's name is complete: only the tags we read keep the rest. */
static void tag_named(sm_head *h)
{
    h->kind = sm_head_classify(h->tag_buf, h->tag_len, h->tag_buf + h->tag_len,
                       h->tag_is_end, &h->raw_name);
    h->name_len = h->tag_len;
    h->tag = T_BEFORE_NAME;
    if (h->tag_is_end || !READS_ATTRS(h->kind)) {
        /* a <script>'s are kept for its type (sm_head_script_attrs),
         * when JSON-LD is wanted */
        h->tag_over = h->tag_is_end || h->kind != K_RAW
                      || !(h->wants & SM_HEAD_WANT_NEWS);
        h->tag = T_SKIP;
    }
}

/* Its '>' came: the same reading as tag_in_place's, over tag_buf with a
 * '>' put after the tag for sm_head_parse_attrs to stop at. */
static void tag_end(sm_head *h)
{
    attr a[A_COUNT];
    const char *s, *end;

    h->tag_buf[h->tag_len] = '>';
    if (h->tag_is_end || h->tag_over || !READS_ATTRS(h->kind)) {
        sm_head_on_tag(h, h->kind, h->tag_is_end,
               h->tag_over || h->tag_is_end ? NULL
               : sm_head_script_attrs(h, h->tag_buf + h->name_len,
                              h->tag_buf + h->tag_len, a));
        return;
    }
    ATTRS_CLEAR(a);
    s = h->tag_buf + h->name_len;
    end = h->tag_buf + h->tag_len + 1;
    sm_head_parse_attrs(s, end, a);
    sm_head_on_tag(h, h->kind, 0, a);
}

static void tag_append(sm_head *h, const char *s, apr_size_t n)
{
    if (h->tag_over)
        return;
    if (n > SM_HEAD_TAG_MAX - h->tag_len) {
        h->tag_over = 1;
        return;
    }
    memcpy(h->tag_buf + h->tag_len, s, n);
    h->tag_len += n;
}

/* In a tag split between chunks: up to its '>', byte by byte through the
 * states sm_head_parse_attrs walks (quoted values with memchr).  Returns bytes
 * used. */
apr_size_t sm_head_scan_tag(sm_head *h, const char *d, apr_size_t len)
{
    apr_size_t i = 0;

    while (i < len) {
        char c = d[i];

        if (h->tag == T_SKIP) {
            const char *gt = memchr(d + i, '>', len - i);
            tag_append(h, d + i, gt ? (apr_size_t)(gt - d) - i : len - i);
            if (!gt)
                return len;
            tag_end(h);
            return (apr_size_t)(gt - d) + 1;
        }
        if (h->tag == T_DQ || h->tag == T_SQ) {
            const char *q = memchr(d + i, h->tag == T_DQ ? '"' : '\'',
                                   len - i);
            apr_size_t n = q ? (apr_size_t)(q - d) + 1 - i : len - i;
            tag_append(h, d + i, n);
            i += n;
            if (q)
                h->tag = T_BEFORE_NAME;
            continue;
        }
        if (c == '>') {
            if (h->tag == T_TAG_NAME)
                tag_named(h);
            tag_end(h);
            return i + 1;
        }
        switch (h->tag) {
        case T_TAG_NAME:
            if (IS_SPACE(c) || c == '/')
                tag_named(h);
            break;
        case T_BEFORE_NAME:
            if (!IS_SPACE(c) && c != '/')
                h->tag = T_ATTR_NAME;
            break;
        case T_ATTR_NAME:
            if (IS_SPACE(c))
                h->tag = T_AFTER_NAME;
            else if (c == '/')
                h->tag = T_BEFORE_NAME;
            else if (c == '=')
                h->tag = T_BEFORE_VALUE;
            break;
        case T_AFTER_NAME:
            if (c == '=')
                h->tag = T_BEFORE_VALUE;
            else if (c == '/')
                h->tag = T_BEFORE_NAME;
            else if (!IS_SPACE(c))
                h->tag = T_ATTR_NAME;
            break;
        case T_BEFORE_VALUE:
            if (c == '"')
                h->tag = T_DQ;
            else if (c == '\'')
                h->tag = T_SQ;
            else if (!IS_SPACE(c))
                h->tag = T_UNQUOTED;
            break;
        default:                                /* T_UNQUOTED */
            if (IS_SPACE(c))
                h->tag = T_BEFORE_NAME;
            break;
        }
        tag_append(h, &c, 1);
        i++;
    }
    return i;
}

/* After '<' in raw text: is it "</name" and a delimiter? */
apr_size_t sm_head_scan_raw_end(sm_head *h, const char *d, apr_size_t len)
{
    apr_size_t i = 0, name_len = strlen(h->raw_name);

    while (i < len) {
        char c = d[i];
        if (h->raw_matched == 0) {
            if (c != '/')
                break;
        }
        else if (h->raw_matched <= name_len) {
            if (((unsigned char)c | 0x20)
                != (unsigned char)h->raw_name[h->raw_matched - 1])
                break;
        }
        else {
            if (!(IS_SPACE(c) || c == '/' || c == '>'))
                break;
            if (h->in_title)
                sm_head_finish_title(h);
            if (h->in_json)
                sm_head_finish_jsonld(h);
            h->in_title = 0;
            sm_head_tag_begin(h, 1, h->raw_name, name_len);
            return i;                   /* sm_head_scan_tag reads the delimiter */
        }
        h->raw_text[h->raw_matched++] = c;
        i++;
    }
    if (i < len) {                      /* not the end tag: it was text */
        title_append(h, "<", 1);
        title_append(h, h->raw_text, h->raw_matched);
        h->state = S_RAW;
    }
    return i;
}

