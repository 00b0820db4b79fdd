# SPDX-License-Identifier: MIT
# The program binary cache: one entry per program, later runs load it (--time counts the
# programs it gave), --no-cache neither reads nor writes it, the bytes never change, bad
# entries (truncated, flipped bytes, stale) are rebuilt silently, concurrent runs share it,
# an unusable directory is ignored, the directory is chosen from CLIMG_CACHE_DIR,
# XDG_CACHE_HOME and HOME. Needs an OpenCL device, like t-opencl.sh.

D=$T/cache-t
mkdir -p "$D"
need_opencl "cache tests" || { return 0 2>/dev/null || exit 0; }
# The automatic choice would run these small images on the CPU path; the test setting
# CLIMG_AUTO_SWITCH=0 makes the device it opens take every chain from its first stage,
# fallback included, unless a command says otherwise (unset again at the end).
CLIMG_AUTO_SWITCH=0
export CLIMG_AUTO_SWITCH

# cached_run NAME DIR FILE [ARGS...]: climg on the test image through CHAIN with cache DIR,
# output FILE, --time; passes when it exits 0 and prints nothing but the timing lines.
CHAIN="grey rotate:30 transpose rotate:90" # three programs: grey, rotate, transpose
cached_run() {
	_name=$1
	_dir=$2
	_file=$3
	shift 3
	# shellcheck disable=SC2086
	expect_exit 0 "$_name" env CLIMG_CACHE_DIR="$_dir" "$CLIMG" "$D/in.png" $CHAIN --time \
		-o "$_file" "$@"
	if grep -v '^climg: time: ' "$T/err" | grep -q .; then
		bad "$_name: prints more than the timing"
		sed 's/^/    | /' "$T/err" | head -n 5
	else
		ok
	fi
}

# from_cache NAME N: the last run loaded N of its 3 programs from the cache.
from_cache() {
	expect_stderr "$1" "^climg: time: build +[0-9.]+ ms  $2 of 3 programs from the cache$"
}

# entries DIR: the number of cache entries in DIR; temporaries DIR: leftover temporary files.
entries() { find "$1" -name '*.clbin' | wc -l; }
temporaries() { find "$1" -name '*.tmp.*' | wc -l; }

