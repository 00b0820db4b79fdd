# SPDX-License-Identifier: MIT
# The slips a newcomer makes, each answered with its exit status and a message that says what
# to do: no output, the input after the stages, near misses of stages, options and keywords
# ("did you mean"), an output that is a directory or in none, an image to a terminal, options
# given twice or to no effect, the --help pointer, one stage's help, the 80-column listings
# and --verify's line. Runs on the CPU path unless it says otherwise. Helpers and variables
# start with ms_.

ms_d=$T/messages # the inputs, and where outputs would go
ms_t=$T/messages-tmp # everything else
rm -rf "$ms_d" "$ms_t"
mkdir -p "$ms_d/dir" "$ms_t/ex"
"$IMGTOOL" make 64 48 3 grad "$ms_d/in.png"
"$IMGTOOL" make 64 48 3 smooth "$ms_d/in.jpg"
"$IMGTOOL" make 13 7 3 grad "$ms_d/b.png"

# ms_lines NAME N: stderr of the last expect_exit has exactly N lines.
ms_lines() {
	if [ "$(wc -l <"$T/err")" -eq "$2" ]; then ok; else
		bad "$1 (stderr has $(wc -l <"$T/err") lines, want $2)"
		sed 's/^/    | /' "$T/err" | head -n 5
	fi
}

# ms_nothing NAME: the last run wrote nothing to stdout and left no file behind in $ms_d.
ms_nothing() {
	check "$1: nothing on stdout" test ! -s "$T/out"
	check "$1: no file written" sh -c '! ls -A "$1" | grep -Ev "^(in\.png|in\.jpg|b\.png|dir|golden\.png)$"' \
		sh "$ms_d"
}

# ---- a chain that writes nothing ------------------------------------------------------------
expect_exit 2 "no -o" "$CLIMG" --cpu "$ms_d/in.png" grey
expect_stderr "no -o: says to give -o FILE or -o -" "^climg: no output given: give -o FILE .*-o - for standard output"
ms_lines "no -o: one line" 1
ms_nothing "no -o"
expect_exit 2 "no stage, no -o" "$CLIMG" --cpu "$ms_d/in.png"
expect_stderr "no stage, no -o: message" "^climg: no output given: give -o FILE"
expect_exit 2 "a batch without -o" "$CLIMG" --cpu "$ms_d/in.png" "$ms_d/b.png" grey
expect_stderr "a batch without -o: a template" "^climg: no output given: .*template such as -o 'out/%n\\.png'"
expect_exit 2 "a directory without -o" "$CLIMG" --cpu "$ms_d/dir" grey
expect_stderr "a directory without -o: a template" "template such as -o 'out/%n\\.png'"
printf '%s\n' "$ms_d/in.png" >"$ms_t/list"
expect_exit 2 "--files-from without -o" "$CLIMG" --cpu --files-from "$ms_t/list" grey
expect_stderr "--files-from without -o: a template" "template such as -o 'out/%n\\.png'"
ms_nothing "batches without -o"
# each of these is an output of its own
"$CLIMG" --cpu "$ms_d/in.png" grey -o "$ms_d/golden.png"
expect_exit 0 "--expect without -o runs" "$CLIMG" --cpu "$ms_d/in.png" grey --expect "$ms_d/golden.png"
expect_stderr "--expect: the comparison's line" "^same "
expect_exit 0 "--expect in a batch runs" "$CLIMG" --cpu "$ms_d/in.png" "$ms_d/in.png" grey \
	--expect "$ms_d/golden.png"
expect_exit 0 "a histogram without -o runs" "$CLIMG" --cpu "$ms_d/in.png" grey histogram
check "a histogram without -o: the CSV on stdout" grep -qx 'value,grey' "$T/out"
expect_exit 0 "--time without -o runs" "$CLIMG" --cpu "$ms_d/in.png" grey --time
expect_stderr "--time without -o: the times" "^climg: time: total"
expect_exit 0 "--report without -o runs" "$CLIMG" --cpu "$ms_d/in.png" "$ms_d/b.png" grey --report -
check "--report without -o: a line per input" test "$(grep -c '"status":"ok"' "$T/out")" = 2
expect_exit 0 "-o /dev/null runs" "$CLIMG" --cpu "$ms_d/in.png" grey -o /dev/null

