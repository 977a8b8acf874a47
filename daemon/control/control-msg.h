#pragma once

/*
 * Between the control protocol (ctl.h) and the job table's model
 * (jobs.h), in both directions, at control's edge: a SUBMIT's and a FILE's
 * wire form (flags, the route's text) into what jobs takes, a job and the
 * daemon's counters into what a client reads. No I/O.
 */

#include <stddef.h>
#include <sys/types.h>

#include "ctl.h"
#include "jobs.h"
#include "wire.h"

struct stats_snapshot;

/* A job's state as the protocol numbers it. */
enum ctl_job_state control_job_state(enum job_state state);

/* @job as a JOB message, its numbers as they stand (job_refresh() is the caller's). */
void control_job_msg(struct ctl_msg *m, const struct job *job);

/* A SUBMIT as a job: the spec and its route's hops, one allocation. */
struct control_spec {
        struct job_spec spec;
        struct wire_landing land;       /* spec.land, when the files land as their user */
        char rules[CTL_RULES_MAX + 1];  /* spec.rules, a deleting tree's (NUL-terminated) */
        struct job_hop hops[];          /* spec.route: spec.route_hops of them */
};

/*
 * @s from @uid as a job (freed with free()), its wire form checked: the
 * flags (known, one sync at most) and the route's text. 0, or -EINVAL
 * (-E2BIG: more hops than a chain has; -ENOMEM) with why in @why. What the
 * job is asked to do is the job table's to check (jobs_spec_check()).
 */
int control_spec_new(const struct ctl_submit *s, uid_t uid, struct control_spec **out, char *why, size_t whylen);

/* @f as the file it hands a job (@out->name points into @f): -EINVAL for
 * flags it does not know, or a directory that would be a symlink too. */
int control_file_spec(const struct ctl_file *f, struct job_file_spec *out);

/* A dry run's item @seq (< job->n_items) of @job as an ITEM. */
void control_item_msg(struct ctl_msg *m, const struct job *job, uint32_t seq);

/* The daemon's counters as a STATS_INFO: -E2BIG when some failure
 * reasons did not fit (the rest is in). */
int control_stats_msg(struct ctl_msg *m, const struct stats_snapshot *s);
