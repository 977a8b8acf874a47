#pragma once

/*
 * The receive layer: the receiving side of a transfer (xfer.h), on the
 * send layer below it (a relay sends on). This header is what the
 * engine's composition needs: the layer's configuration and context, and
 * the two ways in (a connection request, an abort); the files of recv/
 * share recv-int.h (the transfer, the data path, the session), and
 * recv-publish.h (the incoming directory) and recv-partial.h (partials
 * and kept trees) by responsibility.
 */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <rdma/rdma_cma.h>

#include "acl.h"
#include "device.h"
#include "incoming.h"
#include "io.h"
#include "name.h"
#include "partials.h"
#include "entlist.h"
#include "partial.h"
#include "rehash.h"
#include "send.h"
#include "stats.h"
#include "wire.h"
#include "xfer.h"

struct auth_key;
struct partials_sweep;
struct relay;

/* The receive layer's part of the configuration, a copy the owner
 * replaces whole on a reload; a worker never reads it (a request takes
 * what it needs with it). */
struct recv_cfg {
        struct acl allow_peers;
        struct acl relay_peers;         /* where a relay may pass it on (config_relay_peers) */
        int relay;                      /* pass a chain's file on (enum config_relay) */
        bool overwrite;
        int tree_symlinks;              /* enum config_symlinks */
        bool tree_delete;               /* a synced tree may remove what its source lacks */
        int names;                      /* enum name_rules (config names) */
        int log_level;                  /* enum config_log_level */
        uint32_t max_transfers;
        uint32_t per_host;              /* admitted from one host at once (config_per_host) */
        uint32_t max_job_files;
        uint64_t max_file_size, max_job_bytes, min_free;        /* 0: none */
        uint64_t partial_max_bytes;
        uint32_t partial_retention;     /* s */
        char partial_dir[PATH_MAX];     /* for messages: opened at start (partials_open) */
        bool user_landing;              /* landing_roots set: users' files may land (recv-land.c) */
        char lander_socket[108];        /* rdmaxfer-lander's (config lander_socket) */
};

/*
 * The receive layer's context: what receiving needs beside the transfer
 * layer's (xe), and what a relay needs to send on (send). The owner (the
 * engine) fills it, and keeps its flags (stopping, freeing, incoming_clean)
 * up to date.
 */
/* Users' files kept at once for a next attempt, and for how long at most. */
#define RECV_LAND_KEPT_MAX      16
#define RECV_LAND_KEPT_SEC      3600u

struct recv_env {
        struct xfer_env *xe;
        struct send_env *send;
        struct event_base *base;        /* xe's */
        struct io *io;                  /* xe's */
        struct device *dev;             /* the rails (dev[0] the node's address): the ring's keys */
        unsigned int ndev;
        unsigned int ring_idx;
        struct ring *ring;              /* xe's receive ring */
        uint8_t *ring_mem;              /* its slots, slot_size bytes each */
        uint32_t slot_size;
        const struct auth_key *key;
        struct recv_cfg cfg;
        int incoming_fd;                /* O_DIRECTORY of incoming_dir */
        mode_t umask;                   /* the process's; 07777 if unknown */
        bool incoming_clean;            /* the start-up sweep of incoming_dir is done */
        bool xattr_said;                /* "no user xattrs there", once (recv-file.c) */
        int partial_fd;                 /* O_DIRECTORY of partial_dir; -1: resuming off */
        uint8_t key_id[PARTIAL_KEY_ID_SIZE];    /* partial_key_id() of our key */
        uint8_t boot_id[PARTIAL_BOOT_SIZE];     /* the host's, for a kept tree's record */
        struct partials_sweep *sweep;
        struct relay *relays;           /* downstreams of relay chains (relay.h) */
        struct landc *landc;            /* rdmaxfer-lander, once a landing needed it (recv-land.c) */
        /* Users' files kept for their job's next attempt: nameless, held
         * open here (recv-partial.c, a user's file); key "" unused. */
        struct recv_land_kept {
                char key[PARTIAL_KEY_HEX];      /* partial_key() of the transfer's identity */
                uint32_t uid;
                bool parent;                    /* landed as PATH itself (land_parent) */
                char *path;                     /* the landing's PATH */
                struct partial_rec rec;
                int fd;
                uint64_t expires;               /* usec, CLOCK_MONOTONIC */
        } land_kept[RECV_LAND_KEPT_MAX];
        struct event *land_kept_timer;
        struct stats_tally recv_tally;  /* incoming transfers that offered */
        bool stopping, freeing;
};

/* recv-partial.c: at the end, every user's file kept for a retry let go. */
void recv_land_kept_free_all(struct recv_env *e);
/* recv-accept.c: a CONNECT_REQUEST on the listener of rail @rail. */
void recv_on_connect_request(struct recv_env *e, struct device *rail, struct rdma_cm_id *id,
                             const void *pdata, size_t plen);
/* Fail a transfer (the receiver says so on the wire). */
void recv_abort(struct xfer *x, unsigned int status, const char *text);
/* A pull's file coming back (recv-pull.c): the incoming transfer of
 * transfer id @id from @from's address, its bytes so far and its size
 * into *@bytes and *@total; both left alone when there is none. */
void recv_pull_progress(struct recv_env *e, uint64_t id, const struct sockaddr *from, uint64_t *bytes,
                        uint64_t *total);