# ---- the input after the stages ---------------------------------------------------------------
for ms_args in "grey $ms_d/in.png -o $ms_d/o.png" "-o $ms_d/o.png grey $ms_d/in.png"; do
	# shellcheck disable=SC2086
	expect_exit 2 "input last: climg $ms_args" "$CLIMG" $ms_args
	expect_stderr "input last: the input comes first" \
		"^climg: the input comes first: climg .*/in\\.png grey -o .*/o\\.png \\(climg INPUT\\.\\.\\. STAGE\\.\\.\\. -o OUTPUT\\)$"
	expect_stderr "input last: then --help" "^try 'climg --help'$"
	ms_lines "input last: two lines" 2
done
expect_exit 2 "a slip of a stage, then the input" "$CLIMG" gray "$ms_d/in.png" -o "$ms_d/o.png"
expect_stderr "a slip of a stage, then the input: both said" \
	"^climg: unknown stage 'gray'; did you mean grey\\? The input comes first: climg .*/in\\.png grey -o "
expect_exit 2 "a slip of a stage with arguments, then the input" "$CLIMG" gray:bt709 "$ms_d/in.png" \
	-o "$ms_d/o.png"
expect_stderr "a slip of a stage with arguments: its arguments kept" \
	"^climg: unknown stage 'gray'; did you mean grey\\? The input comes first: climg .*/in\\.png grey:bt709 -o "
expect_exit 2 "a stage alone" "$CLIMG" grey
expect_stderr "a stage alone: no input" "^climg: no input given: the input comes first"
ms_nothing "input last"

# ---- did you mean --------------------------------------------------------------------------
# ms_near NAME WANT ARG...: climg --cpu in.png ARG... -o o.png exits 2 with a message ending
# "did you mean WANT?" (after a stage's error) and nothing written.
ms_near() {
	_mn=$1
	_mw=$2
	shift 2
	expect_exit 2 "$_mn" "$CLIMG" --cpu "$ms_d/in.png" "$@" -o "$ms_d/o.png"
	expect_stderr "$_mn: did you mean $_mw" "; did you mean $_mw\\?$"
	ms_lines "$_mn: one line" 1
}
ms_near "stage gray" grey gray
ms_near "stage rotat" rotate rotat:90
ms_near "stage GREY (case)" grey GREY
ms_near "rotate:90:bilinaer" bilinear rotate:30:bilinaer
ms_near "rotate bq=" bg= rotate:30:bg
ms_near "grey:bt710" bt709 grey:bt710
ms_near "grey:avr" avg grey:avr
ms_near "convolve:gaus" gauss convolve:gaus
ms_near "convolve:sobelx" sobel-x convolve:sobelx
ms_near "convolve size slip" size= convolve:box:sise=5
ms_near "convolve border value" wrap convolve:box:border=wrp
ms_near "convolve norm value" none convolve:box:norm=nome
ms_near "resize filter" lanczos resize:50%:lanczso
ms_near "histogram option" plot= "histogram:plott=$ms_d/h.png"
ms_near "histogram scale" log "histogram:plot=$ms_d/h.png:scale=lg"
expect_exit 2 "a stage far from every name" "$CLIMG" --cpu "$ms_d/in.png" blur -o "$ms_d/o.png"
check_not "a stage far from every name: no suggestion" grep -q "did you mean" "$T/err"
expect_stderr "a stage far from every name: named" "^climg: unknown stage 'blur'"
ms_nothing "did you mean"
# options: every one --help names answers a swap of its third and fourth letters, those of
# its Comparing section in climg compare
"$CLIMG" --help >"$ms_t/help"
awk '/^Comparing/ { exit } { print }' "$ms_t/help" | grep -o -- '--[a-z][a-z-]*' | sort -u >"$ms_t/opts"
awk '/^Comparing/ { on = 1; next } on && /^$/ { exit } on' "$ms_t/help" |
	grep -o -- '^ *--[a-z][a-z-]*' | sed 's/^ *//' >"$ms_t/cmp-opts"
