// SPDX-License-Identifier: MIT
// Fuzz target: the stage-chain parser and planner. The input is "W H CH" in its first 5
// bytes (two 16-bit sides, one channel byte) then the stage tokens, one per line, as argv
// would hold them. chain_parse and chain_plan must either succeed with a chain whose every
// image is within the limits, or fail with a one-line message; never crash or leak.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/err.h"
#include "../../src/pipeline.h"
#include "fuzz.h"

#define MAX_TOKENS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *tokens[MAX_TOKENS];
	struct chain c;
	struct plan p;
	const uint64_t max_pixels = (uint64_t)1 << 28;
	struct geom g;
	int n = 0;

	if (size < 5)
		return 0;
	g.w = data[0] | data[1] << 8;
	g.h = data[2] | data[3] << 8;
	g.ch = data[4] % 6; // 0 and 5 are out of range on purpose
	text = malloc(size - 5 + 1);
	if (!text)
		return 0;
	memcpy(text, data + 5, size - 5);
	text[size - 5] = '\0';
	n = fuzz_split_lines(text, tokens, MAX_TOKENS);
	if (chain_parse(&c, n, tokens) < 0) {
		FUZZ_ASSERT(*err_msg() && !strchr(err_msg(), '\n'));
		free(text);
		return 0;
	}
	if (plan_make(&p, &c, &g, max_pixels) == 0) {
		FUZZ_ASSERT(p.out.w >= 1 && p.out.w <= IMG_MAX_SIDE);
		FUZZ_ASSERT(p.out.h >= 1 && p.out.h <= IMG_MAX_SIDE);
		FUZZ_ASSERT(p.out.ch >= 1 && p.out.ch <= 4);
		FUZZ_ASSERT((uint64_t)p.out.w * (uint64_t)p.out.h <= max_pixels);
		FUZZ_ASSERT(p.max_bytes >= geom_bytes(&p.out) && p.max_bytes >= geom_bytes(&g));
		plan_free(&p);
	} else {
		FUZZ_ASSERT(*err_msg() && !strchr(err_msg(), '\n'));
	}
	chain_free(&c);
	free(text);
	return 0;
}