# flip FILE OFFSET: inverts the byte at OFFSET.
flip() {
	_b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	# shellcheck disable=SC2059
	printf "\\$(printf %o $((_b ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

"$IMGTOOL" make 37 23 3 noise:61 "$D/in.png"
# shellcheck disable=SC2086
"$CLIMG" --cpu "$D/in.png" $CHAIN -o "$D/cpu.png"

# ---- a first run fills the cache, a second one loads it -------------------------------------
C=$D/c
cached_run "cache: first run" "$C" "$D/first.png"
from_cache "cache: first run compiles every program" 0
check "cache: first run gives the CPU bytes" cmp "$D/first.png" "$D/cpu.png"
check "cache: one entry per program" test "$(entries "$C")" = 3
for p in grey rotate transpose; do
	check "cache: $p has its entry" sh -c "ls '$C' | grep -Eq '^$p-[0-9a-f]{16}\\.clbin\$'"
done
check "cache: no temporary file left" test "$(temporaries "$C")" = 0
check "cache: directory mode 0700" test "$(stat -c %a "$C")" = 700
check "cache: entries are private" test "$(stat -c %a "$C"/grey-*.clbin)" = 600
mkdir -p "$D/good"
cp -p "$C"/*.clbin "$D/good/"

cached_run "cache: second run" "$C" "$D/second.png"
from_cache "cache: second run loads every program" 3
check "cache: cached programs give the same bytes" cmp "$D/second.png" "$D/cpu.png"
check "cache: a hit rewrites nothing" sh -c "for f in '$D'/good/*.clbin; do cmp \"\$f\" '$C'/\$(basename \"\$f\") || exit 1; done"
expect_exit 0 "cache: --time=json" env CLIMG_CACHE_DIR="$C" "$CLIMG" "$D/in.png" grey --time=json
expect_stderr "cache: --time=json counts the programs" '"build_ms": [0-9.]+, "programs": 1, "programs_cached": 1,'
# shellcheck disable=SC2086
expect_exit 0 "cache: --verify with a full cache" env CLIMG_CACHE_DIR="$C" "$CLIMG" "$D/in.png" $CHAIN --verify -o "$D/verify.png"
check "cache: --verify output" cmp "$D/verify.png" "$D/cpu.png"

# ---- --no-cache -------------------------------------------------------------------------------
cached_run "cache: --no-cache with a full cache" "$C" "$D/nc.png" --no-cache
from_cache "cache: --no-cache reads nothing" 0
check "cache: --no-cache gives the same bytes" cmp "$D/nc.png" "$D/cpu.png"
cached_run "cache: --no-cache with a new directory" "$D/none" "$D/nc2.png" --no-cache
check_not "cache: --no-cache creates no directory" test -e "$D/none"

# ---- the same bytes with and without the cache, odd sizes, 1-4 channels ----------------------
for size in 1x1 1x17 17x1 13x7; do
	for ch in 1 2 3 4; do
		"$IMGTOOL" make "${size%x*}" "${size#*x}" "$ch" noise:$((ch + 7)) "$D/odd.png"
		# shellcheck disable=SC2086
		CLIMG_CACHE_DIR="$C" "$CLIMG" "$D/odd.png" $CHAIN -o "$D/odd-c.png" &&
			"$CLIMG" "$D/odd.png" $CHAIN --no-cache -o "$D/odd-n.png"
		check "cache: $size ch=$ch same bytes with and without" cmp "$D/odd-c.png" "$D/odd-n.png"
	done
done

# ---- a bad entry is rebuilt silently --------------------------------------------------------
# (the entries of the first run: the runs above added others, for other channel counts)
rot=$(basename "$D"/good/rotate-*.clbin)
size=$(stat -c %s "$C/$rot")
# corrupt NAME CMD...: CMD damages $C/$rot; the next run rebuilds rotate quietly and gives the
# same bytes, and the run after loads all three programs again.
corrupt() {
	_what=$1
	shift
	cp "$D/good/$rot" "$C/$rot"
	"$@"
	cached_run "cache: $_what" "$C" "$D/bad.png"
	from_cache "cache: $_what: rotate rebuilt" 2
	check "cache: $_what: same bytes" cmp "$D/bad.png" "$D/cpu.png"
	cached_run "cache: $_what, run after" "$C" "$D/bad.png"
	from_cache "cache: $_what: entry rewritten" 3
}
corrupt "empty entry" truncate -s 0 "$C/$rot"
corrupt "entry cut in the header" truncate -s 20 "$C/$rot"
corrupt "entry cut in half" truncate -s $((size / 2)) "$C/$rot"
corrupt "entry one byte short" truncate -s $((size - 1)) "$C/$rot"
corrupt "entry one byte long" sh -c "printf x >>'$C/$rot'"
# The header: magic at 0, key length at 8, binary length at 16, key hash at 24, binary
# checksum at 32; the key from 40 on.
corrupt "flipped magic" flip "$C/$rot" 0
corrupt "flipped key length" flip "$C/$rot" 8
corrupt "flipped binary length" flip "$C/$rot" 16
corrupt "flipped key hash" flip "$C/$rot" 24
corrupt "flipped binary checksum" flip "$C/$rot" 32
corrupt "flipped key byte" flip "$C/$rot" 100
corrupt "flipped binary byte" flip "$C/$rot" $((size - size / 3))
corrupt "flipped last byte" flip "$C/$rot" $((size - 1))
corrupt "garbage entry" sh -c "head -c $size /dev/urandom >'$C/$rot'"
# A directory in an entry's place cannot be replaced; it is only ignored.
rm -f "$C/$rot"
mkdir "$C/$rot"
cached_run "cache: entry is a directory" "$C" "$D/bad.png"
from_cache "cache: entry is a directory: rotate compiled" 2
check "cache: entry is a directory: same bytes" cmp "$D/bad.png" "$D/cpu.png"
check "cache: entry is a directory: no temporary file left" test "$(temporaries "$C")" = 0
rmdir "$C/$rot"
cp "$D/good/$rot" "$C/$rot"
# A stale entry: whole and well formed, but another program's (another source, as after an
# upgrade). grey's file holding rotate's entry must not load rotate's binary as grey.
grey=$(basename "$D"/good/grey-*.clbin)
cp "$D/good/$rot" "$C/$grey"
cached_run "cache: stale entry" "$C" "$D/stale.png"
from_cache "cache: stale entry rebuilt" 2
check "cache: stale entry: same bytes" cmp "$D/stale.png" "$D/cpu.png"
check "cache: stale entry replaced" sh -c "! cmp -s '$C/$grey' '$D/good/$rot'"
cached_run "cache: stale entry, run after" "$C" "$D/stale.png"
from_cache "cache: stale entry rewritten" 3

# ---- concurrent runs on an empty cache -----------------------------------------------------
P=$D/par
for i in 1 2 3 4; do
	# shellcheck disable=SC2086
	(CLIMG_CACHE_DIR=$P "$CLIMG" "$D/in.png" $CHAIN -o "$D/par$i.png" 2>"$D/par$i.err"
		echo $? >"$D/par$i.rc") &
done
wait
for i in 1 2 3 4; do
	check "cache: concurrent run $i succeeds" test "$(cat "$D/par$i.rc")" = 0
	check "cache: concurrent run $i is silent" test ! -s "$D/par$i.err"
	check "cache: concurrent run $i gives the CPU bytes" cmp "$D/par$i.png" "$D/cpu.png"
done
check "cache: concurrent runs leave one entry per program" test "$(entries "$P")" = 3
check "cache: concurrent runs leave no temporary file" test "$(temporaries "$P")" = 0
cached_run "cache: after the concurrent runs" "$P" "$D/par.png"
from_cache "cache: the concurrent runs' entries load" 3

# ---- an unusable directory is ignored ------------------------------------------------------
: >"$D/file"
cached_run "cache: directory under a file" "$D/file/sub" "$D/u1.png"
check "cache: directory under a file: same bytes" cmp "$D/u1.png" "$D/cpu.png"
mkdir -p "$D/open"
cp "$D/good"/*.clbin "$D/open/"
chmod 777 "$D/open"
cached_run "cache: world-writable directory" "$D/open" "$D/u2.png"
from_cache "cache: a world-writable directory is not read" 0
check "cache: world-writable directory: same bytes" cmp "$D/u2.png" "$D/cpu.png"
if [ "$(id -u)" != 0 ]; then # root writes anywhere
	mkdir -p "$D/ro"
	chmod 500 "$D/ro"
	cached_run "cache: read-only directory" "$D/ro" "$D/u3.png"
	check "cache: read-only directory: same bytes" cmp "$D/u3.png" "$D/cpu.png"
	check "cache: read-only directory stays empty" test "$(entries "$D/ro")" = 0
	chmod 700 "$D/ro"
fi

# ---- test-only fault switches turn the cache off (their call counts stay fixed) ------------
cached_run "cache: fault switch" "$C" "$D/f.png"
from_cache "cache: used without a fault switch" 3
expect_exit 0 "cache: fault switch set" env CLIMG_CACHE_DIR="$C" CLIMG_FAULT_INJECT=1000000 "$CLIMG" "$D/in.png" grey --time
expect_stderr "cache: off under a fault switch" "0 of 1 programs from the cache"

# ---- where the cache lives -----------------------------------------------------------------
# PoCL keeps its own cache under XDG_CACHE_HOME or HOME too: it stays where it was, or these
# runs would compile from nothing.
PCD=${POCL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pocl/kcache}
mkdir -p "$D/cwd"
(cd "$D/cwd" && env -u CLIMG_CACHE_DIR -u XDG_CACHE_HOME POCL_CACHE_DIR="$PCD" HOME="$D/home" "$CLIMG" "$D/in.png" grey -o "$D/h.png")
check "cache: \$HOME/.cache/climg by default" test "$(entries "$D/home/.cache/climg")" = 1
check "cache: \$HOME/.cache made with mode 0700" test "$(stat -c %a "$D/home/.cache")" = 700
(cd "$D/cwd" && env -u CLIMG_CACHE_DIR POCL_CACHE_DIR="$PCD" XDG_CACHE_HOME="$D/xdg" HOME="$D/home2" "$CLIMG" "$D/in.png" grey -o "$D/h.png")
check "cache: \$XDG_CACHE_HOME/climg before \$HOME" test "$(entries "$D/xdg/climg")" = 1
# (only climg's own directory: a driver may keep its own cache under $HOME, as NVIDIA's does)
check_not "cache: \$HOME/.cache/climg unused when \$XDG_CACHE_HOME is set" test -e "$D/home2/.cache/climg"
(cd "$D/cwd" && env POCL_CACHE_DIR="$PCD" CLIMG_CACHE_DIR= XDG_CACHE_HOME=rel HOME="$D/home3" "$CLIMG" "$D/in.png" grey -o "$D/h.png")
check "cache: empty CLIMG_CACHE_DIR and relative XDG_CACHE_HOME are ignored" test "$(entries "$D/home3/.cache/climg")" = 1
check_not "cache: nothing made under a relative XDG_CACHE_HOME" test -e "$D/cwd/rel/climg"
rm -f "$D/h.png"
(cd "$D/cwd" && env -u CLIMG_CACHE_DIR -u XDG_CACHE_HOME -u HOME POCL_CACHE_DIR="$PCD" "$CLIMG" "$D/in.png" grey -o "$D/h.png" 2>"$D/nohome.err")
check "cache: no HOME at all still runs" test $? = 0
check "cache: no HOME at all is silent" test ! -s "$D/nohome.err"
"$CLIMG" --cpu "$D/in.png" grey -o "$D/h-cpu.png"
check "cache: no HOME at all: same bytes" cmp "$D/h.png" "$D/h-cpu.png"
unset CLIMG_AUTO_SWITCH
