/*
 * libFuzzer harness for the peer protocol decoders: arbitrary bytes must
 * decode or be refused with the documented errors, and whatever decodes
 * must re-encode to the very same bytes (the encoding is canonical) and
 * decode again to the same message; and every MAC input built from it
 * (wire.h, "Authentication") must build within WIRE_MAC_INPUT_MAX. An
 * offer whose path came in NAME parts (WIRE_OFFER_LONG_NAME) decodes
 * without a name: it is given the longest one, as a receiver would once
 * it has the parts, before it is encoded again. The same bytes are tried
 * as a whole landing (LAND parts assembled, wire_land_decode) too.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A binding from the input's own bytes, as if rdma_cm had reported them. */
static void binding_from(const uint8_t *data, size_t size, struct wire_binding *b)
{
        memset(b, 0, sizeof(*b));
        memcpy(b->sender, data, size < WIRE_ADDR_SIZE ? size : WIRE_ADDR_SIZE);
        b->port = size > 1 ? (uint16_t)(data[size - 1] | data[size - 2] << 8) : 0;
}

static void check_private(const uint8_t *data, size_t size)
{
        uint8_t buf[WIRE_WELCOME_SIZE];
        struct wire_hello h;
        struct wire_welcome w;
        struct wire_reject rj;
        int r;

        r = wire_decode_hello(data, size, &h);
        if (r == 0) {
                uint8_t in[WIRE_MAC_INPUT_MAX];
                struct wire_binding b;

                wire_encode_hello(buf, &h);
                if (memcmp(buf, data, WIRE_HELLO_SIZE) != 0)
                        abort();
                binding_from(data, size, &b);
                r = wire_lane_mac_input(in, sizeof(in), &b, &h);
                if (r <= 0 || r > WIRE_MAC_INPUT_MAX)
                        abort();
        } else if (r != -EBADMSG && r != -EPROTONOSUPPORT)
                abort();

        r = wire_decode_welcome(data, size, &w);
        if (r == 0) {
                wire_encode_welcome(buf, &w);
                if (memcmp(buf, data, WIRE_WELCOME_SIZE) != 0)
                        abort();
        } else if (r != -EBADMSG && r != -EPROTONOSUPPORT)
                abort();

        r = wire_decode_reject(data, size, &rj);
        if (r == 0) {
                wire_encode_reject(buf, &rj);
                if (memcmp(buf, data, WIRE_REJECT_SIZE) != 0)
                        abort();
                (void)strlen(wire_status_str(rj.status));
        } else if (r != -EBADMSG && r != -EPROTONOSUPPORT)
                abort();
}

