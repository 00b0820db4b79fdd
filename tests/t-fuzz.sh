# SPDX-License-Identifier: MIT
# Replays the saved fuzz inputs: every file in tests/fuzz/regress/TARGET/ (crashes the
# fuzzers found, kept after the fix, and inputs worth keeping) through that target's
# LLVMFuzzerTestOneInput, built without libFuzzer (tests/fuzz/replay.c). A crash, a
# sanitizer report (make check-asan) or a broken invariant fails the check. A target with
# no saved inputs is said to be skipped, so that its absence from the count is visible.
FUZZ_REPLAY=${FUZZ_REPLAY:-tests/fuzz}
for fz_t in chain decode pipeline; do
	fz_n=$(ls tests/fuzz/regress/$fz_t 2>/dev/null | wc -l)
	if [ "$fz_n" -eq 0 ]; then
		echo "skipping fuzz replay: $fz_t: no saved inputs in tests/fuzz/regress/$fz_t/"
		continue
	fi
	if "$FUZZ_REPLAY/replay-$fz_t" tests/fuzz/regress/$fz_t/* >"$T/fuzz.out" 2>&1 &&
		[ "$(grep -c '^ran ' "$T/fuzz.out")" = "$fz_n" ]; then ok; else
		bad "fuzz replay: $fz_t ($fz_n inputs)"
		tail -n 5 "$T/fuzz.out" | sed 's/^/    | /'
	fi
done
