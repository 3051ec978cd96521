/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "glue_child.h"

int
glue_in_child(void (*fn)(void *out, const void *arg), const void *arg, void *out, size_t size,
	      unsigned int seconds)
{
	int pfd[2], status = 0, rc = 0;
	ssize_t got;
	pid_t pid;

	memset(out, 0, size);
	if (pipe(pfd) != 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return rc;
	}
	if (pid == 0) {
		close(pfd[0]);
		alarm(seconds);
		fn(out, arg);
		_exit(write(pfd[1], out, size) == (ssize_t)size ? 0 : 3);
	}
	close(pfd[1]);
	got = read(pfd[0], out, size);
	close(pfd[0]);
	if (got != (ssize_t)size)
		rc = -EPIPE;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		rc = rc != 0 ? rc : -ECHILD;
	return rc;
}

int
glue_child_status(int (*fn)(void), unsigned int seconds)
{
	struct rlimit no_core = { 0, 0 };
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		setrlimit(RLIMIT_CORE, &no_core); /* no core file in the build directory */
		alarm(seconds);
		_exit(fn());
	}
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return status;
}
