/* xferctl --json: string escaping (RFC 8259, invalid UTF-8 replaced) and the job object. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
        struct ctl_job job = {
                .id = 3,
                .state = CTL_JOB_FAILED,
                .status = WIRE_E_EXISTS,
                .bytes_done = 1000000,
                .bytes_total = 2000000,
                .usec = 500000,
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
                    "\"peer\":\"198.18.0.2:7470\",\"name\":\"x\\\"y\",\"text\":\"refused by peer\"}",
               "a job object");
        free(buf);
        return done_testing();
}
