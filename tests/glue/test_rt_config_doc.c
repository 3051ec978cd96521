/* SPDX-License-Identifier: BSD-3-Clause */
/* Every configuration key is documented in pmd-glue/README.md's key table, and droce-run's
 * --set accepts it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_rt_config.h"
#include "droce_test.h"

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* A key appears as a table cell: "| key |", or in a cell listing several ("a, b" or "a / b"). */
static int
documented(const char *doc, const char *key)
{
	char pat[6][64];
	int i;

	snprintf(pat[0], sizeof(pat[0]), "| %s |", key);
	snprintf(pat[1], sizeof(pat[1]), "| %s, ", key);
	snprintf(pat[2], sizeof(pat[2]), " %s, ", key);
	snprintf(pat[3], sizeof(pat[3]), "/ %s |", key);
	snprintf(pat[4], sizeof(pat[4]), "| %s / ", key);
	snprintf(pat[5], sizeof(pat[5]), ", %s |", key);
	for (i = 0; i < 6; i++)
		if (strstr(doc, pat[i]) != NULL)
			return 1;
	return 0;
}

static void
test_keys_documented(void)
{
	char *doc = slurp(GLUE_README);
	unsigned int i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_TRUE(droce_rt_config_nkeys() >= 30);
	for (i = 0; i < droce_rt_config_nkeys(); i++) {
		if (!documented(doc, droce_rt_config_key(i)))
			printf("undocumented key: %s\n", droce_rt_config_key(i));
		CU_ASSERT_TRUE(documented(doc, droce_rt_config_key(i)));
	}
	CU_ASSERT_PTR_NULL(droce_rt_config_key(droce_rt_config_nkeys()));
	free(doc);
}

/* droce-run --set checks keys against its own list: every runtime key must be on it. */
static void
test_droce_run_knows_keys(void)
{
	char *sh = slurp(DROCE_RUN_IN), *list, *end, pat[64];
	unsigned int i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sh);
	list = strstr(sh, "KEYS=\"");
	CU_ASSERT_PTR_NOT_NULL_FATAL(list);
	end = strchr(list + 6, '"');
	CU_ASSERT_PTR_NOT_NULL_FATAL(end);
	*end = '\0';
	for (i = 0; i < droce_rt_config_nkeys(); i++) {
		char *p;
		int found = 0;

		/* a whole word of the list: blank or newline on both sides */
		snprintf(pat, sizeof(pat), "%s", droce_rt_config_key(i));
		for (p = strstr(list, pat); p != NULL; p = strstr(p + 1, pat))
			if ((p[-1] == ' ' || p[-1] == '\n') &&
			    (p[strlen(pat)] == ' ' || p[strlen(pat)] == '\n'))
				found = 1;
		if (!found)
			printf("droce-run does not know key: %s\n", droce_rt_config_key(i));
		CU_ASSERT_TRUE(found);
	}
	free(sh);
}

DROCE_TEST_MAIN("rt_config_doc", DROCE_TEST(test_keys_documented),
		DROCE_TEST(test_droce_run_knows_keys))
