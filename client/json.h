#pragma once

/*
 * The little JSON xferctl prints with --json: one object per job. Written by
 * hand because it is a handful of fields. Strings are escaped per RFC 8259
 * ("\"", "\\", "\b\f\n\r\t", other C0 as "\u00NN"); DEL, C1 and the bidi
 * and format characters of esc_cp_unsafe() are "\uNNNN" too, so the output
 * is safe to show on a terminal and decodes to the same text. Each byte that
 * is not part of valid UTF-8 becomes "\ufffd" (U+FFFD), so the output is
 * always valid UTF-8 and always parses.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"

/* @s as a JSON string literal, quotes included. */
void json_string(FILE *f, const char *s);
/* A time, microseconds since the epoch, as an RFC 3339 string in UTC to
 * the millisecond ("2026-12-05T19:52:53.123Z"); 0: null. */
void json_time(FILE *f, uint64_t usec);

/*
 * xferctl send --json has one shape whatever the mode (one peer, a star,
 * a relay chain; --no-wait): {"peers":[P,...]}, each P
 * {"peer":"node01","exit":0,"job":{...}}, peer as given, exit the status
 * xferctl would give for that peer alone, job json_job's (null when there
 * is none). json_peer_open() writes {"peers":[{"peer":...,"exit":N,"job":
 * and json_peer_close() the "}]}" after the job, for a send to one peer.
 */
void json_peer_open(FILE *f, const char *peer, int exit_status);
void json_peer_close(FILE *f);

/*
 * One job as an object, no trailing newline:
 * {"id":3,"state":"done","status":0,"status_text":"ok","bytes":1073741824,
 *  "bytes_total":1073741824,"usec":20400000,"mbps":52.6,"attempt":1,
 *  "attempts":6,"retry_usec":0,"files":1,"files_total":1,"files_skipped":0,
 *  "peer":"198.18.0.2:7470","created":"2026-12-05T19:52:53.123Z",
 *  "started":"2026-12-05T19:52:53.125Z","ended":"2026-12-05T19:53:13.530Z",
 *  "name":"foo.dat","text":""}
 * (created, started, ended: RFC 3339 in UTC; null until it happened.)
 * ("retry_usec": while "retrying", the next attempt starts in that long.)
 * A relay chain's (nodes > 0) has ten more, as ctl_job has them:
 * "nodes", "nodes_ok", "node_failed", "node_status", "node_status_text",
 * "node_peer", "node_text", "nodes_missing" (the nodes that did not
 * publish, an array of their numbers, 1 the peer: [3,4]), "route" and
 * "node_bytes" (each node's bytes so far, in node order: [1048576,524288]).
 */
void json_job(FILE *f, const struct ctl_job *job);

/* What became of one file of a job of several (json_job_files). */
struct json_file {
        const char *path;       /* as given to xferctl */
        const char *name;       /* the name it was offered under; NULL: left out */
        uint64_t size;
        int err;                /* left out: the errno of opening it */
};

/*
 * A finished job of several files (not a tree: that one is published
 * whole or not at all) as json_job's object with one more key,
 * "file_results": an array, one object per FILE in the order given, e.g.
 * {"path":"x/a.dat","name":"a.dat","size":12,"result":"published"}.
 * "result" is "published" for the job's first files_done (sent, or kept
 * by the receiver with --sync or --skip-existing), "failed" (with
 * "text", the job's) for the one a failed or cancelled job stopped at,
 * "not sent" for the rest, and "left out" (with "text", why) for one
 * --continue-on-error left out.
 */
void json_job_files(FILE *f, const struct ctl_job *job, const struct json_file *files, size_t n);

/*
 * The daemon's counters as one object, no trailing newline (keys in
 * xferctl(1), stats):
 * {"uptime_usec":N,
 *  "recv":{"bytes":N,"files":N,"failed":{"exists":1},"failed_total":1,
 *          "rate":N,"mbps":0.0,"active":N},
 *  "send":{... the same ...,"queued":N},
 *  "ring":{"recv":{"held":N,"slots":N},"send":{"held":N,"slots":N}}}
 */
void json_stats(FILE *f, const struct ctl_stats *s);
