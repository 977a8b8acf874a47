/*
 * libFuzzer harness for the control protocol decoder: arbitrary bytes
 * decode or are refused with the documented errors; a decoded message
 * re-encodes to the same bytes and decodes again to the same message.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t buf[CTL_MSG_MAX];
        struct ctl_msg m, again;
        int r, n;

        r = ctl_decode(data, size, &m);
        if (r != 0) {
                if (r != -EBADMSG && r != -EPROTONOSUPPORT)
                        abort();
                return 0;
        }

        n = ctl_encode(buf, sizeof(buf), &m);
        if (n < 0 || (size_t)n != size || memcmp(buf, data, size) != 0)
                abort();
        if (ctl_decode(buf, (size_t)n, &again) != 0 || again.type != m.type || memcmp(&again, &m, ctl_msg_size(m.type)) != 0)
                abort();

        if (m.type == CTL_JOB) {
                (void)strlen(ctl_job_state_str(m.job.state));
                if (strlen(m.job.peer) >= sizeof(m.job.peer) || strlen(m.job.text) > CTL_TEXT_MAX)
                        abort();
        }
        return 0;
}
