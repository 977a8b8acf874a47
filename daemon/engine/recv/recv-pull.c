/*
 * A pull (wire.h, Pulls; xferctl get PEER:/PATH DEST): the peer asks for
 * the file at PATH, read as the user its MUNGE credential proves, and
 * this side sends it to the node the pull names (the asking one for
 * xferctl get, another for a copy between two peers), where it lands as
 * that user. The offer is the ask, a file of nothing; it is answered
 * only once the way back has ended:
 *
 *   offer:      SESSION {PULL, the landing}   -> the user it proved
 *               OPEN_READ {PATH}              -> a descriptor, read-only, as the user
 *               statx (a regular file, its size and mode)
 *   meanwhile:  an empty CREDIT every second (recv_tick_start)
 *   back:       a send of that file (send_start), landing as the user at
 *               the asking node (its own landing: back_*), which lands it
 *   verdict:    that send done: ACCEPT SKIP + RESULT "ok";
 *               failed: REFUSE with its status and reason
 *
 * The send back is this side's own, as a relay's downstream is: the
 * asking side holds its job and retries it; a pull whose asker hangs up
 * cancels its send (recv_pull_detach).
 */

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "landc.h"
#include "landmsg.h"
#include "log.h"
#include "recv-int.h"
#include "recv-publish.h"

/* The send back; outlives its transfer until the send's done. */
struct recv_pull {
        struct recv_xfer *x;            /* NULL once the pull ended first */
        struct engine_send *down;
        char peer[WIRE_HOP_STR_MAX];
};

static bool recv_pull_opening(struct recv_xfer *x)
{
        return xfer_io_done(&x->base) && x->base.state == XFER_OFFER;
}

unsigned int recv_pull_check(struct recv_xfer *x, const struct wire_offer *o, char *text, size_t len)
{
        const struct wire_landing *l = x->landing;
        struct wire_hop from;
        bool listed = false;

        if (o->flags != WIRE_OFFER_LAND || o->job_files != 1 || o->size != 0 ||
            memcmp(o->source, (uint8_t[WIRE_SOURCE_SIZE]){ 0 }, WIRE_SOURCE_SIZE) != 0) {
                snprintf(text, len, "a pull asks for one file, with nothing else");
                return WIRE_E_PROTOCOL;
        }
        /* Only to a node the user's credential names: the lander checks
         * that the landing's addresses are the credential's. */
        for (unsigned int k = 0; k < l->naddrs; k++)
                listed |= memcmp(l->addrs[k], l->back_addr, WIRE_ADDR_SIZE) == 0;
        if (!listed) {
                snprintf(text, len, "a pull's credential does not name the node the file is to go to");
                return WIRE_E_PERMISSION;
        }
        /* To another node than the one asking (a copy between two peers):
         * this node passes a file on, as a relay does, under the same
         * policy (relay, relay_peers). */
        if (wire_hop_set(&from, rdma_get_peer_addr(x->base.lane[0]->conn.id)) < 0 ||
            memcmp(from.addr, l->back_addr, WIRE_ADDR_SIZE) != 0) {
                struct wire_hop to = { .port = l->back_port };
                struct sockaddr_storage ss;

                const struct recv_cfg *c = &x->env->cfg;

                memcpy(to.addr, l->back_addr, WIRE_ADDR_SIZE);
                wire_hop_sockaddr(&to, &ss);
                /* relay = peers: among the named hosts, the asker included. */
                if (c->relay == CONFIG_RELAY_NO || wire_hop_refused(&to) ||
                    !acl_allows(&c->relay_peers, (const struct sockaddr *)&ss) ||
                    (c->relay == CONFIG_RELAY_PEERS &&
                     (c->relay_peers.n == 0 ||
                      !acl_allows(&c->relay_peers, rdma_get_peer_addr(x->base.lane[0]->conn.id))))) {
                        snprintf(text, len, "this node sends a file on to another node only as a relay may "
                                 "(relay, relay_peers)");
                        return WIRE_E_DENIED;
                }
        }
        return WIRE_OK;
}

static void recv_pull_on_done(void *owner, const struct engine_result *res)
{
        struct recv_pull *p = owner;
        struct recv_xfer *x = p->x;
        char text[WIRE_PATH_MAX + 128];       /* recv_fail cuts it to WIRE_TEXT_MAX */

        p->down = NULL;
        if (!x) {
                free(p);
                return;
        }
        x->pull = NULL;
        free(p);
        if (x->base.state != XFER_OFFER)
                return;
        if (res->outcome == ENGINE_DONE) {
                x->pull_bytes = res->bytes;
                x->pull_usec = res->usec;
                recv_answer_skip(x);
                return;
        }
        snprintf(text, sizeof(text), "sending %s back: %s", x->landing->path,
                 res->outcome == ENGINE_CANCELLED ? "cancelled" : res->text);
        recv_fail(x, res->outcome == ENGINE_CANCELLED ? WIRE_E_INTERNAL : res->status, text);
}

static const struct engine_send_ops recv_pull_ops = {
        .done = recv_pull_on_done,
};

