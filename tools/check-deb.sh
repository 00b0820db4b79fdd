#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs a climg package into a fresh Debian 12 root and runs it there:
#   sh tools/check-deb.sh build-deb/climg_0.1.0_amd64.deb     (what `make check-deb` runs)
# debootstrap makes a minbase bookworm root, apt installs the package there (so its Depends
# are resolved from the archive), man-db and bash-completion; then it checks climg --version
# (the package's version), a chain on testdata/f-rgb.png (the same bytes as the package's
# binary gives outside), `man -w climg`, and the completion of `climg IMG rotate:` through
# bash-completion's loader. Recommends are not installed (no OpenCL driver: the chain falls
# back to the CPU path), unless CHECK_DEB_RECOMMENDS=1 (PoCL: the chain runs on it too, with
# --verify). Needs root, debootstrap and the network; CHECK_DEB_MIRROR picks the mirror
# (default http://deb.debian.org/debian). The root is removed at the end, whatever happens.
set -eu

say() { echo "check-deb: $*"; }
die() {
	echo "check-deb: $*" >&2
	exit 1
}

[ $# -eq 1 ] || die "usage: check-deb.sh PACKAGE.deb"
deb=$1
[ -f "$deb" ] || die "no package '$deb' (make deb builds it)"
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null || die "debootstrap is missing; as root: apt-get install debootstrap"
mirror=${CHECK_DEB_MIRROR:-http://deb.debian.org/debian}
version=$(dpkg-deb -f "$deb" Version)
t0=$(date +%s)

work=$(mktemp -d "${TMPDIR:-/tmp}/climg-check-deb.XXXXXX")
root=$work/root
# Unmounts what was mounted in the root, then removes it: never removes a root that still
# has a mount in it (a bound /dev or /sys would go with it).
cleanup() {
	for m in "$root/dev" "$root/proc" "$root/sys"; do
		if mountpoint -q "$m" 2>/dev/null; then
			umount "$m" || umount -l "$m" || true
		fi
	done
	if grep -q " $root/" /proc/mounts; then
		echo "check-deb: $root still has mounts; not removed" >&2
		return
	fi
	rm -rf --one-file-system "$work"
}
trap 'cleanup' EXIT
trap 'exit 1' INT TERM HUP

say "debootstrap bookworm (minbase) from $mirror"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
	tail -n 20 "$work/debootstrap.log" >&2
	die "debootstrap failed"
}
t1=$(date +%s)
# /sys: PoCL's hwloc reads the CPU topology there, and aborts without it
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /sys "$root/sys"

in_root() {
	chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@"
}

pkg=$(basename "$deb")
cp "$deb" "$root/tmp/$pkg"
cp testdata/f-rgb.png "$root/tmp/f-rgb.png"
recommends=--no-install-recommends
[ "${CHECK_DEB_RECOMMENDS:-0}" = 1 ] && recommends=""
say "apt-get install /tmp/$pkg man-db bash-completion $recommends"
{
	in_root apt-get -o Acquire::Check-Valid-Until=false update -q &&
		in_root apt-get install -y -q $recommends man-db bash-completion "/tmp/$pkg"
} >"$work/apt.log" 2>&1 || {
	tail -n 20 "$work/apt.log" >&2
	die "apt-get install failed"
}
t2=$(date +%s)

fails=0
check() {
	_name=$1
	shift
	if "$@" >"$work/out" 2>&1; then
		say "ok: $_name"
	else
		say "FAIL: $_name"
		sed 's/^/    | /' "$work/out" | head -n 10
		fails=$((fails + 1))
	fi
}

check "climg --version is climg $version" \
	sh -c "chroot '$root' climg --version | tee /dev/stderr | head -n 1 | grep -qx 'climg $version'"
# the reference: the same binary, run outside, on the CPU path
mkdir -p "$work/x"
dpkg-deb -x "$deb" "$work/x"
"$work/x/usr/bin/climg" --cpu testdata/f-rgb.png grey rotate:90 -o "$work/want.png"
check "a chain in the root (the CPU path unless PoCL is installed)" \
	in_root climg /tmp/f-rgb.png grey rotate:90 -o /tmp/out.png
check "...gives the bytes the binary gives outside" cmp "$work/want.png" "$root/tmp/out.png"
if [ -z "$recommends" ]; then
	check "the chain on PoCL, verified against the CPU path" \
		in_root climg /tmp/f-rgb.png grey rotate:90 --verify -o /tmp/out-ocl.png
	check "...the same bytes" cmp "$work/want.png" "$root/tmp/out-ocl.png"
fi
check "man -w climg finds the man page" \
	sh -c "chroot '$root' man -w climg | grep -qx /usr/share/man/man1/climg.1.gz"
cat >"$root/tmp/complete.bash" <<'EOF'
. /usr/share/bash-completion/bash_completion
_completion_loader climg
complete -p climg
COMP_LINE="climg /tmp/f-rgb.png rotate:"
COMP_POINT=${#COMP_LINE}
COMP_WORDS=(climg /tmp/f-rgb.png rotate :)
COMP_CWORD=3
_climg climg : rotate
echo "${COMPREPLY[*]}"
EOF
check "bash completes 'climg IMG rotate:' to 90 180 270" \
	sh -c "chroot '$root' bash /tmp/complete.bash | tee /dev/stderr | tail -n 1 | grep -qx '90 180 270'"
t3=$(date +%s)

say "debootstrap $((t1 - t0)) s, apt-get $((t2 - t1)) s, checks $((t3 - t2)) s, total $((t3 - t0)) s"
[ "$fails" = 0 ] || die "$fails check(s) failed"
say "all checks passed"
