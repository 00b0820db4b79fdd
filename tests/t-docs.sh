# SPDX-License-Identifier: MIT
# README, man page, --help and the binary agree.

if have_groff "the man-page check"; then
	check "man page formats without warnings" sh -c "groff -man -ww -z man/climg.1 2>&1 | grep -q . && exit 1 || exit 0"
fi
"$CLIMG" --help >"$T/help.txt"
"$CLIMG" --list-stages | awk '/^[^ ]/ {print $1}' | sed 's/[:[].*//' >"$T/stages.txt"
check "there are stages" test -s "$T/stages.txt"
while read -r s; do
	check "man page documents stage $s" grep -q "^\.B[IR]* *$s\b" man/climg.1
	check "README documents stage $s" grep -q "^| \`$s" README.md
	check "--help documents stage $s" grep -q "^  $s" "$T/help.txt"
done <"$T/stages.txt"
# The same syntax everywhere: each stage's usage (from its source file, as --list-stages
# prints it) and each option's as --help gives them ("-o, --output FILE") appear as such in
# the man page (a tag at the start of a line of the formatted page) and in the README (in
# backquotes, '|' escaped as in its tables).
# docs_man_has NAME FILE SYNTAX: FILE has a line that is SYNTAX indented 7, alone or followed
# by a blank (the formatted man page's tags). docs_readme_has NAME SYNTAX: README.md has
# `SYNTAX`.
docs_man_has() {
	check "$1" awk -v want="$3" 'substr($0, 1, 7) == "       " {
		rest = substr($0, 8)
		if (rest == want || index(rest, want " ") == 1) found = 1
	} END { exit !found }' "$2"
}
docs_readme_has() {
	check "$1" grep -Fq -- "\`$(printf '%s' "$2" | sed 's/|/\\|/g')\`" README.md
}
"$CLIMG" --list-stages | awk '/^[^ ]/ {print $1}' >"$T/usages.txt"
if have_groff "the man page's syntax check"; then
	groff -man -Tascii -P-cbou man/climg.1 2>/dev/null >"$T/man.txt"
	while read -r u; do
		docs_man_has "man page gives the syntax $u" "$T/man.txt" "$u"
	done <"$T/usages.txt"
fi
while read -r u; do
	docs_readme_has "README gives the syntax $u" "$u"
	check "--help gives the syntax $u" sh -c 'grep -Fxq -- "$1" "$2" || grep -Fq -- "$1 " "$2"' \
		sh "  $u" "$T/help.txt"
done <"$T/usages.txt"
# the options' tags: "  -o, --output FILE      text" or "      --cpu" up to the text
sed -n 's/^  \(-[a-z0-9], \|    \)\(--[a-z][^ ]*\( [A-Z][A-Z0-9,|%/]*\)\{0,1\}\).*/\1\2/p' "$T/help.txt" |
	sed 's/^    //' >"$T/opt-tags.txt"
check "--help gives the options' syntax" test "$(wc -l <"$T/opt-tags.txt")" -gt 30
while read -r o; do
	[ -f "$T/man.txt" ] && docs_man_has "man page gives the syntax $o" "$T/man.txt" "$o"
	docs_readme_has "README gives the syntax $o" "$o"
done <"$T/opt-tags.txt"
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
# The README's set-up line ends with a demo run (after `make &&`): it runs (here on the CPU
# path, the image written into $T) and then says where its output went.
docs_demo=$(sed -n 's/^    sh tools\/install-deps\.sh && make && \(\.\/climg .*\)$/\1/p' README.md)
docs_out=$(printf '%s' "$docs_demo" | sed -n 's/^.* -o \([^ ]*\) .*$/\1/p')
check "README's set-up line ends with a demo run that writes a file" test -n "$docs_out"
docs_cmd=$(printf '%s' "$docs_demo" | sed "s|^\\./climg|'$CLIMG' --cpu|; s|$docs_out|$T/demo.png|g")
expect_exit 0 "the set-up's demo runs" sh -c "$docs_cmd"
check "the demo wrote its image" test -s "$T/demo.png"
check "the demo then says where it went" grep -q "wrote $T/demo\\.png" "$T/out"
