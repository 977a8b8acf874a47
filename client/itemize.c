#include "itemize.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "progress.h"

const char *itemize_line(char *buf, size_t len, const struct ctl_item *it, const char *name, const char *target,
                         unsigned int level)
{
        static const char types[_CTL_ITEM_KIND_MAX] = {
                [CTL_ITEM_FILE] = 'f', [CTL_ITEM_DIR] = 'd', [CTL_ITEM_LINK] = 'L',
                [CTL_ITEM_HARD] = 'f', [CTL_ITEM_OTHER] = 'D',
        };
        const char *slash = it->kind == CTL_ITEM_DIR ? "/" : "";
        const char *arrow = !target ? "" : it->kind == CTL_ITEM_LINK ? " -> " : it->kind == CTL_ITEM_HARD ? " => " : "";
        char y, attrs[10];

        if (it->kind >= _CTL_ITEM_KIND_MAX || it->verdict >= _CTL_VERDICT_MAX)
                return NULL;
        if (!*arrow)
                target = "";
        switch (it->verdict) {
        case CTL_WOULD_DELETE:
                snprintf(buf, len, "*deleting   %s%s", name, slash);
                return buf;
        case CTL_WOULD_CREATE:
                memcpy(attrs, "+++++++++", 10);
                break;
        case CTL_WOULD_REPLACE:
                /* rsync's letters' places: c s t p o g u a x. */
                snprintf(attrs, sizeof(attrs), "%.3s....%.2s", it->changes, it->changes + 3);
                break;
        default:
                /* Kept, or a directory merged into: -ii only. */
                if (level < 2)
                        return NULL;
                snprintf(buf, len, ".%c          %s%s%s%s", types[it->kind], name, slash, arrow, target);
                return buf;
        }
        y = it->kind == CTL_ITEM_FILE ? '>' : it->kind == CTL_ITEM_HARD ? 'h' : 'c';
        snprintf(buf, len, "%c%c%s %s%s%s%s", y, types[it->kind], attrs, name, slash, arrow, target);
        return buf;
}

void itemize_add(struct itemize_sum *s, const struct ctl_item *it)
{
        switch (it->verdict) {
        case CTL_WOULD_CREATE:
        case CTL_WOULD_REPLACE:
                /* A directory moves nothing; a link's target is its data. */
                if (it->kind != CTL_ITEM_DIR) {
                        s->send++;
                        s->send_bytes += it->size;
                }
                break;
        case CTL_WOULD_KEEP:
                s->keep++;
                break;
        case CTL_WOULD_DELETE:
                s->deleted++;
                break;
        default:
                break;
        }
}

const char *itemize_summary(char *buf, size_t len, const struct itemize_sum *s)
{
        char size[32];

        snprintf(buf, len, "would send %" PRIu64 " file%s (%s), keep %" PRIu64 ", delete %" PRIu64, s->send,
                 s->send == 1 ? "" : "s", progress_size(size, sizeof(size), s->send_bytes), s->keep, s->deleted);
        return buf;
}