/* The bytes as a whole landing (LAND parts assembled): canonical too. */
static void check_landing(const uint8_t *data, size_t size)
{
        static struct wire_landing l, again;
        static uint8_t buf[WIRE_LAND_MAX];
        int r = wire_land_decode(data, size, &l), n;

        if (r != 0) {
                if (r != -EBADMSG)
                        abort();
                return;
        }
        if ((l.direction != WIRE_LAND_PUSH && l.direction != WIRE_LAND_PULL) || l.naddrs == 0 ||
            l.naddrs > WIRE_LAND_ADDRS_MAX || l.path[0] != '/' || strlen(l.cred) == 0 || strlen(l.path) > WIRE_PATH_MAX)
                abort();
        /* A pull's way back is whole; a push has none. */
        if (l.direction == WIRE_LAND_PULL ? l.back_port == 0 || l.back_path[0] != '/' || strlen(l.back_cred) == 0
                                          : l.back_port != 0 || l.back_path[0] || l.back_cred[0])
                abort();
        n = wire_land_encode(buf, sizeof(buf), &l);
        if (n < 0 || (size_t)n != size || memcmp(buf, data, size) != 0)
                abort();
        if (wire_land_decode(buf, (size_t)n, &again) != 0 || memcmp(&again, &l, sizeof(l)) != 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const uint8_t nonce[WIRE_NONCE_SIZE];
        uint8_t buf[WIRE_CTRL_MAX], mac_in[WIRE_MAC_INPUT_MAX];
        struct wire_binding b;
        struct wire_msg m, again;
        int r, n;

        check_private(data, size);
        check_landing(data, size);

        r = wire_decode(data, size, &m);
        if (r != 0) {
                if (r != -EBADMSG && r != -EPROTONOSUPPORT)
                        abort();
                return 0;
        }

        if (m.type == WIRE_OFFER && (m.offer.flags & WIRE_OFFER_LONG_NAME)) {
                if (m.offer.name[0])
                        abort();
                memset(m.offer.name, 'p', WIRE_PATH_MAX);
        }
        n = wire_encode(buf, sizeof(buf), &m);
        if (n < 0 || (size_t)n != size || memcmp(buf, data, size) != 0)
                abort();
        if (wire_decode(buf, (size_t)n, &again) != 0)
                abort();
        if (m.type == WIRE_OFFER && (m.offer.flags & WIRE_OFFER_LONG_NAME))
                memset(again.offer.name, 'p', WIRE_PATH_MAX);
        if (memcmp(&again, &m, sizeof(m)) != 0)
                abort();

        switch (m.type) {
        case WIRE_OFFER:
                if (strlen(m.offer.name) == 0 || strlen(m.offer.name) > WIRE_PATH_MAX ||
                    ((m.offer.flags & WIRE_OFFER_LONG_NAME) ? !(m.offer.flags & WIRE_OFFER_TREE) || m.offer.file == 0 :
                     strlen(m.offer.name) > WIRE_NAME_MAX))
                        abort();
                binding_from(data, size, &b);
                r = wire_offer_mac_input(mac_in, sizeof(mac_in), nonce, &b, &m.offer);
                if (r <= 0 || r > WIRE_MAC_INPUT_MAX)
                        abort();
                if (wire_session_info(mac_in, sizeof(mac_in), m.offer.mac) <= 0)
                        abort();
                /* A session's later offer: MACed under S over the same fields. */
                r = wire_next_offer_mac_input(mac_in, sizeof(mac_in), &m.offer);
                if (r <= 0 || r > WIRE_MAC_INPUT_MAX)
                        abort();
                if (m.offer.job_files == 0 || m.offer.file >= m.offer.job_files)
                        abort();
                break;
        case WIRE_ACCEPT:
                if (wire_accept_mac_input(mac_in, sizeof(mac_in), &m.accept) <= 0)
                        abort();
                break;
        case WIRE_END:
                for (unsigned int lane = 0; lane < WIRE_LANES_MAX; lane++)
                        if (wire_end_mac_input(mac_in, sizeof(mac_in), lane, &m.end) <= 0)
                                abort();
                if (wire_end_mac_input(mac_in, sizeof(mac_in), WIRE_LANES_MAX, &m.end) != -EINVAL)
                        abort();
                break;
        case WIRE_REFUSE:
                if (strlen(m.refuse.text) > WIRE_TEXT_MAX)
                        abort();
                (void)strlen(wire_status_str(m.refuse.status));
                break;
        case WIRE_RESULT:
                if (strlen(m.result.text) > WIRE_TEXT_MAX)
                        abort();
                r = wire_result_mac_input(mac_in, sizeof(mac_in), 0, &m.result);
                if (r <= 0 || r > WIRE_MAC_INPUT_MAX)
                        abort();
                (void)strlen(wire_status_str(m.result.status));
                break;
        case WIRE_LAND:
                if (m.land.total < WIRE_LAND_FIXED || m.land.total > WIRE_LAND_MAX || m.land.len == 0 ||
                    m.land.len > WIRE_LAND_PART_MAX || m.land.offset + m.land.len > m.land.total)
                        abort();
                break;
        case WIRE_NAME:
                if (m.name.total <= WIRE_NAME_MAX || m.name.total > WIRE_PATH_MAX || m.name.len == 0 ||
                    m.name.len > WIRE_NAME_PART_MAX || m.name.offset + m.name.len > m.name.total ||
                    memchr(m.name.bytes, '\0', m.name.len))
                        abort();
                break;
        default:
                break;
        }
        return 0;
}
