#pragma once

/*
 * The partial directory (cfg partial_dir; common/partial.h has the record):
 * where a receiver keeps what it got of an interrupted transfer. Opened at
 * start, when it is on incoming_dir's file system (a partial is linked,
 * never copied) and outside incoming_dir; else resuming is off, said once.
 * Every access after start is a worker call (io_call): the directory may
 * be slow like any other.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <event2/event.h>

#include "partial.h"

struct recv_env;

/* One operation on one partial, for a worker: filled on the loop, read
 * back on the loop after the call. */
struct partial_job {
        int dirfd;
        char key[PARTIAL_KEY_HEX];
        struct partial_rec rec;         /* store: what to write; lookup: what was found */
        /* lookup */
        struct partial_offer offer;
        enum partial_match match;
        int data_fd;                    /* found: KEY.data, O_RDWR; -1 */
        const char *why;                /* found nothing usable: why, or NULL */
        /* store */
        const char *link_from;          /* link this path to KEY.data first, or NULL */
        bool unlink_data;               /* and/or remove KEY.data (published) */
        int punch_fd;                   /* the data: free what no lane kept (a last checkpoint), or -1 */
        /* A kept tree (PARTIAL_TREE): lookup opens KEY.tree as data_fd (a
         * directory; recv-partial-tree.c makes it), a record from another boot
         * than @boot_id is not trusted; store writes without fsync when
         * @nosync (rdmaxferd(8), Resuming a tree). */
        uint8_t boot_id[PARTIAL_BOOT_SIZE];
        bool nosync;
        /* lookup, a published tree (PARTIAL_TREE | PARTIAL_PUBLISHED):
         * the incoming directory, beneath which its DEST must still be the
         * directory it published, or the record goes. */
        int dest_dirfd;
};

#define PARTIAL_JOB_NULL \
        ((struct partial_job){ .dirfd = -1, .data_fd = -1, .punch_fd = -1, .dest_dirfd = -1 })

/* Lookup results (partials_lookup's return). */
enum {
        PARTIALS_NONE = 0,
        PARTIALS_RESUME = 1,            /* rec, data_fd */
        PARTIALS_PUBLISHED = 2,         /* rec: this transfer (a tree: this job) was published */
        /* A chain's record (no peer in its key) of another transfer: left
         * alone until it expires, and this transfer is not kept (why). */
        PARTIALS_HELD = 3,
};

/* io_call_fn: the record under @key and, when it matches @offer, its data. */
int64_t partials_lookup(void *job);
/* io_call_fn: (link, unlink) then write the record atomically. 0 or -errno. */
int64_t partials_store(void *job);
/* io_call_fn: remove KEY.rec, then KEY.data or KEY.tree. 0 or -errno. */
int64_t partials_remove(void *job);

/* At start: open cfg.partial_dir (on the file system of @incoming_dir,
 * not beneath it) and sweep it once; 0 (resuming may be off), or -errno. */
int partials_open(struct recv_env *e, const char *incoming_dir);
/* engine_free(), after io_free(): @keep, a request never came back. */
void partials_close(struct recv_env *e, bool keep);
/* Whether a transfer of @size may be kept at all. */
bool partials_on(const struct recv_env *e, uint64_t size);
/* Sweep now, off the loop (after a partial was made; the timer does it too). */
void partials_sweep(struct recv_env *e);
/* rdmaxferd --list-partials: one line to @out per record in @dir
 * (rdmaxferd(8), Resuming). 0, or -errno when @dir cannot be read. */
int partials_print(const char *dir, FILE *out);