check "--help names options" test -s "$ms_t/opts"
check "--help names compare's options" test -s "$ms_t/cmp-opts"
while read -r ms_o; do
	ms_slip=$(printf '%s' "$ms_o" | sed 's/^--\(.\)\(.\)/--\2\1/')
	expect_exit 2 "option slip $ms_slip" "$CLIMG" --cpu "$ms_d/in.png" "$ms_slip" -o "$ms_d/o.png"
	expect_stderr "option slip $ms_slip: did you mean $ms_o" \
		"^climg: unknown option '$ms_slip'; did you mean $ms_o\\?$"
done <"$ms_t/opts"
while read -r ms_o; do
	ms_slip=$(printf '%s' "$ms_o" | sed 's/^--\(.\)\(.\)/--\2\1/')
	expect_exit 2 "compare option slip $ms_slip" "$CLIMG" compare "$ms_d/in.png" "$ms_d/in.png" "$ms_slip"
	expect_stderr "compare option slip $ms_slip: did you mean $ms_o" \
		"^climg: compare: unknown option '$ms_slip'; did you mean $ms_o\\?$"
done <"$ms_t/cmp-opts"
expect_exit 2 "compare's option to a chain" "$CLIMG" --cpu "$ms_d/in.png" --diff "$ms_d/d.png" -o "$ms_d/o.png"
expect_stderr "compare's option to a chain: says whose it is" "^climg: --diff is an option of climg compare A B$"
expect_exit 2 "a value's slip" "$CLIMG" --cpu "$ms_d/in.png" --time=jsn -o "$ms_d/o.png"
expect_stderr "a value's slip: did you mean --time=json" "did you mean --time=json\\?$"
expect_exit 2 "--name=VALUE slip" "$CLIMG" --cpu "$ms_d/in.png" --qualty=50 -o "$ms_d/o.jpg"
expect_stderr "--name=VALUE slip: did you mean --quality" "did you mean --quality\\?$"
expect_exit 2 "compare option slip" "$CLIMG" compare "$ms_d/in.png" "$ms_d/in.png" --tolerence 2
expect_stderr "compare option slip: then --help" "^try 'climg --help'$"

# ---- no arguments, unknown options: the message, then --help ---------------------------------
expect_exit 2 "no arguments" "$CLIMG"
check "no arguments: 'no input given', then --help" \
	sh -c 'printf "%s\n" "climg: no input given" "try '"'"'climg --help'"'"'" | cmp -s - "$1"' sh "$T/err"
expect_exit 2 "an unknown option" "$CLIMG" "$ms_d/in.png" --bogus -o "$ms_d/o.png"
expect_stderr "an unknown option: named" "^climg: unknown option '--bogus'$"
expect_stderr "an unknown option: then --help" "^try 'climg --help'$"
ms_lines "an unknown option: two lines" 2
expect_exit 2 "a typo'd option" "$CLIMG" "$ms_d/in.png" --verfy -o "$ms_d/o.png"
expect_stderr "a typo'd option: did you mean" "^climg: unknown option '--verfy'; did you mean --verify\\?$"
expect_stderr "a typo'd option: then --help" "^try 'climg --help'$"
expect_exit 2 "an option without its value" "$CLIMG" "$ms_d/in.png" grey -o
expect_stderr "an option without its value: named, then --help" "^climg: option '-o' needs a value$"
expect_stderr "an option without its value: then --help" "^try 'climg --help'$"

# ---- the output -----------------------------------------------------------------------------
expect_exit 1 "-o in a missing directory" "$CLIMG" --cpu "$ms_d/in.png" -o "$ms_d/nodir/sub/o.png"
expect_stderr "-o in a missing directory: says so" \
	"^climg: .*/nodir/sub/o\\.png: directory '.*/nodir/sub' does not exist$"
check_not "-o in a missing directory: none made" test -e "$ms_d/nodir"
expect_exit 1 "-o a directory" "$CLIMG" --cpu "$ms_d/in.png" -o "$ms_d/dir"
expect_stderr "-o a directory: says so, and what to give" \
	"^climg: .*/dir: is a directory; -o names the file to write, e\\.g\\. -o .*/dir/out\\.png$"
