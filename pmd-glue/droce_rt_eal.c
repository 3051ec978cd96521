/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EAL initialisation with one-line errors: EAL's own output (getopt complaints, the usage text,
 * log lines) is captured while it starts; on failure the first meaningful captured line becomes
 * the reason, on success the captured warnings are passed on to stderr.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "droce_rt_err.h"
#include "droce_rt_check.h"
#include "droce_rt_guard.h"
#include "droce_rt_port.h"

struct capture {
	int fd;	      /* memfd holding what EAL printed */
	int saved[2]; /* stdout, stderr */
	FILE *log;
};

static int
capture_start(struct capture *c)
{
	c->fd = memfd_create("droce_eal", 0);
	if (c->fd < 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	c->saved[0] = dup(STDOUT_FILENO);
	c->saved[1] = dup(STDERR_FILENO);
	c->log = fdopen(dup(c->fd), "w");
	if (c->saved[0] < 0 || c->saved[1] < 0 || c->log == NULL) {
		close(c->fd);
		return -1;
	}
	setvbuf(c->log, NULL, _IONBF, 0);
	dup2(c->fd, STDOUT_FILENO);
	dup2(c->fd, STDERR_FILENO);
	rte_openlog_stream(c->log);
	return 0;
}

/* Restore stdout/stderr; return what was captured (NUL-terminated, truncated to len). */
static void
capture_stop(struct capture *c, char *text, size_t len)
{
	ssize_t n;

	fflush(stdout);
	fflush(stderr);
	rte_openlog_stream(NULL);
	dup2(c->saved[0], STDOUT_FILENO);
	dup2(c->saved[1], STDERR_FILENO);
	close(c->saved[0]);
	close(c->saved[1]);
	fclose(c->log);
	n = pread(c->fd, text, len - 1, 0);
	text[n > 0 ? n : 0] = '\0';
	close(c->fd);
}

/* The first line that says what went wrong: not blank, not the usage text. */
static void
first_reason(const char *text, char *out, size_t len)
{
	const char *s = text, *e;
	size_t n;

	out[0] = '\0';
	while (*s != '\0') {
		e = strchr(s, '\n');
		n = e != NULL ? (size_t)(e - s) : strlen(s);
		if (n > 0 && strncmp(s, "Usage:", 6) != 0 && strncmp(s, "TELEMETRY:", 10) != 0) {
			if (n >= len)
				n = len - 1;
			memcpy(out, s, n);
			out[n] = '\0';
			return;
		}
		if (e == NULL || strncmp(s, "Usage:", 6) == 0)
			return;
		s = e + 1;
	}
}

/* Warnings the user should still see; telemetry's note about its legacy socket is not one. */
static void
pass_on(const char *text)
{
	const char *s = text, *e;
	size_t n;

	while (*s != '\0') {
		e = strchr(s, '\n');
		n = e != NULL ? (size_t)(e - s) + 1 : strlen(s);
		if (strncmp(s, "TELEMETRY: No legacy callbacks", 30) != 0)
			fwrite(s, 1, n, stderr);
		s += n;
	}
}

static void
remove_runtime_dir(const char *dir)
{
	char path[PATH_MAX + 256];
	struct dirent *de;
	DIR *d;

	d = opendir(dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* EAL leaves its runtime directory behind; the one of our generated prefix is ours alone. */
static bool
own_prefix(const struct droce_rt_config *cfg)
{
	return droce_rt_config_eal_has(cfg, "--no-huge") &&
	       !droce_rt_config_eal_has(cfg, "--file-prefix") &&
	       !droce_rt_config_eal_has(cfg, "--in-memory");
}

/* "--lcores=0@(0-1),1@(0-1),2@(0-1)": each configured lcore a thread free to run on any CPU. */
static const char *
float_lcores(const struct droce_rt_config *cfg, char *buf, size_t len)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t off;
	unsigned int i;

	if (ncpu < 1)
		ncpu = 1;
	off = (size_t)snprintf(buf, len, "--lcores=");
	for (i = 0; i < cfg->nb_lcores && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%u@(0-%ld)", i ? "," : "",
					cfg->lcores[i], ncpu - 1);
	return buf;
}

int
droce_rt_eal_init(const struct droce_rt_config *cfg, const char *argv0, char *err, size_t errlen)
{
	char buf[2048], *argv[DROCE_RT_EAL_ARGV_MAX], text[8192], why[160], dir[PATH_MAX];
	struct droce_rt_sys sys;
	struct capture cap;
	bool captured;
	int argc, rc, e;

	droce_rt_sys_default(&sys);
	rc = droce_rt_preflight(cfg, &sys, err, errlen);
	if (rc != 0)
		return rc;
	argc = droce_rt_config_eal_argv(cfg, argv0, buf, sizeof(buf), argv, DROCE_RT_EAL_ARGV_MAX);
	if (argc < 0)
		return droce_rt_errf(argc, err, errlen,
				     "EAL arguments too long: shorten DROCE_EAL");
	/* EAL's start-up notes are INFO; keep warnings. An explicit --log-level still wins. */
	rte_log_set_global_level(RTE_LOG_NOTICE);
	captured = capture_start(&cap) == 0;
	rc = rte_eal_init(argc, argv);
	e = rte_errno;
	text[0] = '\0';
	if (captured)
		capture_stop(&cap, text, sizeof(text));
	if (rc >= 0) {
		pass_on(text);
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	if (own_prefix(cfg) && dir[0] != '\0')
		remove_runtime_dir(dir);
	if (e == EALREADY)
		return droce_rt_errf(-EALREADY, err, errlen,
				     "EAL is already initialised in this process: "
				     "open one runtime per process");
	first_reason(text, why, sizeof(why));
	if (strstr(why, "lcore") != NULL && strstr(why, "unavailable") != NULL)
		return droce_rt_errf(-e, err, errlen,
				     "EAL initialisation failed: %s: more lcores than "
				     "CPUs? let them float over the CPUs: DROCE_EAL='%s %s'",
				     why, cfg->eal, float_lcores(cfg, buf, sizeof(buf)));
	return droce_rt_errf(-e, err, errlen, "EAL initialisation failed: %s: fix DROCE_EAL '%s'%s",
			     why[0] ? why : rte_strerror(e), cfg->eal,
			     e == EACCES ? " or run as root" : "");
}

void
droce_rt_eal_cleanup(const struct droce_rt_config *cfg)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	droce_rt_guard_eal_cleanup();
	if (own_prefix(cfg) && dir[0] != '\0')
		remove_runtime_dir(dir);
}
