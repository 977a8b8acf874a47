/*
 * libFuzzer harness for the lander protocol decoder (common/landmsg.c):
 * arbitrary bytes decode or are refused with the documented errors; a
 * decoded message re-encodes to the same bytes and decodes again to the
 * same message, a SESSION's binding can be computed, and a BATCH's
 * requests read back one by one, as many as it says.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "landmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static uint8_t buf[LANDMSG_MSG_MAX];
        static struct landmsg m, again;
        uint8_t binding[LANDMSG_BINDING_SIZE];
        int r, n;

        r = landmsg_decode(data, size, &m);
        if (r != 0) {
                if (r != -EBADMSG && r != -EPROTONOSUPPORT)
                        abort();
                return 0;
        }
        n = landmsg_encode(buf, sizeof(buf), &m);
        if (n < 0 || (size_t)n != size || memcmp(buf, data, size) != 0)
                abort();
        if (landmsg_decode(buf, (size_t)n, &again) != 0 || memcmp(&again, &m, sizeof(m)) != 0)
                abort();
        if (m.type == LANDMSG_SESSION && landmsg_binding(&m.session, binding) != 0)
                abort();
        if (m.type == LANDMSG_BATCH) {
                static struct landmsg_op op;
                size_t off = 0, count = 0, links = 0;
                uint16_t type;

                while ((r = landmsg_batch_next(&m.batch, &off, &type, &op)) == 1) {
                        count++;
                        links += type == LANDMSG_LINK;
                }
                if (r != 0 || count != m.batch.count || links != m.batch.links)
                        abort();
        }
        return 0;
}