expect_exit 1 "-o a directory/" "$CLIMG" --cpu "$ms_d/in.png" -o "$ms_d/dir/"
expect_stderr "-o a directory/: one slash" "e\\.g\\. -o .*/dir/out\\.png$"
check "-o a directory: left empty" sh -c '[ -z "$(ls -A "$1")" ]' sh "$ms_d/dir"
expect_exit 2 "-o twice" "$CLIMG" --cpu "$ms_d/in.png" -o "$ms_d/a.jpg" -o "$ms_d/b.png"
expect_stderr "-o twice: says so" "^climg: -o given twice \\('.*/b\\.png'\\)"
expect_exit 2 "--output= twice" "$CLIMG" --cpu "$ms_d/in.png" --output="$ms_d/a.png" \
	--output="$ms_d/b.png"
expect_stderr "--output= twice: says so" "^climg: -o given twice"
ms_nothing "the output"

# an image to a terminal: refused unless forced (script(1) gives climg a terminal)
if command -v script >/dev/null; then
	# ms_tty ARG...: runs climg ARG... with stdout a terminal; its output (both streams) in
	# $ms_d/tty, its exit status in ms_rc.
	ms_tty() {
		script -qec "$(printf "'%s' " "$CLIMG" "$@")" /dev/null >"$ms_t/tty" 2>&1 </dev/null
		ms_rc=$?
	}
	ms_tty --cpu "$ms_d/in.png" grey -o -
	check "-o - to a terminal: exit 2 (got $ms_rc)" test "$ms_rc" = 2
	check "-o - to a terminal: says so, and --force" \
		grep -q "climg: -o -: will not write an image to a terminal; .*--force" "$ms_t/tty"
	check_not "-o - to a terminal: no PNG written" grep -q PNG "$ms_t/tty"
	ms_tty --cpu "$ms_d/in.png" "histogram:plot=-" -o "$ms_d/o.png"
	check "plot=- to a terminal: exit 2 (got $ms_rc)" test "$ms_rc" = 2
	check "plot=- to a terminal: says so" grep -q "histogram:plot=-: will not write an image" "$ms_t/tty"
	ms_tty --cpu "$ms_d/in.png" histogram
	check "a CSV to a terminal is fine (exit $ms_rc)" test "$ms_rc" = 0
	ms_tty --cpu "$ms_d/in.png" grey -o - --force
	check "--force: exit 0 (got $ms_rc)" test "$ms_rc" = 0
	check "--force: the PNG written" grep -q PNG "$ms_t/tty"
	ms_tty --cpu "$ms_d/in.png" grey -o - -f
	check "-f: exit 0 (got $ms_rc)" test "$ms_rc" = 0
	rm -f "$ms_d/o.png"
else
	echo "skipping the terminal checks: no script(1) (Debian: bsdutils)"
fi
expect_exit 0 "-o - to a file needs no --force" "$CLIMG" --cpu "$ms_d/in.png" grey -o -
check "-o - to a file: the PNG" sh -c 'head -c 4 "$1" | grep -q PNG' sh "$T/out"

# options that change nothing: one warning for the whole run
expect_exit 0 "--quality with PNG output" "$CLIMG" --cpu "$ms_d/in.png" --quality 50 -o "$ms_d/q.png"
expect_stderr "--quality with PNG output: warned" "^climg: warning: --quality has no effect: no output is JPEG"
ms_lines "--quality with PNG output: one line" 1
expect_exit 0 "--quality with PNG output in a batch" "$CLIMG" --cpu "$ms_d/in.png" "$ms_d/b.png" \
	"$ms_d/in.jpg" --quality 50 -o "$ms_d/q/%n-%i.png"
