/* SPDX-License-Identifier: BSD-3-Clause */
/* The EAL command line from a runtime configuration. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "droce_rt_afpacket.h"
#include "droce_rt_config.h"

bool
droce_rt_config_eal_has(const struct droce_rt_config *cfg, const char *opt)
{
	size_t n = strlen(opt);
	const char *s = cfg->eal;

	while (*s != '\0') {
		while (isspace((unsigned char)*s))
			s++;
		/* short options also match glued ("-l0,1") */
		if (strncmp(s, opt, n) == 0 &&
		    (s[n] == '\0' || s[n] == '=' || isspace((unsigned char)s[n]) ||
		     (n == 2 && opt[1] != '-')))
			return true;
		while (*s != '\0' && !isspace((unsigned char)*s))
			s++;
	}
	return false;
}

/* Append one word to buf/argv. */
static int
push(char **pos, char *end, char **argv, int *argc, int argv_max, const char *w, size_t n)
{
	if (*argc + 1 >= argv_max || (size_t)(end - *pos) < n + 1)
		return -E2BIG;
	memcpy(*pos, w, n);
	(*pos)[n] = '\0';
	argv[(*argc)++] = *pos;
	argv[*argc] = NULL;
	*pos += n + 1;
	return 0;
}

int
droce_rt_config_eal_argv(const struct droce_rt_config *cfg, const char *argv0, char *buf,
			 size_t buflen, char **argv, int argv_max)
{
	char *pos = buf, *end = buf + buflen, word[DROCE_RT_STR_MAX + 64];
	char vdev[DROCE_RT_STR_MAX + 48];
	const char *s = cfg->eal, *w;
	int argc = 0, rc;
	unsigned int i;
	size_t n;

	if (argv_max < 2)
		return -E2BIG;
	rc = push(&pos, end, argv, &argc, argv_max, argv0, strlen(argv0));
	while (rc == 0 && *s != '\0') {
		while (isspace((unsigned char)*s))
			s++;
		w = s;
		while (*s != '\0' && !isspace((unsigned char)*s))
			s++;
		if (s > w)
			rc = push(&pos, end, argv, &argc, argv_max, w, (size_t)(s - w));
	}
	if (rc == 0 && cfg->vdev[0] != '\0') {
		/* af_packet's ring slot sized for the MTU (droce_rt_afpacket.h) */
		rc = droce_rt_afp_vdev(cfg, vdev, sizeof(vdev));
		if (rc != 0)
			return rc;
		n = (size_t)snprintf(word, sizeof(word), "--vdev=%s", vdev);
		rc = push(&pos, end, argv, &argc, argv_max, word, n);
	}
	if (rc == 0 && !droce_rt_config_eal_has(cfg, "-l") && !droce_rt_config_eal_has(cfg, "-c") &&
	    !droce_rt_config_eal_has(cfg, "--lcores")) {
		n = (size_t)snprintf(word, sizeof(word), "-l");
		for (i = 0; i < cfg->nb_lcores; i++)
			n += (size_t)snprintf(word + n, sizeof(word) - n, "%s%u", i ? "," : "",
					      cfg->lcores[i]);
		rc = push(&pos, end, argv, &argc, argv_max, word, n);
	}
	if (rc == 0 && !droce_rt_config_eal_has(cfg, "--file-prefix") &&
	    !droce_rt_config_eal_has(cfg, "--in-memory")) {
		/* --in-memory leaves no runtime files but is refused with --no-huge. */
		if (droce_rt_config_eal_has(cfg, "--no-huge"))
			n = (size_t)snprintf(word, sizeof(word), "--file-prefix=droce%ld",
					     (long)getpid());
		else
			n = (size_t)snprintf(word, sizeof(word), "--in-memory");
		rc = push(&pos, end, argv, &argc, argv_max, word, n);
	}
	return rc != 0 ? rc : argc;
}
