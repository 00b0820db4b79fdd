#!/bin/sh
# SPDX-License-Identifier: MIT
# Proves the README's set-up on a fresh Debian 12: builds a minimal root with debootstrap
# (--variant=minbase, plus gcc and make), puts the committed HEAD of this repository in
# /root/climg there, and runs in a chroot, as root, exactly the README's set-up line and then
# its test command. Passes only when both exit 0 and the suite's last line reads
# "N passed, 0 failed". Needs root, debootstrap and the Debian mirror over the network.
# Whatever happens (a failure, Ctrl-C), the processes left in the root are killed, its mounts
# undone and the root removed.
#
# Environment:
#   CHECK_FRESH_CACHE=DIR   reuse what an earlier run with the same DIR downloaded: the base
#                           root (minbase, gcc, make) as DIR/base.tar and every .deb under
#                           DIR/debs (default: none, so the root and its packages are fresh)
#   CHECK_FRESH_MIRROR=URL  the Debian mirror (default http://deb.debian.org/debian)
#   CHECK_FRESH_TMP=DIR     where the root is built (default /var/tmp; about 1.5 GiB)
#   CHECK_FRESH_THEN=CMD    once the README's commands passed, run the shell command CMD in
#                           the same root too, e.g. CHECK_FRESH_THEN=.ci/run
set -eu
cd "$(dirname "$0")/.."
repo=$(pwd)
mirror=${CHECK_FRESH_MIRROR:-http://deb.debian.org/debian}
cache=${CHECK_FRESH_CACHE:-}
say() { echo "check-fresh: $*"; }
die() {
	echo "check-fresh: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, mount and chroot)"
command -v debootstrap >/dev/null || die "debootstrap is not installed (Debian: apt-get install debootstrap)"
commit=$(git rev-parse HEAD) || die "not a git checkout: it tests the committed HEAD"
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	say "uncommitted changes are not tested: this tests commit $commit"
if [ -n "$cache" ]; then
	mkdir -p "$cache/debs/base" "$cache/debs/apt/partial"
	cache=$(cd "$cache" && pwd)
fi

work=$(mktemp -d "${CHECK_FRESH_TMP:-/var/tmp}/climg-fresh.XXXXXX")
root=$work/root
mounts=""

# Kills what still runs inside the root, undoes the mounts (last first) and removes the
# work directory, but never while anything under it is still mounted.
cleanup() {
	_rc=$?
	trap - EXIT INT TERM HUP
	set +e
	for _sig in TERM KILL; do
		for _p in /proc/[0-9]*; do
			[ "$(readlink "$_p/root" 2>/dev/null)" = "$root" ] && kill -s "$_sig" "${_p#/proc/}" 2>/dev/null
		done
		sleep 1
	done
	for _m in $mounts; do
		umount "$_m" 2>/dev/null || umount -l "$_m" || say "cannot unmount $_m"
	done
	if awk -v r="$root/" 'index($2 "/", r) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
		say "still mounted under $root: not removing $work"
	else
		rm -rf --one-file-system "$work"
	fi
	exit "$_rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

t_start=$(date +%s)
elapsed() { echo "$(($(date +%s) - $1)) s"; }

# ---- the base root: minbase plus gcc and make ------------------------------------------------
t0=$(date +%s)
mkdir -p "$root"
if [ -n "$cache" ] && [ -f "$cache/base.tar" ]; then
	say "base root from $cache/base.tar"
	tar -C "$root" --numeric-owner -xpf "$cache/base.tar"
else
	say "debootstrap --variant=minbase --include=gcc,make bookworm from $mirror"
	debootstrap --variant=minbase --include=gcc,make \
		${cache:+--cache-dir="$cache/debs/base"} bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
		{
			tail -n 20 "$work/debootstrap.log" >&2
			die "debootstrap failed"
		}
	if [ -n "$cache" ]; then
		tar -C "$root" --numeric-owner -cpf "$cache/base.tar.tmp" . && mv "$cache/base.tar.tmp" "$cache/base.tar"
	fi
fi
say "base root ready in $(elapsed "$t0")"
cp /etc/resolv.conf "$root/etc/resolv.conf"

# ---- the repository: the committed HEAD, as a clone would give it ---------------------------
mkdir "$root/root/climg"
git archive --format=tar HEAD | tar -C "$root/root/climg" -xf -
say "commit $commit in /root/climg"

# ---- what a booted machine has mounted, that PoCL and the tests use -----------------------
# mnt ARGS... DIR: mounts, remembers DIR for cleanup and makes DIR private, so that nothing
# mounted under a bind of /dev propagates back to the host's /dev (where / is shared).
mnt() {
	mount "$@"
	eval "_last=\${$#}"
	mounts="$_last $mounts"
	mount --make-private "$_last"
}
mnt -t proc proc "$root/proc"
mnt -t sysfs sysfs "$root/sys"
mnt --bind /dev "$root/dev"
mnt --bind /dev/pts "$root/dev/pts"
mnt -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm"
if [ -n "$cache" ]; then
	mnt --bind "$cache/debs/apt" "$root/var/cache/apt/archives"
fi

# in_root CMD: runs the shell command CMD in /root/climg inside the root, as root, with the
# environment of a fresh login. It runs in the background and is waited for, so that a
# signal reaches the trap at once (cleanup then kills what runs in the root).
in_root() {
	chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		sh -c "cd /root/climg && $1" &
	wait $!
}

# ---- the README's two commands, as written there --------------------------------------------
setup=$(sed -n 's/^    \(sh tools\/install-deps\.sh.*\)$/\1/p' "$root/root/climg/README.md" | head -n 1)
[ -n "$setup" ] || die "README.md shows no set-up line (an indented 'sh tools/install-deps.sh ...')"
testcmd="make test"
grep -qx "    $testcmd" "$root/root/climg/README.md" || die "README.md does not show '$testcmd'"

t0=$(date +%s)
say "\$ $setup"
in_root "$setup" || die "the set-up line failed (exit $?) after $(elapsed "$t0")"
say "set-up passed in $(elapsed "$t0")"

t0=$(date +%s)
say "\$ $testcmd"
{
	rc=0
	in_root "$testcmd" 2>&1 || rc=$?
	echo "$rc" >"$work/test.rc"
} | tee "$work/test.log" &
wait $!
rc=$(cat "$work/test.rc")
last=$(tail -n 1 "$work/test.log")
say "$testcmd took $(elapsed "$t0"), exit $rc"
[ "$rc" = 0 ] || die "'$testcmd' failed (exit $rc)"
echo "$last" | grep -Eq '^[0-9]+ passed, 0 failed$' || die "'$testcmd' did not end 'N passed, 0 failed'"
say "a fresh Debian 12 ran the README's set-up and '$testcmd' ($last)"

if [ -n "${CHECK_FRESH_THEN:-}" ]; then
	t0=$(date +%s)
	say "\$ $CHECK_FRESH_THEN"
	in_root "$CHECK_FRESH_THEN" || die "'$CHECK_FRESH_THEN' failed (exit $?) after $(elapsed "$t0")"
	say "'$CHECK_FRESH_THEN' passed in $(elapsed "$t0")"
fi
say "passed in $(elapsed "$t_start")"
