// SPDX-License-Identifier: MIT
// The check macro of the C test programs (tests/unit.c, tests/codec.c): one "PASS name" or
// "FAIL name: ..." line per check, which tests/run.sh counts. Include once per program.
#ifndef CLIMG_TESTS_CHECK_H
#define CLIMG_TESTS_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(name, cond)                                                               \
	do {                                                                            \
		if (cond) {                                                             \
			printf("PASS %s\n", name);                                       \
		} else {                                                                \
			printf("FAIL %s: %s (line %d)\n", name, #cond, __LINE__);        \
			failures++;                                                     \
		}                                                                       \
	} while (0)

#endif
