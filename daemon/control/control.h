#pragma once

/*
 * The local control socket (AF_UNIX SOCK_SEQPACKET, see ctl.h): taken from
 * rdmaxferd.socket when socket-activated, else bound at cfg.control_socket
 * with mode 0660. Serves xferctl: SUBMIT, STATUS, WATCH, LIST, CANCEL,
 * STATS (aggregate counters, for every user of the socket).
 *
 * Per uid: cfg.max_clients_per_user connections (then a refusal that says
 * so), cfg.max_queued_per_user queued jobs, cfg.client_idle_timeout; each
 * user sees only its own jobs unless root or in cfg.admin_group. The
 * limits and the timeout are read from d->cfg when used, so a reload
 * applies them at once.
 */

struct control;
struct daemon;

#define CONTROL_CONN_MAX        64

/* Listen and start serving on d->base. 0 or -errno (cause logged). */
int control_new(struct control **out, struct daemon *d);
/* Closes every client connection (their jobs go on) and the socket. */
void control_free(struct control *c);
/* Shutdown: SUBMIT is answered -ESHUTDOWN; queries and watches still work. */
void control_stop_accepting(struct control *c);
/* After a reload replaced d->cfg: look admin_group up again (for new connections). */
void control_reconfigure(struct control *c);
