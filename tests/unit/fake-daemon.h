#pragma once

/*
 * The control socket of a fake rdmaxferd for the CLI tests (fake-submit,
 * fake-settings): bound at @path (chmod'ed to @mode unless 0, so that
 * another user's xferctl may connect), each client in turn given to
 * @serve. Returns only on an error, said with @who: 1; 2 when @path does
 * not fit a socket's name.
 */

#include <sys/types.h>

int fake_daemon_run(const char *who, const char *path, mode_t mode, void (*serve)(int fd, void *arg), void *arg);
