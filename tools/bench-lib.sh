# SPDX-License-Identifier: MIT
# What the tools/bench-*.sh scripts share, sourced after `cd` to the top of the tree.
#   bench_built NAME FILE...  each FILE is built (executable), else NAME's message, exit 1
#   bench_scratch NAME        sets D: BENCH_DIR (created, kept), else a new directory under
#                             TMPDIR or /tmp, removed when the script exits

bench_built() {
	bench_name=$1
	shift
	for b in "$@"; do
		[ -x "$b" ] || {
			echo "$bench_name: $b is not built (run 'make climg tests/imgtool')" >&2
			exit 1
		}
	done
}

bench_scratch() {
	if [ -n "${BENCH_DIR:-}" ]; then
		D=$BENCH_DIR
		mkdir -p "$D"
	else
		D=$(mktemp -d "${TMPDIR:-/tmp}/climg-$1.XXXXXX")
		trap 'rm -rf "$D"' EXIT
	fi
}
