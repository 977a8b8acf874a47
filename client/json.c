#include <inttypes.h>
#include <stdint.h>

#include "json.h"
#include "progress.h"
#include "wire.h"

/* Length of the valid UTF-8 sequence at @s, or 0 if it is not one. */
static size_t json_utf8_len(const unsigned char *s)
{
        uint32_t cp;
        size_t n;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                n = 2, cp = s[0] & 0x1f;
        else if (s[0] >= 0xe0 && s[0] <= 0xef)
                n = 3, cp = s[0] & 0x0f;
        else if (s[0] >= 0xf0 && s[0] <= 0xf4)
                n = 4, cp = s[0] & 0x07;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                /* A NUL terminator fails this test too, so we never read past it. */
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = cp << 6 | (s[i] & 0x3f);
        }
        /* Overlong forms, surrogates and code points past U+10FFFF. */
        if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
            (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
                return 0;
        return n;
}

void json_string(FILE *f, const char *str)
{
        const unsigned char *s = (const unsigned char *)str;

        fputc('"', f);
        while (*s) {
                size_t n;

                switch (*s) {
                case '"':  fputs("\\\"", f); s++; continue;
                case '\\': fputs("\\\\", f); s++; continue;
                case '\b': fputs("\\b", f); s++; continue;
                case '\f': fputs("\\f", f); s++; continue;
                case '\n': fputs("\\n", f); s++; continue;
                case '\r': fputs("\\r", f); s++; continue;
                case '\t': fputs("\\t", f); s++; continue;
                default:
                        break;
                }
                if (*s < 0x20 || *s == 0x7f) {
                        fprintf(f, "\\u%04x", *s);
                        s++;
                        continue;
                }
                n = json_utf8_len(s);
                if (n == 0) {
                        fputs("\\ufffd", f);
                        s++;
                        continue;
                }
                fwrite(s, 1, n, f);
                s += n;
        }
        fputc('"', f);
}

void json_job(FILE *f, const struct ctl_job *job)
{
        fprintf(f, "{\"id\":%" PRIu64 ",\"state\":", job->id);
        json_string(f, ctl_job_state_str(job->state));
        fprintf(f, ",\"status\":%u,\"status_text\":", (unsigned int)job->status);
        json_string(f, wire_status_str(job->status));
        fprintf(f, ",\"bytes\":%" PRIu64 ",\"bytes_total\":%" PRIu64 ",\"usec\":%" PRIu64
                   ",\"mbps\":%.1f,\"peer\":",
                job->bytes_done, job->bytes_total, job->usec,
                progress_mbps(job->bytes_done, job->usec));
        json_string(f, job->peer);
        fputs(",\"name\":", f);
        json_string(f, job->name);
        fputs(",\"text\":", f);
        json_string(f, job->text);
        fputc('}', f);
}
