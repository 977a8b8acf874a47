#include <inttypes.h>
#include <stdint.h>

#include "esc.h"
#include "json.h"
#include "progress.h"
#include "wire.h"

void json_string(FILE *f, const char *str)
{
        const char *s = str;

        fputc('"', f);
        while (*s) {
                uint32_t cp;
                size_t n = esc_utf8_decode(s, &cp);

                if (n == 0) {
                        /* JSON cannot carry a raw byte: say that one was here. */
                        fputs("\\ufffd", f);
                        s++;
                        continue;
                }
                switch (cp) {
                case '"':  fputs("\\\"", f); break;
                case '\\': fputs("\\\\", f); break;
                case '\b': fputs("\\b", f); break;
                case '\f': fputs("\\f", f); break;
                case '\n': fputs("\\n", f); break;
                case '\r': fputs("\\r", f); break;
                case '\t': fputs("\\t", f); break;
                default:
                        /*
                         * RFC 8259 requires only C0 escaped; DEL, C1 and the bidi and
                         * format characters are too, so `cat`ing the output is safe.
                         */
                        if (esc_cp_unsafe(cp))
                                fprintf(f, "\\u%04x", (unsigned int)cp);
                        else
                                fwrite(s, 1, n, f);
                        break;
                }
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
                   ",\"mbps\":%.1f,\"attempt\":%u,\"attempts\":%u,\"retry_usec\":%" PRIu64
                   ",\"peer\":",
                job->bytes_done, job->bytes_total, job->usec,
                progress_mbps(job->bytes_done, job->usec), (unsigned int)job->attempt,
                (unsigned int)job->attempts, job->retry_usec);
        json_string(f, job->peer);
        fputs(",\"name\":", f);
        json_string(f, job->name);
        fputs(",\"text\":", f);
        json_string(f, job->text);
        fputc('}', f);
}
