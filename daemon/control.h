#pragma once

/*
 * The local control socket (AF_UNIX SOCK_SEQPACKET, see ctl.h): taken from
 * rdmaxferd.socket when socket-activated, else bound at cfg.control_socket
 * with mode 0660. Serves xferctl: SUBMIT, STATUS, WATCH, LIST, CANCEL.
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