ms_lines "--quality in a batch: warned once" 1
expect_exit 0 "--quality -q" "$CLIMG" -q --cpu "$ms_d/in.png" --quality 50 -o "$ms_d/q.png"
ms_lines "--quality -q: silent" 0
expect_exit 0 "--quality with JPEG output" "$CLIMG" --cpu "$ms_d/in.png" --quality 50 -o "$ms_d/q.jpg"
ms_lines "--quality with JPEG output: silent" 0
expect_exit 0 "--quality with --format jpeg" "$CLIMG" --cpu "$ms_d/in.png" --quality 50 --format jpeg \
	-o "$ms_d/q.out"
ms_lines "--quality with --format jpeg: silent" 0
expect_exit 0 "--quality with a JPEG plot" "$CLIMG" --cpu "$ms_d/in.png" --quality 50 \
	"histogram:plot=$ms_d/h.jpg" -o "$ms_d/q.png"
ms_lines "--quality with a JPEG plot: silent" 0
expect_exit 0 "--png-level with JPEG output" "$CLIMG" --cpu "$ms_d/in.png" --png-level 1 -o "$ms_d/q.jpg"
expect_stderr "--png-level with JPEG output: warned" "^climg: warning: --png-level has no effect: no output is PNG"
rm -rf "$ms_d/q" "$ms_d"/q.* "$ms_d/h.jpg"

