# SPDX-License-Identifier: MIT
# Helpers shared by the tests/t-*.sh files, sourced by tests/run.sh.
# Each check adds one to $pass or $fail; a failure prints one "FAIL: ..." line.
# $T is a scratch directory, $CLIMG the binary, $IMGTOOL the test image tool.

pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	echo "FAIL: $*"
}

# need_opencl WHAT: returns 0 when there is an OpenCL device. Without one it returns 1
# after saying that WHAT is skipped if CLIMG_TEST_NO_OPENCL=1 (the caller then stops:
# `need_opencl "..." || { return 0 2>/dev/null || exit 0; }`), else counts a failure and
# returns 0, so that a machine that lost its device fails loudly.
need_opencl() {
	"$CLIMG" --list-devices | grep -q '^0: ' && return 0
	if [ "${CLIMG_TEST_NO_OPENCL:-0}" = 1 ]; then
		echo "skipping $1: no device and CLIMG_TEST_NO_OPENCL=1"
		return 1
	fi
	bad "no OpenCL device (install pocl-opencl-icd, or set CLIMG_TEST_NO_OPENCL=1)"
	return 0
}

# have_groff WHAT: returns 0 when groff is installed; else counts one failure that says
# WHAT cannot run, and returns 1 (the caller skips those checks: `if have_groff "..."; then`).
have_groff() {
	command -v groff >/dev/null && return 0
	bad "groff is not installed (Debian: groff-base), so $1 cannot run"
	return 1
}

# need_python WHAT MODULE...: sets PYTHON to the first of Debian's /usr/bin/python3 and the
# python3 on PATH (which may be another install, blind to Debian's python3-* packages) that
# imports every MODULE, and returns 0; else says that WHAT is skipped and returns 1 (the
# caller skips those checks: `if need_python "..." json; then`). tools/install-deps.sh
# installs python3 with numpy and PIL, so the tests use them as independent references.
need_python() {
	_np_what=$1
	shift
	_np_mods=""
	for _np_m in "$@"; do _np_mods="$_np_mods${_np_mods:+, }$_np_m"; done
	for _np_py in /usr/bin/python3 python3; do
		if command -v "$_np_py" >/dev/null 2>&1 && "$_np_py" -c "import $_np_mods" >/dev/null 2>&1; then
			PYTHON=$_np_py
			return 0
		fi
	done
	echo "skipping $_np_what: no python3 that imports $_np_mods (sh tools/install-deps.sh installs one)"
	PYTHON=""
	return 1
}

# c_checks NAME OUT CMD...: runs a C test program (tests/check.h: one "PASS name" or
# "FAIL name: why" line per check) with its output in OUT and adds its lines to the counts,
# each failure shown as "FAIL: NAME: ..."; an exit status other than 0 without a FAIL line
# (a crash) is one more failure, shown with the output's last lines.
c_checks() {
	_cc_name=$1
	_cc_out=$2
	shift 2
	"$@" >"$_cc_out" 2>&1
	_cc_rc=$?
	pass=$((pass + $(grep -c '^PASS ' "$_cc_out")))
	grep '^FAIL ' "$_cc_out" | sed "s|^FAIL |FAIL: $_cc_name: |"
	fail=$((fail + $(grep -c '^FAIL ' "$_cc_out")))
	if [ "$_cc_rc" != 0 ] && ! grep -q '^FAIL ' "$_cc_out"; then
		bad "$_cc_name: exited $_cc_rc"
		tail -n 5 "$_cc_out"
	fi
}

# check NAME CMD...: passes when CMD exits 0.
check() {
	_name=$1
	shift
	if "$@" >"$T/check.out" 2>&1; then ok; else
		bad "$_name"
		sed 's/^/    | /' "$T/check.out" | head -n 5
	fi
}

# check_not NAME CMD...: passes when CMD exits non-zero.
check_not() {
	_name=$1
	shift
	if "$@" >"$T/check.out" 2>&1; then bad "$_name (succeeded, should not)"; else ok; fi
}

# expect_exit CODE NAME CMD...: runs CMD with stdout in $T/out and stderr in $T/err and
# passes when it exits with CODE.
expect_exit() {
	_code=$1
	_name=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	_rc=$?
	if [ "$_rc" = "$_code" ]; then ok; else
		bad "$_name (exit $_rc, want $_code)"
		sed 's/^/    | /' "$T/err" | head -n 5
	fi
}

# expect_stderr NAME PATTERN: passes when $T/err (from the last expect_exit) matches the
# grep -E PATTERN.
expect_stderr() {
	if grep -Eq -- "$2" "$T/err"; then ok; else
		bad "$1 (stderr does not match '$2')"
		sed 's/^/    | /' "$T/err" | head -n 5
	fi
}

# same_pixels NAME A B: passes when two image files decode to the same geometry and bytes.
same_pixels() {
	_name=$1
	if "$IMGTOOL" cmp "$2" "$3" >"$T/check.out" 2>&1; then ok; else
		bad "$_name"
		sed 's/^/    | /' "$T/check.out" | head -n 5
	fi
}
