/*
 * xferctl --json: string escaping (RFC 8259; DEL, C1, bidi and format
 * characters escaped too; invalid UTF-8 replaced) and the job object.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "json.h"
#include "tap.h"
#include "wire.h"

static char *str(const char *s)
{
        static char out[1024];
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        if (!f)
                return NULL;
        json_string(f, s);
        fclose(f);
        snprintf(out, sizeof(out), "%s", buf);
        free(buf);
        return out;
}

/* Valid UTF-8 with no raw control, bidi or format character: safe to parse and to cat. */
static bool clean(const char *s)
{
        while (*s) {
                uint32_t cp;
                size_t n = esc_utf8_decode(s, &cp);

                if (n == 0 || esc_cp_unsafe(cp))
                        return false;
                s += n;
        }
        return true;
}

static void test_hostile(void)
{
        struct ctl_job job = { .id = 9, .state = CTL_JOB_FAILED, .status = WIRE_E_DENIED };
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        is_str(str("\x1b[2J\x1b]0;x\x07"), "\"\\u001b[2J\\u001b]0;x\\u0007\"", "ESC sequences and BEL");
        is_str(str("a\rb\nc\td"), "\"a\\rb\\nc\\td\"", "CR, LF, TAB");
        is_str(str("\x7f"), "\"\\u007f\"", "DEL");
        is_str(str("\xc2\x9b" "1m\xc2\x80\xc2\x9f"), "\"\\u009b1m\\u0080\\u009f\"",
               "C1 as UTF-8 is escaped, not passed through");
        is_str(str("\x9b" "1m"), "\"\\ufffd1m\"", "a raw C1 byte is invalid UTF-8: U+FFFD");
        is_str(str("\xe0\x80\x9b"), "\"\\ufffd\\ufffd\\ufffd\"", "an overlong C1 is three bad bytes");
        is_str(str("x\xe2\x80"), "\"x\\ufffd\\ufffd\"", "truncated at the end");
        is_str(str("evil\xe2\x80\xae" "txt.exe"), "\"evil\\u202etxt.exe\"", "RLO");
        is_str(str("\xe2\x80\x8b\xe2\x80\x8f\xe2\x80\xaa\xe2\x81\xa6\xe2\x81\xa9\xe2\x80\xa8\xef\xbb\xbf"),
               "\"\\u200b\\u200f\\u202a\\u2066\\u2069\\u2028\\ufeff\"",
               "zero-width, bidi embedding/isolate, line separator, BOM");
        is_str(str("\xe6\x97\xa5\xe6\x9c\xac caf\xc3\xa9 \xc2\xa0"), "\"\xe6\x97\xa5\xe6\x9c\xac caf\xc3\xa9 \xc2\xa0\"",
               "CJK, é and NBSP pass through");

        snprintf(job.peer, sizeof(job.peer), "198.18.0.2:7470\x1b[8m");
        snprintf(job.name, sizeof(job.name), "a\xe2\x80\xae" "b\xff\rc");
        snprintf(job.text, sizeof(job.text), "denied\x1b]0;pwned\x07\xc2\x9b" "2J\n");
        f = open_memstream(&buf, &len);
        if (!f)
                return;
        json_job(f, &job);
        fclose(f);
        is_str(buf, "{\"id\":9,\"state\":\"failed\",\"status\":4,\"status_text\":\"peer not allowed\","
                    "\"bytes\":0,\"bytes_total\":0,\"usec\":0,\"mbps\":0.0,\"bwlimit\":0,"
                    "\"attempt\":0,\"attempts\":0,\"retry_usec\":0,\"files\":0,\"files_total\":0,\"files_skipped\":0,\"deleted\":0,"
                    "\"peer\":\"198.18.0.2:7470\\u001b[8m\",\"created\":null,\"started\":null,\"ended\":null,\"name\":\"a\\u202eb\\ufffd\\rc\","
                    "\"text\":\"denied\\u001b]0;pwned\\u0007\\u009b2J\\n\"}",
               "a job with hostile peer, name and text");
        ok(buf && clean(buf), "the object is valid UTF-8 with nothing raw a terminal would act on");
        free(buf);
}

