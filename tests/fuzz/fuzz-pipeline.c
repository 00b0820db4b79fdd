// SPDX-License-Identifier: MIT
// Fuzz target: the whole CPU pipeline on small images with a random chain. The input is
// three bytes of geometry (w = 1 + b0 % 32, h = 1 + b1 % 32, ch = 1 + b2 % 4, and the Exif
// orientation the input file would have given, b2 / 4 % 9: 0 none, 1-8), then the
// chain as text, one stage token per line (at most 16), then a NUL byte and the pixels
// (repeated to fill the image; zeros if none). A chain that parses and plans must run, give
// the planned geometry, and give the same bytes when run twice. (Images up to 32x32: a
// gauss of sigma 289 on 62x56 took 10 s under the sanitizers, a libFuzzer timeout that was
// only slowness.)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/err.h"
#include "../../src/pipeline.h"
#include "fuzz.h"

#define MAX_TOKENS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = NULL, *tokens[MAX_TOKENS];
	struct img in = {0}, out = {0}, again = {0};
	const uint8_t *px;
	size_t text_len, npx;
	struct chain c;
	struct plan p;
	int n = 0, orient;

	if (size < 3)
		return 0;
	in.w = 1 + data[0] % 32;
	in.h = 1 + data[1] % 32;
	in.ch = 1 + data[2] % 4;
	orient = data[2] / 4 % 9;
	data += 3;
	size -= 3;
	px = memchr(data, '\0', size);
	text_len = px ? (size_t)(px - data) : size;
	npx = px ? size - text_len - 1 : 0;
	px = px ? px + 1 : NULL;
	text = malloc(text_len + 1);
	in.data = malloc(img_bytes(&in));
	if (!text || !in.data)
		goto done;
	memcpy(text, data, text_len);
	text[text_len] = '\0';
	for (size_t i = 0; i < img_bytes(&in); i++)
		in.data[i] = npx ? px[i % npx] : 0;
	n = fuzz_split_lines(text, tokens, MAX_TOKENS);
	if (chain_parse(&c, n, tokens) < 0)
		goto done;
	if (plan_make(&p, &c, &(struct geom){in.w, in.h, in.ch, orient}, 1 << 16) == 0) {
		FUZZ_ASSERT(pipeline_cpu(&p, &in, NULL, &out, NULL) == 0);
		FUZZ_ASSERT(out.w == p.out.w && out.h == p.out.h && out.ch == p.out.ch);
		FUZZ_ASSERT(pipeline_cpu(&p, &in, NULL, &again, NULL) == 0);
		FUZZ_ASSERT(!memcmp(out.data, again.data, img_bytes(&out)));
		plan_free(&p);
	}
	chain_free(&c);
done:
	free(text);
	free(in.data);
	free(out.data);
	free(again.data);
	return 0;
}
