# SPDX-License-Identifier: MIT
# README, man page, --help and the binary agree.

if have_groff "the man-page check"; then
	check "man page formats without warnings" sh -c "groff -man -ww -z man/climg.1 2>&1 | grep -q . && exit 1 || exit 0"
fi
"$CLIMG" --help >"$T/help.txt"
"$CLIMG" --list-stages | awk '{print $1}' | sed 's/[:[].*//' >"$T/stages.txt"
check "there are stages" test -s "$T/stages.txt"
while read -r s; do
	check "man page documents stage $s" grep -q "^\.B[IR]* *$s\b" man/climg.1
	check "README documents stage $s" grep -q "^| \`$s" README.md
	check "--help documents stage $s" grep -q "^  $s" "$T/help.txt"
done <"$T/stages.txt"
# every long option in --help is in the man page and the README, and works
grep -o -- '--[a-z][a-z-]*' "$T/help.txt" | sort -u >"$T/opts.txt"
while read -r o; do
	m=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
	check "man page documents $o" grep -q -- "$m" man/climg.1
	check "README documents $o" grep -q -- "$o" README.md
done <"$T/opts.txt"
check "README shows the test command" grep -q '^    make test$' README.md
check ".ci/run runs the README's test command" grep -q '^make test$' .ci/run
check "every source file has an SPDX line" sh -c '! for f in $(git ls-files "*.c" "*.h" "*.cl" "*.clh" "*.sh" Makefile .ci/run man/climg.1 2>/dev/null || find src kernels tests tools -name "*.[ch]" -o -name "*.cl" -o -name "*.clh" -o -name "*.sh"); do head -n 3 "$f" | grep -q SPDX-License-Identifier || echo "$f"; done | grep .'
# OpenCL C has no variadic macros: NVIDIA's compiler refuses them, PoCL's (which CI runs)
# takes them, so only this check stops one before a GPU does.
check_not "kernels define no variadic macro" grep -n '^#define [A-Za-z_0-9]*([^)]*[.][.][.])' kernels/*.cl kernels/*.clh
# The recipes of climg(1)'s "Many machines" are the ones tools/check-cluster.sh runs: each
# line of their .nf blocks, unescaped, appears in it as written.
sed -n '/^\.\\" check-cluster: begin/,/^\.\\" check-cluster: end/p' man/climg.1 |
	awk '/^\.nf/ { f = 1; next } /^\.fi/ { f = 0 } f' | sed -e 's/\\-/-/g' -e 's/\\e/\\/g' >"$T/recipes"
check "the man page has the recipes for many machines" test "$(wc -l <"$T/recipes")" -ge 9
while IFS= read -r line; do
	check "tools/check-cluster.sh runs the man page's recipe: $line" grep -qF -- "$line" tools/check-cluster.sh
done <"$T/recipes"
