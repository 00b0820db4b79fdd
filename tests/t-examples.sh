# SPDX-License-Identifier: MIT
# Every example command in README.md and man/climg.1 runs as written, on inputs of every
# channel count it allows, and leaves its output.
#
# The examples: README.md's indented code lines that run climg (`$ ` prompts dropped; not
# the synopsis lines, which hold [OPTIONS]), the lines of the man page's EXAMPLES, and the
# man page's .B lines that are a climg command of three words or more. Each runs with
# `sh -c` in a fresh directory holding:
#   in.png   1, 2, 3 and 4 channels, one run each, when the command names in.png
#   in.jpg   1 and 3 channels (what JPEG decodes to), likewise
#   in.bmp   3 and 4 channels (BMP decodes to RGB or RGBA), likewise
#   out.png, golden.png   a pair within --tolerance 2 of each other, for `compare`: 1-4
#            channels when the command compares out.png
#   photos/, out/, golden/, tests/in/   trees of PNG and JPEG files of every channel count,
#            and *.jpg files of 1 and 3 channels, for the batch examples
#   mykernel.txt   a 3 x 3 kernel; testdata/   the repository's samples
# with `climg` on PATH. A command with --expect GOLDEN first makes GOLDEN by the same
# command with -o GOLDEN. The check: exit status 0, and the output there: the file -o
# names decodes (a template: some file was written under its directory), or the file
# standard output was redirected to is not empty, or --expect's "same" line, or else the
# command wrote a file or text.
# GNU parallel's example is skipped where parallel is missing; the Slurm example runs its
# --wrap command for each index of its --array, as sbatch would (tests/t-examples.sh's
# stand-in below).

