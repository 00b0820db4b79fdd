// SPDX-License-Identifier: MIT
// A main() for a fuzz target without libFuzzer: runs LLVMFuzzerTestOneInput once on each
// file named on the command line, so saved crash inputs are replayed by `make test` with
// gcc (and under ASan by `make check-asan`). Prints one line per file; exits 0 when every
// input ran (a crash or a broken invariant aborts).
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf = NULL;
		size_t len = 0, cap = 0, n;

		if (!f) {
			fprintf(stderr, "replay: cannot open %s\n", argv[i]);
			return 2;
		}
		do {
			if (len == cap) {
				uint8_t *grown = realloc(buf, cap = cap ? cap * 2 : 4096);
				if (!grown) {
					fprintf(stderr, "replay: out of memory\n");
					return 2;
				}
				buf = grown;
			}
			n = fread(buf + len, 1, cap - len, f);
			len += n;
		} while (n > 0);
		if (ferror(f)) {
			fprintf(stderr, "replay: cannot read %s\n", argv[i]);
			return 2;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
		printf("ran %s\n", argv[i]);
	}
	return 0;
}
