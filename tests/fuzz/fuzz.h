// SPDX-License-Identifier: MIT
// The libFuzzer entry point every target in tests/fuzz/ defines. Built with clang's
// -fsanitize=fuzzer by `make fuzz`; tests/fuzz/replay.c gives the same targets a main()
// that runs saved inputs, so `make test` replays them with any compiler.
#ifndef CLIMG_FUZZ_H
#define CLIMG_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// A broken invariant: prints what and aborts, which libFuzzer reports as a crash.
#define FUZZ_ASSERT(cond)                                                               \
	do {                                                                            \
		if (!(cond)) {                                                          \
			fprintf(stderr, "fuzz: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                        \
		}                                                                       \
	} while (0)

// Splits text in place at its newlines into at most max tokens (the last keeps any lines
// beyond); returns how many, at least 1.
static inline int fuzz_split_lines(char *text, char **tokens, int max)
{
	int n = 0;
	for (char *p = text; n < max;) {
		char *nl = strchr(p, '\n');
		tokens[n++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	return n;
}

#endif
