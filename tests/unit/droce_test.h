/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_TEST_H
#define DROCE_TEST_H

/*
 * One CUnit executable per module: a test file lists its cases with DROCE_TEST_MAIN and gets a
 * main() that runs them and exits non-zero on any failure (CU_basic_run_tests() alone returns 0
 * even when assertions fail).
 */
#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

struct droce_test_case {
	const char *name;
	void (*fn)(void);
};

#define DROCE_TEST(fn) \
	{ \
#fn, fn \
	}

static inline int
droce_test_run(const char *suite_name, const struct droce_test_case *cases, size_t n)
{
	CU_pSuite suite;
	unsigned int failures;
	size_t i;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	suite = CU_add_suite(suite_name, NULL, NULL);
	if (suite == NULL)
		return 2;
	for (i = 0; i < n; i++)
		if (CU_add_test(suite, cases[i].name, cases[i].fn) == NULL)
			return 2;
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failures != 0 ? 1 : 0;
}

#define DROCE_TEST_MAIN(suite_name, ...) \
	int main(void) \
	{ \
		static const struct droce_test_case cases[] = { __VA_ARGS__ }; \
		return droce_test_run(suite_name, cases, sizeof(cases) / sizeof(cases[0])); \
	}

#endif /* DROCE_TEST_H */
