#include <inttypes.h>
#include <time.h>
#include <stdbool.h>
#include <stdint.h>

#include "esc.h"
#include "json.h"
#include "progress.h"
#include "stats.h"
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

void json_peer_open(FILE *f, const char *peer, int exit_status)
{
        fputs("{\"peers\":[{\"peer\":", f);
        json_string(f, peer);
        fprintf(f, ",\"exit\":%d,\"job\":", exit_status);
}

void json_peer_close(FILE *f)
{
        fputs("}]}", f);
}

void json_time(FILE *f, uint64_t usec)
{
        time_t t = (time_t)(usec / 1000000u);
        struct tm tm;
        char buf[32];

        if (!usec || !gmtime_r(&t, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm)) {
                fputs("null", f);
                return;
        }
        fprintf(f, "\"%s.%03uZ\"", buf, (unsigned int)(usec % 1000000u / 1000u));
}

/* The job's keys, without the braces. */
static void json_job_keys(FILE *f, const struct ctl_job *job)
{
        fprintf(f, "\"id\":%" PRIu64 ",\"state\":", job->id);
        json_string(f, ctl_job_state_str(job->state));
        fprintf(f, ",\"status\":%u,\"status_text\":", (unsigned int)job->status);
        json_string(f, wire_status_str(job->status));
        fprintf(f, ",\"bytes\":%" PRIu64 ",\"bytes_total\":%" PRIu64 ",\"usec\":%" PRIu64
                   ",\"mbps\":%.1f,\"bwlimit\":%" PRIu64 ",\"attempt\":%u,\"attempts\":%u"
                   ",\"retry_usec\":%" PRIu64 ",\"files\":%u,\"files_total\":%u,\"files_skipped\":%u"
                   ",\"deleted\":%u,\"peer\":",
                job->bytes_done, job->bytes_total, job->usec,
                progress_mbps(job->bytes_done, job->usec), job->bwlimit, (unsigned int)job->attempt,
                (unsigned int)job->attempts, job->retry_usec, (unsigned int)job->files_done,
                (unsigned int)job->files_total, (unsigned int)job->files_skipped, (unsigned int)job->deleted);
        json_string(f, job->peer);
        fputs(",\"created\":", f);
        json_time(f, job->created_us);
        fputs(",\"started\":", f);
        json_time(f, job->started_us);
        fputs(",\"ended\":", f);
        json_time(f, job->ended_us);
        fputs(",\"name\":", f);
        json_string(f, job->name);
        fputs(",\"text\":", f);
        json_string(f, job->text);
        if (job->rails[0]) {
                fputs(",\"rails\":", f);
                json_string(f, job->rails);
        }
        /* Where it lands as its user: "push" at land_path on the peer, or
         * "pull" from land_path there into back_path. */
        if (job->land != CTL_JOB_LAND_NONE) {
                fprintf(f, ",\"land\":\"%s\",\"land_path\":", job->land == CTL_JOB_LAND_PULL ? "pull" : "push");
                json_string(f, job->land_path);
                if (job->land == CTL_JOB_LAND_PULL) {
                        fputs(",\"back_path\":", f);
                        json_string(f, job->back_path);
                }
        }
        if (!job->nodes)
                return;
        fprintf(f, ",\"nodes\":%u,\"nodes_ok\":%u,\"node_failed\":%u,\"node_status\":%u,\"node_status_text\":",
                (unsigned int)job->nodes, (unsigned int)job->nodes_ok, (unsigned int)job->node_failed,
                (unsigned int)job->node_status);
        json_string(f, wire_status_str(job->node_status));
        fputs(",\"node_peer\":", f);
        json_string(f, job->node_peer);
        fputs(",\"node_text\":", f);
        json_string(f, job->node_text);
        fputs(",\"nodes_missing\":[", f);
        for (unsigned int k = 0, n = 0; k < job->nodes; k++)
                if (nodeset_has(&job->nodes_missing, k))
                        fprintf(f, n++ ? ",%u" : "%u", k + 1);
        fputs("],\"route\":", f);
        json_string(f, job->route);
        fputs(",\"node_bytes\":[", f);
        for (unsigned int k = 0; k < job->nodes && k < CTL_NODES_MAX; k++)
                fprintf(f, k ? ",%" PRIu64 : "%" PRIu64, job->node_bytes[k]);
        fputc(']', f);
}