# ---- one stage's help ---------------------------------------------------------------------------
"$CLIMG" --list-stages | awk '/^[^ ]/ {print $1}' >"$ms_t/usages"
check "there are stages" test -s "$ms_t/usages"
"$IMGTOOL" make 160 120 3 photo:1 "$ms_t/ex/in.png"
"$IMGTOOL" make 160 120 3 photo:2 "$ms_t/ex/in.jpg"
while read -r ms_u; do
	ms_s=${ms_u%%[:[]*}
	expect_exit 0 "help $ms_s" "$CLIMG" help "$ms_s"
	cp "$T/out" "$ms_t/help"
	check "help $ms_s: the first line is its usage" test "$(head -n 1 "$ms_t/help")" = "$ms_u"
	check "help $ms_s: a formula" grep -q '^Formula' "$ms_t/help"
	check "help $ms_s: an example" grep -q '^Example:$' "$ms_t/help"
	check "help $ms_s: within 80 columns" sh -c '! awk "length > 80" "$1" | grep -q .' sh "$ms_t/help"
	expect_exit 0 "$ms_s --help" "$CLIMG" "$ms_s" --help
	check "$ms_s --help is help $ms_s" cmp -s "$T/out" "$ms_t/help"
	expect_exit 0 "help $ms_s:ARG" "$CLIMG" help "$ms_s:1"
	check "help $ms_s:ARG is help $ms_s" cmp -s "$T/out" "$ms_t/help"
	# each example runs, on the CPU path, on the inputs it names
	sed -n 's/^  climg //p' "$ms_t/help" >"$ms_t/examples"
	check "help $ms_s: the example is a command" test -s "$ms_t/examples"
	while read -r ms_e; do
		# shellcheck disable=SC2086
		(cd "$ms_t/ex" && "$CLIMG" --cpu $ms_e) >"$T/out" 2>"$T/err"
		check "help $ms_s: the example 'climg $ms_e' runs" test $? = 0
	done <"$ms_t/examples"
	ms_slip=$(printf '%s' "$ms_s" | sed 's/^\(.\)\(.\)/\2\1/')
	expect_exit 2 "help $ms_slip" "$CLIMG" help "$ms_slip"
	expect_stderr "help $ms_slip: did you mean $ms_s" "^climg: unknown stage '$ms_slip'.*; did you mean $ms_s\\?$"
done <"$ms_t/usages"
expect_exit 0 "help alone" "$CLIMG" help
"$CLIMG" --help >"$ms_t/help"
check "help alone is --help" cmp -s "$T/out" "$ms_t/help"
expect_exit 2 "help with two words" "$CLIMG" help rotate grey
expect_stderr "help with two words: says so" "^climg: help takes one stage's name"

# ---- --help and --list-stages: 80 columns, aligned --------------------------------------------
# ms_aligned NAME FILE TAG: FILE is within 80 columns, and on each line that starts with an
# item's tag (the awk regular expression TAG), the description starts at column 26 after at
# least one blank, or, where the tag leaves no room, on the next line, indented 25.
ms_aligned() {
	check "$1: within 80 columns" sh -c '! awk "length > 80" "$1" | grep -q .' sh "$2"
	check "$1: descriptions aligned at column 26" awk -v tag="$3" '
		function blank(s) { return s ~ /^ *$/ }
		{ line[NR] = $0 }
		END {
			for (i = 1; i <= NR; i++) {
				if (!match(line[i], "^" tag))
					continue
				t = RLENGTH
				rest = substr(line[i], t + 1)
				next_ok = blank(substr(line[i + 1], 1, 25)) && substr(line[i + 1], 26, 1) != " " && line[i + 1] != ""
				if (rest == "" && !next_ok) { print i ": a tag alone, no text below: " line[i]; bad = 1 }
				if (rest != "" && !(blank(substr(line[i], t + 1, 25 - t)) && t < 25 && substr(line[i], 26, 1) != " ")) {
					print i ": text not at column 26: " line[i]
					bad = 1
				}
			}
			exit bad
		}' "$2"
}
"$CLIMG" --list-stages >"$ms_t/list"
ms_aligned "--list-stages" "$ms_t/list" "[^ ]+"
awk '/^Stages/ { on = 1; next } on && /^$/ { exit } on' "$ms_t/help" >"$ms_t/help-stages"
check "--help has a stage section" test -s "$ms_t/help-stages"
ms_aligned "--help's stages" "$ms_t/help-stages" "  [^ ]+"
ms_opt='  (-[a-z0-9], |    )--[a-z-]+(\\[=[a-z]+\\])?( [A-Z][A-Z0-9,|%/]*)?'
for ms_sec in Options Batches Information Comparing; do
	awk -v s="$ms_sec" '$0 ~ "^" s { on = 1; next } on && /^$/ { exit } on' "$ms_t/help" >"$ms_t/sec"
	check "--help has $ms_sec" grep -q -- '--' "$ms_t/sec"
	ms_aligned "--help's $ms_sec" "$ms_t/sec" "$ms_opt"
done
check "--help: within 80 columns" sh -c '! awk "length > 80" "$1" | grep -q .' sh "$ms_t/help"

# ---- --verify's line ------------------------------------------------------------------------------
if need_opencl "the --verify line"; then
	expect_exit 0 "--verify" "$CLIMG" --verify "$ms_d/in.png" grey rotate:90 -o "$ms_d/v.png"
	check "--verify: one line, the stages counted" \
		sh -c 'printf "%s\n" "climg: verify: 2 stages, OpenCL and CPU identical" | cmp -s - "$1"' \
		sh "$T/err"
	expect_exit 0 "--verify without -o" "$CLIMG" --verify "$ms_d/in.png" flip
	expect_stderr "--verify without -o: the line" "^climg: verify: 1 stage, OpenCL and CPU identical$"
	expect_exit 0 "--verify -q" "$CLIMG" --verify -q "$ms_d/in.png" grey -o "$ms_d/v.png"
	ms_lines "--verify -q: silent" 0
	expect_exit 0 "--verify in a batch" "$CLIMG" --verify "$ms_d/in.png" "$ms_d/b.png" "$ms_d/in.jpg" \
		grey rotate:90 -o "$ms_d/v/%n-%i.png"
	check "--verify in a batch: one line for all" \
		sh -c 'printf "%s\n" "climg: verify: 3 images, 2 stages each, OpenCL and CPU identical" | cmp -s - "$1"' \
		sh "$T/err"
	cp "$ms_d/in.png" "$ms_d/v/bad.png"
	printf 'not an image' >"$ms_d/v/bad.png"
	expect_exit 1 "--verify in a batch with a failure" "$CLIMG" --verify "$ms_d/in.png" \
		"$ms_d/v/bad.png" grey -o "$ms_d/v/%n-%i.png"
	expect_stderr "--verify in a batch with a failure: the images verified" \
		"^climg: verify: 1 image, 1 stage each, OpenCL and CPU identical$"
	expect_stderr "--verify in a batch with a failure: the failure" "^climg: 1 of 2 inputs failed$"
	rm -rf "$ms_d/v" "$ms_d/v.png"
fi