/* A job of several files, file by file: published, left out, failed, not sent. */
static void test_files(void)
{
        struct ctl_job job = { .id = 5, .state = CTL_JOB_FAILED, .status = WIRE_E_EXISTS, .files_done = 1,
                               .files_total = 3 };
        const struct json_file files[] = {
                { .path = "d/a.dat", .name = "a.dat", .size = 12 },
                { .path = "d/secret", .err = EACCES },
                { .path = "d/b\"x", .name = "b\"x", .size = 0 },
                { .path = "c.dat", .name = "c.dat", .size = 7 },
        };
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        if (!f)
                return;
        snprintf(job.text, sizeof(job.text), "refused by peer: file exists");
        json_job_files(f, &job, files, 4);
        fclose(f);
        ok(buf && strncmp(buf, "{\"id\":5,\"state\":\"failed\",", 25) == 0, "the job's keys first");
        ok(buf && strstr(buf, ",\"text\":\"refused by peer: file exists\",\"file_results\":["
                              "{\"path\":\"d/a.dat\",\"name\":\"a.dat\",\"size\":12,\"result\":\"published\"},"
                              "{\"path\":\"d/secret\",\"result\":\"left out\",\"text\":\"Permission denied\"},"
                              "{\"path\":\"d/b\\\"x\",\"name\":\"b\\\"x\",\"size\":0,\"result\":\"failed\","
                              "\"text\":\"refused by peer: file exists\"},"
                              "{\"path\":\"c.dat\",\"name\":\"c.dat\",\"size\":7,\"result\":\"not sent\"}]}"),
           "each file: published, left out (why), failed (the job's reason), not sent: %s", buf ? buf : "");
        free(buf);

        /* Done: every file sent is published. */
        job.state = CTL_JOB_DONE;
        job.files_done = 3;
        buf = NULL;
        f = open_memstream(&buf, &len);
        if (!f)
                return;
        json_job_files(f, &job, files, 4);
        fclose(f);
        ok(buf && !strstr(buf, "not sent") && !strstr(buf, "\"failed\"") && strstr(buf, "left out"),
           "a job done: the rest published, the one left out still said");
        free(buf);
}

static void test_stats(void)
{
        struct ctl_stats s = {
                .uptime_usec = 5000000,
                .dir = {
                        [CTL_DIR_RECV] = { .bytes = 100000, .files = 1, .rate = 0, .active = 0 },
                        [CTL_DIR_SEND] = { .bytes = 1ull << 40, .files = 2, .rate = 52600000, .active = 1 },
                },
                .queued = 3,
                .ring_held = 12, .ring_slots = 64,
                .pool_held = 16, .pool_slots = 64,
                .nreasons = 3,
                .reason = {
                        { .dir = CTL_DIR_RECV, .count = 1, .name = "exists" },
                        { .dir = CTL_DIR_SEND, .count = 1, .name = "exists" },
                        { .dir = CTL_DIR_SEND, .count = 2, .name = "cancelled" },
                },
                .nrails = 2,
                .rail = {
                        { .up = 1, .bytes = { 7, 8 }, .name = "mlx5_0" },
                        { .up = 0, .bytes = { 9, 0 }, .name = "mlx5_1" },
                },
        };
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        if (!f)
                return;
        json_stats(f, &s);
        fclose(f);
        is_str(buf, "{\"uptime_usec\":5000000,"
                    "\"recv\":{\"bytes\":100000,\"files\":1,\"failed\":{\"exists\":1},\"failed_total\":1,"
                    "\"rate\":0,\"mbps\":0.0,\"active\":0},"
                    "\"send\":{\"bytes\":1099511627776,\"files\":2,\"failed\":{\"exists\":1,\"cancelled\":2},"
                    "\"failed_total\":3,\"rate\":52600000,\"mbps\":52.6,\"active\":1,\"queued\":3},"
                    "\"ring\":{\"recv\":{\"held\":12,\"slots\":64},\"send\":{\"held\":16,\"slots\":64}},"
                    "\"rails\":[{\"name\":\"mlx5_0\",\"up\":true,\"recv_bytes\":7,\"send_bytes\":8},"
                    "{\"name\":\"mlx5_1\",\"up\":false,\"recv_bytes\":9,\"send_bytes\":0}]}",
               "the stats object, with its rails");
        free(buf);

        memset(&s, 0, sizeof(s));
        buf = NULL;
        f = open_memstream(&buf, &len);
        if (!f)
                return;
        json_stats(f, &s);
        fclose(f);
        ok(buf && strstr(buf, "\"failed\":{},\"failed_total\":0"), "no failures: an empty object");
        free(buf);
}

