# SPDX-License-Identifier: MIT
# bash completion for climg(1). Completes the options (read from `climg --help`), the input
# and output file names, the stages (from `climg --list-stages`, so a new stage needs no edit
# here), the keywords of their arguments, --format's values and --device's (gpu, cpu and the
# numbers and names `climg --list-devices` prints), and the commands help and compare (a
# stage's name after help; after compare, its options and file names). It runs the climg
# being completed (the command word when it names a file, else climg on PATH), and needs
# none of bash-completion's functions.
#
# The word under the cursor is read from COMP_LINE, not COMP_WORDS: bash splits COMP_WORDS at
# COMP_WORDBREAKS (':' and '=' among them), but a stage is one word, rotate:90:crop. Each
# candidate is a whole word, and what readline replaces is only the part after the word's
# last COMP_WORDBREAKS character, so that part's prefix is taken off the candidates.

# _climg_split: sets _climg_words to the words of COMP_LINE up to COMP_POINT, quotes and
# backslashes removed; the last one is the word being completed ("" after a space).
# _climg_quote is the quote that word leaves open, if any.
_climg_split()
{
	local line=${COMP_LINE:0:COMP_POINT} c w="" q="" i inword=0
	_climg_quote=""
	_climg_words=()
	for ((i = 0; i < ${#line}; i++)); do
		c=${line:i:1}
		if [[ $q == "'" ]]; then
			if [[ $c == "'" ]]; then q=""; else w+=$c; fi
		elif [[ $q == '"' ]]; then
			if [[ $c == '"' ]]; then
				q=""
			elif [[ $c == "\\" && ${line:i+1:1} == [\"\\\$\`] ]]; then
				i=$((i + 1))
				w+=${line:i:1}
			else
				w+=$c
			fi
		elif [[ $c == "\\" ]]; then
			i=$((i + 1))
			w+=${line:i:1}
			inword=1
		elif [[ $c == [\'\"] ]]; then
			q=$c
			inword=1
		elif [[ $c == [[:space:]] ]]; then
			((inword)) && _climg_words+=("$w")
			w=""
			inword=0
		else
			w+=$c
			inword=1
		fi
	done
	_climg_words+=("$w")
	_climg_quote=$q
}

# _climg_run ARG...: the climg being completed, run with ARG..., stderr dropped.
_climg_run()
{
	local cmd=${_climg_words[0]/#\~/$HOME}
	[[ $cmd == */* && -x $cmd ]] || cmd=climg
	"$cmd" "$@" 2>/dev/null
}

# _climg_options [compare]: each option of `climg --help` (or `climg compare --help`), one a
# line, followed by " V" when it takes a value (the help shows it as an upper-case word:
# "--format FMT"); "--time[=json]" gives --time and --time=json. An option's line starts
# it within 8 columns; a description's continuation line, indented further, may mention
# options without being one. Each option once, though --help describes some twice
# (--device: for chains and for compare).
_climg_options()
{
	_climg_run "$@" --help | awk '/^ +-/ && index($0, "-") <= 8 {
		n = 0
		v = ""
		for (i = 1; i <= NF; i++) {
			w = $i
			sub(/,$/, "", w)
			if (w !~ /^-/) {
				if (w ~ /^[A-Z]+$/)
					v = " V"
				break
			}
			opt[++n] = w
		}
		for (j = 1; j <= n; j++) {
			w = opt[j]
			if (w ~ /\[=[a-z]+\]$/) {
				b = w
				sub(/\[.*/, "", b)
				e = w
				sub(/.*\[/, "", e)
				sub(/\]$/, "", e)
				print b
				print b e
			} else {
				print w v
			}
		}
	}' | awk '!seen[$1]++'
}

# _climg_add PREFIX WORD...: adds each PREFIX.WORD that starts with $cur to COMPREPLY.
_climg_add()
{
	local pre=$1 w
	shift
	for w in "$@"; do
		[[ $pre$w == "$cur"* ]] && COMPREPLY+=("$pre$w")
	done
}

# _climg_files PREFIX: adds PREFIX.FILE for the files and directories whose names start with
# what follows PREFIX in $cur.
_climg_files()
{
	local pre=$1 f
	while IFS= read -r f; do
		COMPREPLY+=("$pre$f")
	done < <(compgen -f -- "${cur#"$pre"}")
	_climg_isfile=1
}

# _climg_devices PREFIX: gpu, cpu, and each device's number and name from --list-devices
# ("0: NAME (TYPE, ...)").
_climg_devices()
{
	local pre=$1 line n name
	_climg_add "$pre" gpu cpu
	while IFS= read -r line; do
		[[ $line =~ ^([0-9]+):\ (.*)\ \( ]] || continue
		n=${BASH_REMATCH[1]}
		name=${BASH_REMATCH[2]}
		_climg_add "$pre" "$n" "$name"
	done < <(_climg_run --list-devices)
}

# _climg_value OPTION PREFIX: the values of OPTION.
_climg_value()
{
	case $1 in
	-o | --output) _climg_files "$2" ;;
	-d | --device) _climg_devices "$2" ;;
	--format) _climg_add "$2" png jpeg bmp tga pgm ppm ;;
	esac
}

# _climg_stage_names: each stage's usage, one a line, from --list-stages (whose lines that
# start with a blank continue a description).
_climg_stage_names()
{
	local line
	while IFS= read -r line; do
		[[ -n $line && $line != [[:space:]]* ]] && printf '%s\n' "${line%%[[:space:]]*}"
	done < <(_climg_run --list-stages)
}

# _climg_stage: $cur is a stage: its name, or the argument after its last ':'.
_climg_stage()
{
	local name arg base n line first
	if [[ $cur != *:* ]]; then
		# "rotate:DEGREES..." needs an argument: offered as "rotate:"
		while read -r first; do
			name=${first%%[:[]*}
			[[ $first == "$name":* ]] && name+=:
			_climg_add "" "$name"
		done < <(_climg_stage_names)
		return
	fi
	name=${cur%%:*}
	arg=${cur##*:}
	base=${cur%"$arg"}
	n=${cur//[^:]/} # one ':' per argument so far: ${#n} is this argument's number
	n=${#n}
	if [[ $arg == *=* ]]; then
		case ${arg%%=*} in
		border) _climg_add "${base}border=" replicate reflect wrap zero ;;
		norm) _climg_add "${base}norm=" sum none ;;
		scale) _climg_add "${base}scale=" linear log ;;
		alpha) _climg_add "${base}alpha=" yes no ;;
		bg) [[ $name == flatten ]] && _climg_add "${base}bg=" white black ;;
		plot) _climg_files "${base}plot=" ;;
		kernel) [[ $arg == kernel=@* ]] && _climg_files "${base}kernel=@" ;;
		esac
		return
	fi
	case $name in
	rotate)
		if ((n == 1)); then
			_climg_add "$base" 90 180 270
		else
			_climg_add "$base" bilinear nearest expand crop bg=
		fi
		;;
	convolve)
		if ((n == 1)); then
			_climg_add "$base" box gauss sharpen edge sobel-x sobel-y emboss identity \
				kernel=
		else
			first=${cur#convolve:}
			first=${first%%:*}
			_climg_add "$base" norm= bias= border=
			[[ $first == box ]] && _climg_add "$base" size=
			[[ $first == gauss ]] && _climg_add "$base" sigma= radius=
		fi
		;;
	grey) ((n == 1)) && _climg_add "$base" bt601 bt709 avg ;;
	flatten) ((n == 1)) && _climg_add "$base" bg= ;;
	histogram) _climg_add "$base" plot= scale= alpha= ;;
	stats) ((n == 1)) && _climg_files "$base" ;;
	esac
}

