# SPDX-License-Identifier: MIT
# The bash completion (completion/climg.bash), driven as bash's `complete` machinery drives
# it: the script is sourced, the function `complete -p climg` names is called with
# COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT and bash's default COMP_WORDBREAKS set as
# for a line typed up to its end, and COMPREPLY is checked. Keywords it offers are checked
# against the binary (each one runs). Helpers and variables start with cp_.

cp_d=$T/completion
cp_script=$(pwd)/completion/climg.bash
rm -rf "$cp_d"
mkdir -p "$cp_d/sub"
: >"$cp_d/a.png"
: >"$cp_d/ab.jpg"
: >"$cp_d/my file.png"
"$IMGTOOL" make 7 5 3 F "$cp_d/rgb.png"

# cp_run.bash SCRIPT CLIMG LINE: completes "CLIMG LINE"; prints COMPREPLY, one a line.
# COMP_WB, when set, replaces COMP_WORDBREAKS.
cat >"$cp_d/run.bash" <<'EOF'
. "$1" || exit 1
spec=$(complete -p climg) || exit 1
fn=${spec#*-F }
fn=${fn%% *}
COMP_WORDBREAKS=${COMP_WB-$' \t\n"\'><=;|&(:'}
COMP_LINE="$(printf %q "$2") $3"
COMP_POINT=${#COMP_LINE}
# COMP_WORDS as bash splits them: at blanks, and runs of ':' or '=' as words of their own
# where COMP_WORDBREAKS holds them
split=$COMP_LINE
[[ $COMP_WORDBREAKS == *:* ]] && split=$(sed 's/:\{1,\}/ & /g' <<<"$split")
[[ $COMP_WORDBREAKS == *=* ]] && split=$(sed 's/=\{1,\}/ & /g' <<<"$split")
read -ra COMP_WORDS <<<"$split"
[[ $COMP_LINE == *[[:space:]] || $COMP_LINE == *[:=] ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMPREPLY=()
"$fn" climg "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" || exit 1
[[ ${#COMPREPLY[@]} == 0 ]] || printf '%s\n' "${COMPREPLY[@]}"
EOF

# cp_comp LINE: COMPREPLY for "climg LINE" (run in $cp_d) into $cp_d/got, sorted.
cp_comp() {
	(cd "$cp_d" && bash run.bash "$cp_script" "$CLIMG" "$1") >"$cp_d/got.raw" 2>"$cp_d/err"
	sort "$cp_d/got.raw" >"$cp_d/got"
}

# cp_is NAME LINE WORD...: the completions of LINE are exactly the WORDs ("" alone: none).
cp_is() {
	_cn=$1
	_cl=$2
	shift 2
	cp_comp "$_cl"
	if [ $# -eq 1 ] && [ -z "$1" ]; then : >"$cp_d/want"; else printf '%s\n' "$@" | sort >"$cp_d/want"; fi
	if cmp -s "$cp_d/want" "$cp_d/got" && ! [ -s "$cp_d/err" ]; then ok; else
		bad "$_cn: '$_cl' completes to $(tr '\n' ' ' <"$cp_d/got")(want $*)"
		sed 's/^/    | /' "$cp_d/err" | head -n 3
	fi
}

# cp_has NAME LINE WORD: WORD is among the completions of LINE.
cp_has() {
	cp_comp "$2"
	if grep -Fxq -- "$3" "$cp_d/got"; then ok; else
		bad "$1: '$2' does not complete to '$3' (got $(tr '\n' ' ' <"$cp_d/got"))"
	fi
}

check "the script registers a function for climg" \
	bash -c ". completion/climg.bash && complete -p climg | grep -q -- '-F _climg climg'"

# ---- options: every one --help names ---------------------------------------------------------
"$CLIMG" --help | grep -o -- '--[a-z][a-z-]*' | sort -u >"$cp_d/opts"
cp_comp "-"
while read -r o; do
	check "completes option $o" grep -Fxq -- "$o" "$cp_d/got"
done <"$cp_d/opts"
for o in -o -d -q -h --time=json; do
	check "completes option $o" grep -Fxq -- "$o" "$cp_d/got"
done
cp_is "a prefix picks the options" "--li" --list-devices --list-stages
cp_is "an option --help describes twice is offered once" "--devic" --device --devices
cp_is "--time= completes its value (after '=', as readline replaces)" "--time=" json
cp_is "--format's values" "rgb.png --format " png jpeg bmp tga pgm ppm
cp_is "--format= with a prefix" "rgb.png --format=p" png pgm ppm
cp_is "no values for --quality" "rgb.png --quality " ""

# ---- files: the input, -o, --output=, plot= ---------------------------------------------------
cp_is "the input's file names" "a" a.png ab.jpg
cp_is "after an option's value, still the input" "--quality 5 a" a.png ab.jpg
cp_is "after --, a word starting with - is the input" "-- -" ""
cp_is "-o's file names" "rgb.png grey -o a" a.png ab.jpg
cp_is "-o with an escaped space" 'rgb.png -o my\ f' "my file.png"
cp_is "-o inside an open quote" "rgb.png -o 'my f" "my file.png"
cp_is "--output= completes the part after '='" "rgb.png --output=a" a.png ab.jpg
cp_is "directories" "rgb.png -o su" sub
cp_is "histogram's plot= takes a file" "rgb.png histogram:plot=a" a.png ab.jpg
cp_is "stats' DEST is a file" "rgb.png stats:a" a.png ab.jpg
cp_is "stats takes one argument" "rgb.png stats:x.csv:a" ""

# ---- stages: every one --list-stages names ---------------------------------------------------
"$CLIMG" --list-stages | awk '/^[^ ]/ { print $1 }' | sed 's/[:[].*//' >"$cp_d/stages"
check "there are stages to complete" test -s "$cp_d/stages"
cp_comp "rgb.png "
sed 's/:$//' "$cp_d/got" >"$cp_d/offered"
sort "$cp_d/stages" >"$cp_d/stages.sorted"
check "the stages offered are those listed: $(tr '\n' ' ' <"$cp_d/got")" \
	cmp -s "$cp_d/offered" "$cp_d/stages.sorted"
while read -r s; do
	cp_pre=$(printf '%s' "$s" | cut -c1-2)
	cp_comp "rgb.png grey $cp_pre"
	check "stage $s is completed from '$cp_pre'" grep -Eqx -- "$s:?" "$cp_d/got"
done <"$cp_d/stages"
cp_is "a stage that needs an argument ends in ':'" "rgb.png rot" rotate:
sort -u "$cp_d/stages" >"$cp_d/names"
cp_comp "help "
check "help: every stage's name, no more: $(tr '\n' ' ' <"$cp_d/got")" cmp -s "$cp_d/got" "$cp_d/names"
cp_is "help: a prefix" "help tr" transpose transverse
cp_is "help: one word only" "help grey " ""
cp_is "the commands, as the first word" "he" help
cp_has "compare, as the first word" "co" compare
cp_is "no command after the input" "rgb.png he" ""

# ---- compare: its own options (compare --help), file names for its words, --diff's file -------
"$CLIMG" compare --help | grep -o -- '--[a-z][a-z-]*' | sort -u >"$cp_d/copts"
check "compare --help names options" test -s "$cp_d/copts"
cp_comp "compare -"
while read -r o; do
	check "compare: completes option $o" grep -Fxq -- "$o" "$cp_d/got"
done <"$cp_d/copts"
check_not "compare: no option of a chain" grep -Fxq -- "--files-from" "$cp_d/got"
cp_is "compare: a prefix picks its options" "compare --t" --tolerance
cp_is "compare: the first image's file names" "compare a" a.png ab.jpg
cp_is "compare: the second image's file names, not stages" "compare rgb.png a" a.png ab.jpg
cp_is "compare: after an option's value, file names" "compare --tolerance 3 a" a.png ab.jpg
cp_is "compare: --diff takes a file" "compare rgb.png a.png --diff a" a.png ab.jpg
cp_is "compare: --diff= takes a file" "compare rgb.png a.png --diff=a" a.png ab.jpg
cp_is "compare: no values for --tolerance" "compare --tolerance " ""
cp_has "compare: --device takes a device" "compare --device " gpu

# ---- stage arguments (bash's COMP_WORDBREAKS holds ':' and '=': the part after them) -----------
cp_is "rotate: angles" "rgb.png rotate:" 90 180 270
cp_is "rotate: angle prefix" "rgb.png rotate:1" 180
cp_is "rotate options" "rgb.png rotate:90:" bilinear nearest expand crop bg=
cp_is "rotate option prefix" "rgb.png rotate:30:crop:b" bilinear bg=
cp_is "convolve: kernels" "rgb.png convolve:" box gauss sharpen edge sobel-x sobel-y emboss \
	identity kernel=
cp_is "convolve:gauss options" "rgb.png convolve:gauss:" norm= bias= border= sigma= radius=
cp_is "convolve:box options" "rgb.png convolve:box:" norm= bias= border= size=
cp_is "border= values" "rgb.png convolve:edge:border=" replicate reflect wrap zero
cp_is "norm= values" "rgb.png convolve:edge:norm=" sum none
cp_is "grey: modes" "rgb.png grey:" bt601 bt709 avg
cp_is "flatten: options" "rgb.png flatten:" bg=
cp_is "flatten's bg= names" "rgb.png flatten:bg=" white black
cp_is "rotate's bg= takes no names" "rgb.png rotate:30:bg=" ""
cp_is "dropalpha takes no arguments" "rgb.png dropalpha:" ""
cp_is "histogram: options" "rgb.png histogram:" plot= scale= alpha=
cp_is "scale= values" "rgb.png histogram:scale=" linear log
cp_is "alpha= values" "rgb.png histogram:alpha=" yes no
cp_is "transpose takes no arguments" "rgb.png transpose:" ""
cp_is "a stage after options and -o" "-q rgb.png -o x.png grey:b" bt601 bt709
# Where COMP_WORDBREAKS has no ':' (a user's choice), whole words.
COMP_WB=' ' cp_is "without ':' in COMP_WORDBREAKS, whole words" "rgb.png grey:b" grey:bt601 \
	grey:bt709
COMP_WB=' ' cp_is "without '=' in COMP_WORDBREAKS, whole words" "rgb.png --time=" --time=json
unset COMP_WB

# Each keyword the completion offers runs.
for a in rotate:90 rotate:180 rotate:270; do
	cp_is "$a offered" "rgb.png ${a%?}" "${a#rotate:}"
done
for a in rotate:30:bilinear rotate:30:nearest rotate:30:expand rotate:30:crop \
	rotate:30:bg=#ffffff convolve:box convolve:gauss convolve:sharpen convolve:edge \
	convolve:sobel-x convolve:sobel-y convolve:emboss convolve:identity convolve:box:size=5 \
	convolve:gauss:sigma=2:radius=3 convolve:edge:norm=none:bias=128:border=wrap \
	convolve:edge:border=reflect convolve:edge:border=zero convolve:box:norm=sum \
	convolve:sharpen:border=replicate grey:bt601 grey:bt709 grey:avg flatten:bg=white \
	flatten:bg=black \
	"histogram:$cp_d/h.csv:scale=log:plot=$cp_d/h.png" "histogram:plot=$cp_d/h2.png:scale=linear" "histogram:plot=$cp_d/h3.png:alpha=yes" \
	"histogram:plot=$cp_d/h4.png:alpha=no" "stats:$cp_d/s.json"; do
	expect_exit 0 "the offered keywords run: $a" "$CLIMG" --cpu "$cp_d/rgb.png" "$a" -o "$cp_d/o.png"
done
for f in png jpeg bmp tga ppm; do
	expect_exit 0 "--format $f runs" "$CLIMG" --cpu "$cp_d/rgb.png" --format "$f" -o "$cp_d/o.x"
done
expect_exit 0 "--format pgm runs" "$CLIMG" --cpu "$cp_d/rgb.png" grey --format pgm -o "$cp_d/o.x"

# ---- devices ------------------------------------------------------------------------------------
cp_has "--device offers gpu" "rgb.png --device " gpu
cp_has "--device offers cpu" "rgb.png --device " cpu
if "$CLIMG" --list-devices | grep -q '^0: '; then
	cp_dev=$("$CLIMG" --list-devices | sed -n 's/^0: \(.*\) (.*/\1/p' | head -n 1)
	cp_has "--device offers device 0's number" "rgb.png -d " 0
	cp_has "--device offers device 0's name, escaped" "rgb.png -d " "$(bash -c 'printf %q "$1"' _ "$cp_dev")"
	cp_has "--device= offers device 0's name" "rgb.png --device=" "$(bash -c 'printf %q "$1"' _ "$cp_dev")"
fi