void json_job(FILE *f, const struct ctl_job *job)
{
        fputc('{', f);
        json_job_keys(f, job);
        fputc('}', f);
}

void json_job_files(FILE *f, const struct ctl_job *job, const struct json_file *files, size_t n)
{
        uint32_t sent = 0;

        fputc('{', f);
        json_job_keys(f, job);
        fputs(",\"file_results\":[", f);
        for (size_t i = 0; i < n; i++) {
                const struct json_file *e = &files[i];
                const char *result, *text = NULL;

                if (!e->name) {
                        result = "left out";
                        text = strerror(e->err);
                } else if (sent < job->files_done) {
                        result = "published";
                } else if (sent == job->files_done && (job->state == CTL_JOB_FAILED ||
                                                       job->state == CTL_JOB_CANCELLED)) {
                        result = "failed";
                        text = job->text;
                } else {
                        result = "not sent";
                }
                sent += e->name != NULL;
                fputs(i ? ",{\"path\":" : "{\"path\":", f);
                json_string(f, e->path);
                if (e->name) {
                        fputs(",\"name\":", f);
                        json_string(f, e->name);
                        fprintf(f, ",\"size\":%" PRIu64, e->size);
                }
                fputs(",\"result\":", f);
                json_string(f, result);
                if (text) {
                        fputs(",\"text\":", f);
                        json_string(f, text);
                }
                fputc('}', f);
        }
        fputs("]}", f);
}

static void json_stats_dir(FILE *f, const struct ctl_stats *s, unsigned int dir)
{
        const struct ctl_stats_dir *d = &s->dir[dir];
        bool first = true;

        fprintf(f, "{\"bytes\":%" PRIu64 ",\"files\":%" PRIu64 ",\"failed\":{", d->bytes, d->files);
        for (size_t i = 0; i < s->nreasons; i++) {
                if (s->reason[i].dir != dir)
                        continue;
                if (!first)
                        fputc(',', f);
                first = false;
                json_string(f, s->reason[i].name);
                fprintf(f, ":%" PRIu64, s->reason[i].count);
        }
        fprintf(f, "},\"failed_total\":%" PRIu64 ",\"rate\":%" PRIu64 ",\"mbps\":%.1f,\"active\":%" PRIu32,
                stats_failed_total(s, dir), d->rate, (double)d->rate / 1e6, d->active);
        if (dir == CTL_DIR_SEND)
                fprintf(f, ",\"queued\":%" PRIu32, s->queued);
        fputc('}', f);
}

void json_stats(FILE *f, const struct ctl_stats *s)
{
        fprintf(f, "{\"uptime_usec\":%" PRIu64 ",\"recv\":", s->uptime_usec);
        json_stats_dir(f, s, CTL_DIR_RECV);
        fputs(",\"send\":", f);
        json_stats_dir(f, s, CTL_DIR_SEND);
        fprintf(f, ",\"ring\":{\"recv\":{\"held\":%" PRIu32 ",\"slots\":%" PRIu32 "},"
                   "\"send\":{\"held\":%" PRIu32 ",\"slots\":%" PRIu32 "}},\"rails\":[",
                s->ring_held, s->ring_slots, s->pool_held, s->pool_slots);
        for (unsigned int i = 0; i < s->nrails && i < CTL_RAILS_MAX; i++) {
                fputs(i ? ",{\"name\":" : "{\"name\":", f);
                json_string(f, s->rail[i].name);
                fprintf(f, ",\"up\":%s,\"recv_bytes\":%" PRIu64 ",\"send_bytes\":%" PRIu64 "}",
                        s->rail[i].up ? "true" : "false", s->rail[i].bytes[CTL_DIR_RECV], s->rail[i].bytes[CTL_DIR_SEND]);
        }
        fputs("]}", f);
}