E=$T/examples
rm -rf "$E"
mkdir -p "$E/bin" "$E/src"
ln -s "$CLIMG" "$E/bin/climg"
cat >"$E/bin/sbatch" <<'EOF'
#!/bin/sh
# A stand-in for Slurm's sbatch: runs --wrap CMD once for each index A..B of --array=A-B,
# with SLURM_ARRAY_TASK_ID set, and fails when one fails.
for a in "$@"; do
	case $a in
	--array=*) r=${a#--array=} ;;
	esac
done
while [ $# -gt 0 ] && [ "$1" != --wrap ]; do shift; done
[ $# -ge 2 ] && [ -n "${r:-}" ] || { echo "sbatch stand-in: needs --array=A-B and --wrap CMD" >&2; exit 2; }
i=${r%-*}
while [ "$i" -le "${r#*-}" ]; do
	SLURM_ARRAY_TASK_ID=$i sh -c "$2" || exit 1
	i=$((i + 1))
done
EOF
chmod +x "$E/bin/sbatch"

# ---- the examples -------------------------------------------------------------------------
awk '/^    / {
	l = substr($0, 5)
	sub(/^\$ /, "", l)
	if (l ~ /(^|[ |\047])climg( |$)/ && l !~ /\[OPTIONS\]/) print l
}' README.md >"$E/readme.txt"
# man: \- is -, \(aq and \(cq are quotes, \& is nothing
sed -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" -e "s/\\\\(cq/'/g" -e 's/\\&//g' man/climg.1 | awk '
	/^\.SH / { ex = $0 == ".SH EXAMPLES" }
	ex && /^\.nf/ { nf = 1; next }
	ex && /^\.fi/ { nf = 0; next }
	nf { print; next }
	/^\.B / {
		l = substr($0, 4)
		if (l ~ /(^|[ |\047])climg( |$)/ && split(l, w, " ") >= 3) print l
	}' >"$E/man.txt"
check "README.md has examples ($(wc -l <"$E/readme.txt"))" test "$(wc -l <"$E/readme.txt")" -ge 20
check "the man page has examples ($(wc -l <"$E/man.txt"))" test "$(wc -l <"$E/man.txt")" -ge 20
check "the stdin example to PGM is among them" grep -qF 'cat in.png | climg - ' "$E/readme.txt"

# ---- the inputs ---------------------------------------------------------------------------
for ch in 1 2 3 4; do
	"$IMGTOOL" make 37 23 $ch photo:$ch "$E/src/in$ch.png"
	"$IMGTOOL" make 37 23 $ch photo:$((ch + 4)) "$E/src/golden$ch.png"
	# out.png: one sample 1 off its golden (within --tolerance 2)
	"$IMGTOOL" poke "$E/src/golden$ch.png" "$E/src/out$ch.png" 3 4 0 \
		"$("$IMGTOOL" dump "$E/src/golden$ch.png" | sed -n 5p | cut -d ' ' -f 4 | cut -d , -f 1 | awk '{ print $1 < 255 ? $1 + 1 : $1 - 1 }')"
done
for ch in 1 3; do
	"$IMGTOOL" make 37 23 $ch photo:$ch "$E/src/in$ch.jpg"
done
for ch in 3 4; do
	"$IMGTOOL" make 37 23 $ch photo:$ch "$E/src/in$ch.bmp"
done
check "in4.bmp reads as RGBA" test "$("$IMGTOOL" info "$E/src/in4.bmp")" = "37 23 4 bmp"
printf '0 -1 0\n-1 5 -1\n0 -1 0\n' >"$E/src/mykernel.txt"
# tree DIR: PNGs of 1-4 channels and JPEGs of 1 and 3, some in a subdirectory
tree() {
	mkdir -p "$1/sub"
	for ch in 1 2; do cp "$E/src/in$ch.png" "$1/p$ch.png"; done
	for ch in 3 4; do cp "$E/src/in$ch.png" "$1/sub/p$ch.png"; done
	for ch in 1 3; do cp "$E/src/in$ch.jpg" "$1/j$ch.jpg"; done
}

# What every run's directory holds besides the variants
mkdir -p "$E/base/tests"
for ch in 1 3; do cp "$E/src/in$ch.jpg" "$E/base/c$ch.jpg"; done
cp "$E/src/mykernel.txt" "$E/base/"
tree "$E/base/photos"
tree "$E/base/tests/in"
tree "$E/base/out"
cp -R "$E/base/out" "$E/base/golden"
ln -s "$(pwd)/testdata" "$E/base/testdata"

# setup DIR PNG JPG BMP PAIR: a fresh directory with in.png of PNG channels, and so on
setup() {
	rm -rf "$1"
	cp -R "$E/base" "$1"
	cp "$E/src/in$2.png" "$1/in.png"
	cp "$E/src/in$3.jpg" "$1/in.jpg"
	cp "$E/src/in$4.bmp" "$1/in.bmp"
	cp "$E/src/out$5.png" "$1/out.png"
	cp "$E/src/golden$5.png" "$1/golden.png"
	touch "$1/.start"
	# everything here is older than what the example writes
	find "$1" -exec touch -h -d 2000-01-01 {} +
}

# unquote WORD: WORD without the shell's quotes
unquote() { printf '%s' "$1" | tr -d "'\""; }

# run_example LABEL CMD: runs CMD in $E/run as the header says and checks it
run_example() {
	_l=$1
	_c=$2
	_d=$E/run
	case $_c in
	*--expect*)
		# make the golden images: the same command writing them (its comparison options dropped)
		_g=$(printf '%s' "$_c" | sed -e 's/--expect/-o/' -e 's/--tolerance [^ ]*//' \
			-e 's/--allow [^ ]*//' -e 's/--ignore [^ ]*//')
		(cd "$_d" && PATH=$E/bin:$PATH sh -c "$_g") >/dev/null 2>&1
		;;
	esac
	(cd "$_d" && PATH=$E/bin:$PATH sh -c "$_c") >"$T/out" 2>"$T/err" </dev/null
	_rc=$?
	if [ $_rc != 0 ]; then
		bad "$_l: exit $_rc: $_c"
		sed 's/^/    | /' "$T/err" | head -n 5
		return
	fi
	# the output: -o's file, else the redirection's, else anything at all
	_o=""
	_r=""
	_prev=""
	set -f
	for _w in $_c; do
		case $_prev in
		-o | --output) _o=$(unquote "$_w") ;;
		'>') _r=$(unquote "$_w") ;;
		esac
		_prev=$_w
	done
	set +f
	if [ -n "$_o" ] && [ "$_o" != - ]; then
		case $_o in
		*%*)
			_top=${_o%%%*}
			if [ -n "$(find "$_d/${_top:-.}" -newer "$_d/.start" -type f 2>/dev/null | head -n 1)" ]; then
				ok
			else
				bad "$_l: nothing written under '$_top': $_c"
			fi
			;;
		*)
			if "$IMGTOOL" info "$_d/$_o" >/dev/null 2>&1; then ok; else
				bad "$_l: no image in '$_o': $_c"
			fi
			;;
		esac
	elif [ -n "$_r" ]; then
		if [ -s "$_d/$_r" ]; then ok; else bad "$_l: '$_r' is empty: $_c"; fi
	elif [ "$_c" != "${_c#*--expect}" ]; then
		if grep -q '^same ' "$T/err"; then ok; else bad "$_l: no 'same' line: $_c"; fi
	elif [ -s "$T/out" ] || [ -s "$T/err" ] ||
		[ -n "$(find "$_d" -newer "$_d/.start" -type f | head -n 1)" ]; then
		ok
	else
		bad "$_l: no output at all: $_c"
	fi
}

e_cl=1
"$CLIMG" --list-devices | grep -q '^0: ' || e_cl=0
cat "$E/readme.txt" "$E/man.txt" | sort -u >"$E/all.txt"
while IFS= read -r cmd; do
	case $cmd in
	*--device* | *--verify* | *--devices*)
		if [ $e_cl = 0 ]; then
			need_opencl "the example '$cmd'" || continue
		fi
		;;
	parallel\ *)
		if ! command -v parallel >/dev/null; then
			echo "skipping the example '$cmd': GNU parallel is not installed"
			continue
		fi
		;;
	esac
	pngs=4
	jpgs=3
	bmps=4
	pairs=4
	case $cmd in *in.png*) pngs="1 2 3 4" ;; esac
	case $cmd in *in.jpg*) jpgs="1 3" ;; esac
	case $cmd in *in.bmp*) bmps="3 4" ;; esac
	case $cmd in *compare*out.png*) pairs="1 2 3 4" ;; esac
	for p in $pngs; do
		for j in $jpgs; do
			for b in $bmps; do
				for c in $pairs; do
					setup "$E/run" "$p" "$j" "$b" "$c"
					run_example "png $p, jpeg $j, bmp $b, pair $c" "$cmd"
				done
			done
		done
	done
done <"$E/all.txt"