/* The file is open and is a regular one: send it back. */
static void recv_pull_send(struct recv_xfer *x, int fd)
{
        const struct wire_landing *l = x->landing;
        struct wire_landing *back;
        struct engine_send_req req;
        struct sockaddr_storage ss;
        struct wire_hop hop = { .port = l->back_port };
        struct recv_pull *p;
        char text[WIRE_PATH_MAX + 128];       /* recv_fail cuts it to WIRE_TEXT_MAX */
        int r;

        p = calloc(1, sizeof(*p));
        back = calloc(1, sizeof(*back));
        if (!p || !back) {
                free(p);
                free(back);
                recv_fail(x, WIRE_E_INTERNAL, "out of memory for a pull");
                return;
        }
        /* Its own landing there: as the user, by the credential the
         * user made for this (a PUSH for that node), at the path they said. */
        back->direction = WIRE_LAND_PUSH;
        back->flags = l->back_flags;
        back->naddrs = 1;
        memcpy(back->addrs[0], l->back_addr, WIRE_ADDR_SIZE);
        memcpy(back->token, l->token, WIRE_TOKEN_SIZE);
        snprintf(back->cred, sizeof(back->cred), "%s", l->back_cred);
        snprintf(back->path, sizeof(back->path), "%s", l->back_path);
        memcpy(hop.addr, l->back_addr, WIRE_ADDR_SIZE);
        wire_hop_str(&hop, p->peer, sizeof(p->peer));
        req = (struct engine_send_req){
                .id = x->cur->offer.transfer_id,
                .fd = fd,
                .size = x->stx.stx_size,
                .name = x->cur->offer.name,
                .files = 1,
                .job_bytes = x->stx.stx_size,
                .mode = x->stx.stx_mode & 07777,
                .dst = (const struct sockaddr *)&ss,
                .dst_len = wire_hop_sockaddr(&hop, &ss),
                .peer = p->peer,
                .bwlimit = l->back_bwlimit,
                .land = back,
        };
        p->x = x;
        r = send_start(x->env->send, &req, &recv_pull_ops, p, NULL, NULL, &p->down);
        free(back);
        if (r != 0) {
                free(p);
                snprintf(text, sizeof(text), "cannot send %s back: %s", l->path,
                         r == ENGINE_SEND_FULL ? "no room in the send pool" :
                         r == ENGINE_SEND_NODEV ? "the RDMA device is gone" : strerror(-r));
                recv_fail(x, r == ENGINE_SEND_FULL ? WIRE_E_BUSY : WIRE_E_INTERNAL, text);
                return;
        }
        x->pull = p;
        log_info("%s: %s (%" PRIu64 " bytes) read as %s (uid %u), going back to %s:%s", x->base.peer, l->path,
                 (uint64_t)x->stx.stx_size, x->land_user, (unsigned int)x->land_uid, p->peer, l->back_path);
        /* The asker waits for the ACCEPT: it hears that we are at it. */
        recv_tick_start(x);
}

static void recv_pull_on_stat(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        int fd = x->pull_fd;
        char text[WIRE_PATH_MAX + 128];       /* recv_fail cuts it to WIRE_TEXT_MAX */

        x->pull_fd = -1;
        if (!recv_pull_opening(x)) {
                safe_close(fd);
                return;
        }
        if (res < 0) {
                safe_close(fd);
                snprintf(text, sizeof(text), "%s: %s", x->landing->path, strerror((int)-res));
                recv_fail(x, wire_status_of_errno((int)-res), text);
                return;
        }
        if (!S_ISREG(x->stx.stx_mode)) {
                safe_close(fd);
                snprintf(text, sizeof(text), "%s: not a regular file (pulling a tree is not supported yet)",
                         x->landing->path);
                recv_fail(x, WIRE_E_NAME, text);
                return;
        }
        recv_pull_send(x, fd);
        safe_close(fd);
}

static void recv_pull_on_open(void *arg, const struct landmsg *reply, int fd)
{
        static const char empty[] = "";
        struct recv_xfer *x = arg;

        if (!recv_pull_opening(x)) {
                safe_close(fd);
                return;
        }
        if (reply->type != LANDMSG_FD || fd < 0) {
                safe_close(fd);
                recv_land_refused(x, "reading the file", reply);
                return;
        }
        x->pull_fd = fd;
        x->cur->req.done = recv_pull_on_stat;
        if (io_statx(x->env->io, &x->cur->req, fd, empty, AT_EMPTY_PATH, &x->stx) < 0) {
                x->pull_fd = -1;
                safe_close(fd);
                recv_fail(x, WIRE_E_INTERNAL, "looking at the file: cannot queue it");
                return;
        }
        xfer_io_start(&x->base, "looking at the file");
}

void recv_pull_open(struct recv_xfer *x)
{
        struct landmsg req = { .type = LANDMSG_OPEN_READ };

        req.op.session = x->land_session;
        recv_land_ask(x, &req, -1, recv_pull_on_open, "opening the file as its user");
}

bool recv_pull_waiting(const struct recv_xfer *x)
{
        return x->pull != NULL;
}

void recv_pull_detach(struct recv_xfer *x)
{
        struct recv_pull *p = x->pull;

        if (!p)
                return;
        x->pull = NULL;
        p->x = NULL;
        /* Its done callback frees it, from the loop. */
        send_cancel(p->down);
}

void recv_pull_progress(struct recv_env *e, uint64_t id, const struct sockaddr *from, uint64_t *bytes,
                        uint64_t *total)
{
        struct wire_hop want, got;

        if (wire_hop_set(&want, from) < 0)
                return;
        for (struct xfer *b = e->xe->xfers[XFER_RECV]; b; b = b->next) {
                struct recv_xfer *x = recv_xfer_of(b);

                if (!x->cur || x->cur->offer.transfer_id != id || !x->landing || !b->lane[0] ||
                    wire_hop_set(&got, rdma_get_peer_addr(b->lane[0]->conn.id)) < 0 ||
                    memcmp(got.addr, want.addr, WIRE_ADDR_SIZE) != 0)
                        continue;
                *bytes = b->bytes;
                *total = x->job_bytes;
                return;
        }
}