int main(void)
{
        struct ctl_job job = {
                .id = 3,
                .state = CTL_JOB_FAILED,
                .status = WIRE_E_EXISTS,
                .bytes_done = 1000000,
                .bytes_total = 2000000,
                .usec = 500000,
                .bwlimit = 8388608,
                .attempt = 2,
                .attempts = 6,
                .retry_usec = 8000000,
                /* 2025-12-05 19:52:53.123456 UTC (Python's datetime says so), 1.999543 s later; not ended. */
                .created_us = 1764964373123456ull,
                .started_us = 1764964375122999ull,
        };
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        is_str(str(""), "\"\"", "empty string");
        is_str(str("foo.dat"), "\"foo.dat\"", "plain ASCII");
        is_str(str("a\"b\\c"), "\"a\\\"b\\\\c\"", "quote and backslash");
        is_str(str("\t\n\r\b\f"), "\"\\t\\n\\r\\b\\f\"", "short escapes");
        is_str(str("\x01\x1f\x7f"), "\"\\u0001\\u001f\\u007f\"", "other control bytes");
        is_str(str("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x93\x81"), "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x93\x81\"",
               "valid UTF-8 passes through");
        is_str(str("a\xff" "b"), "\"a\\ufffdb\"", "a stray byte becomes U+FFFD");
        is_str(str("\xc3"), "\"\\ufffd\"", "a truncated sequence at the end");
        is_str(str("\xc0\xaf"), "\"\\ufffd\\ufffd\"", "an overlong '/' is not let through");
        is_str(str("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"", "a surrogate is invalid");
        is_str(str("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", "beyond U+10FFFF is invalid");

        snprintf(job.peer, sizeof(job.peer), "198.18.0.2:7470");
        snprintf(job.name, sizeof(job.name), "x\"y");
        snprintf(job.text, sizeof(job.text), "refused by peer");
        f = open_memstream(&buf, &len);
        if (!f)
                return 1;
        json_job(f, &job);
        fclose(f);
        is_str(buf, "{\"id\":3,\"state\":\"failed\",\"status\":7,\"status_text\":\"file exists\","
                    "\"bytes\":1000000,\"bytes_total\":2000000,\"usec\":500000,\"mbps\":2.0,"
                    "\"bwlimit\":8388608,\"attempt\":2,\"attempts\":6,\"retry_usec\":8000000,\"files\":0,\"files_total\":0,\"files_skipped\":0,\"deleted\":0,"
                    "\"peer\":\"198.18.0.2:7470\",\"created\":\"2025-12-05T19:52:53.123Z\","
                    "\"started\":\"2025-12-05T19:52:55.122Z\",\"ended\":null,"
                    "\"name\":\"x\\\"y\",\"text\":\"refused by peer\"}",
               "a job object: times in RFC 3339, UTC, to the millisecond (cut, not rounded), null when not yet");
        free(buf);

        /* send --json's one shape: the job inside a peers array. */
        f = open_memstream(&buf, &len);
        if (!f)
                return 1;
        json_peer_open(f, "node\"01", 23);
        fputs("{}", f);
        json_peer_close(f);
        fclose(f);
        is_str(buf, "{\"peers\":[{\"peer\":\"node\\\"01\",\"exit\":23,\"job\":{}}]}",
               "a send to one peer: {\"peers\":[{\"peer\",\"exit\",\"job\"}]}");
        free(buf);

        /* A chain that went around its failed node 2; node 4 not reached. */
        job.state = CTL_JOB_DONE;
        job.status = WIRE_OK;
        job.text[0] = '\0';
        job.nodes = 4;
        job.nodes_ok = 2;
        nodeset_add(&job.nodes_missing, 1);
        nodeset_add(&job.nodes_missing, 3);
        job.node_failed = 2;
        job.node_status = WIRE_E_EXISTS;
        snprintf(job.node_peer, sizeof(job.node_peer), "198.18.0.3:7470");
        snprintf(job.route, sizeof(job.route), "198.18.0.3:7470,198.18.0.4:7470,[fd00::5]:7470");
        job.node_bytes[0] = job.node_bytes[2] = 2000000;
        job.node_bytes[1] = 1048576;
        job.node_bytes[3] = 0;
        buf = NULL;
        f = open_memstream(&buf, &len);
        if (!f)
                return 1;
        json_job(f, &job);
        fclose(f);
        ok(strstr(buf, ",\"text\":\"\",\"nodes\":4,\"nodes_ok\":2,\"node_failed\":2,\"node_status\":7,"
                       "\"node_status_text\":\"file exists\",\"node_peer\":\"198.18.0.3:7470\",\"node_text\":\"\","
                       "\"nodes_missing\":[2,4],\"route\":\"198.18.0.3:7470,198.18.0.4:7470,[fd00::5]:7470\","
                       "\"node_bytes\":[2000000,1048576,2000000,0]}") != NULL,
           "a chain's job: its nodes, the missing ones by number, the route and each node's bytes");
        free(buf);

        /* The longest chain: 512 nodes, node 301 missing; every node's bytes, none left out. */
        job.nodes = CTL_NODES_MAX;
        job.nodes_ok = CTL_NODES_MAX - 1;
        job.nodes_missing = (struct nodeset){ { 0 } };
        nodeset_add(&job.nodes_missing, 300);
        job.node_failed = 301;
        for (unsigned int k = 0; k < CTL_NODES_MAX; k++)
                job.node_bytes[k] = k == 300 ? 7 : 2000000;
        buf = NULL;
        f = open_memstream(&buf, &len);
        if (!f)
                return 1;
        json_job(f, &job);
        fclose(f);
        {
                const char *bytes = strstr(buf, "\"node_bytes\":[");
                unsigned int values = bytes ? 1 : 0;

                for (const char *c = bytes; c && *c && *c != ']'; c++)
                        values += *c == ',';
                ok(strstr(buf, "\"nodes\":512,\"nodes_ok\":511,\"node_failed\":301,") &&
                   strstr(buf, "\"nodes_missing\":[301],") && strstr(buf, ",2000000,7,2000000,") && values == 512,
                   "a chain of 512 nodes: node 301 missing, and all 512 nodes' bytes");
        }
        free(buf);
        test_hostile();
        test_stats();
        test_files();
        return done_testing();
}