# _climg: the completion function (complete -F).
_climg()
{
	local cur w i skip=0 dashdash=0 npos=0 opts valopts opt k c pre names first compare=0
	local _climg_isfile=0 _climg_quote _climg_words
	COMPREPLY=()
	_climg_split
	cur=${_climg_words[${#_climg_words[@]} - 1]}
	# climg compare A B: its own options, and files for its words
	[[ ${_climg_words[1]} == compare ]] && ((${#_climg_words[@]} >= 3)) && compare=1
	if ((compare)); then
		opts=$(_climg_options compare)
	else
		opts=$(_climg_options)
	fi
	valopts=" $(awk '$2 == "V" { printf "%s ", $1 }' <<<"$opts")"
	mapfile -t names < <(awk '{ print $1 }' <<<"$opts")
	# the words before this one: options, their values, the input, stages
	for ((i = 1; i < ${#_climg_words[@]} - 1; i++)); do
		w=${_climg_words[i]}
		if ((skip)); then
			skip=0
		elif ((dashdash)) || [[ $w != -* || $w == - ]]; then
			npos=$((npos + 1))
		elif [[ $w == -- ]]; then
			dashdash=1
		elif [[ $valopts == *" $w "* ]]; then
			skip=1
		fi
	done
	if ((compare)); then
		if ((skip)); then
			case ${_climg_words[i - 1]} in
			--diff) _climg_files "" ;;
			-d | --device) _climg_devices "" ;;
			esac
		elif ((!dashdash)) && [[ $cur == --*=* ]]; then
			opt=${cur%%=*}
			case $opt in
			--diff) _climg_files "$opt=" ;;
			--device) _climg_devices "$opt=" ;;
			esac
		elif ((!dashdash)) && [[ $cur == -* ]]; then
			_climg_add "" "${names[@]}"
		else
			_climg_files ""
		fi
	elif [[ ${_climg_words[1]} == help ]] && ((${#_climg_words[@]} >= 3)); then
		# climg help STAGE: one stage's name
		while ((${#_climg_words[@]} == 3)) && read -r first; do
			_climg_add "" "${first%%[:[]*}"
		done < <(_climg_stage_names)
	elif ((skip)); then
		_climg_value "${_climg_words[i - 1]}" ""
	elif ((!dashdash)) && [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		_climg_value "$opt" "$opt="
		# --time=json and the like
		[[ ${#COMPREPLY[@]} == 0 ]] && _climg_add "" "${names[@]}"
	elif ((!dashdash)) && [[ $cur == -* ]]; then
		_climg_add "" "${names[@]}"
	elif ((npos == 0)); then
		_climg_files ""
		# the commands, as the first word
		((${#_climg_words[@]} == 2)) && _climg_add "" help compare
	else
		_climg_stage
	fi

	# readline replaces only what follows cur's last COMP_WORDBREAKS character (a blank in
	# cur was quoted: not a break)
	for ((k = ${#cur}; k > 0; k--)); do
		c=${cur:k-1:1}
		[[ $c != [[:space:]] && $COMP_WORDBREAKS == *"$c"* ]] && break
	done
	pre=${cur:0:k}
	for i in "${!COMPREPLY[@]}"; do
		COMPREPLY[i]=${COMPREPLY[i]#"$pre"}
	done
	if ((_climg_isfile)); then
		compopt -o filenames 2>/dev/null # readline quotes them and marks directories
		return 0
	fi
	# Other candidates are escaped here (device names hold spaces), except inside a quote
	# the word left open, where readline inserts them as they are.
	if [[ -z $_climg_quote ]]; then
		for i in "${!COMPREPLY[@]}"; do
			COMPREPLY[i]=$(printf '%q' "${COMPREPLY[i]}")
		done
	fi
	# a keyword that wants more (bg=, rotate:) takes no space after it
	[[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *[=:] ]] && compopt -o nospace 2>/dev/null
	return 0
}

complete -F _climg climg
