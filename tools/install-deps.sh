#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the Debian 12 packages that building climg, running it and `make test` need,
# where missing. With --dev, also the developer tools that `make check-asan`, `make fuzz`,
# `make check-valgrind`, `make check-fresh` and `make check-cluster` need (clang, its
# sanitizer runtimes, llvm-symbolizer for the sanitizers' stack traces, valgrind,
# debootstrap; for check-cluster the engines it runs batches through: slurm-wlm with munge
# for a one-node Slurm cluster, openssh-server for GNU parallel's --sshlogin, jq for the
# man page's report recipes, procps for pgrep). Installing them starts no daemon where
# there is no init system; check-cluster starts and stops its own. Run as root (or with
# sudo available).
set -eu
usage="usage: sh tools/install-deps.sh [--dev]"
dev=0
for a in "$@"; do
	case $a in
	--dev) dev=1 ;;
	-h | --help)
		echo "$usage"
		exit 0
		;;
	*)
		echo "install-deps: unknown option '$a'" >&2
		echo "$usage" >&2
		exit 2
		;;
	esac
done
# Building and running: the compiler, OpenCL (PoCL is a CPU device where there is no GPU)
# and the image libraries. `make test`: groff-base (the man page check), python3 with numpy
# and PIL (independent references in the tests), GNU parallel and nettle-dev (batch runs
# and their SHA-256 reports).
PKGS="make gcc pkg-config ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo
libpng-dev libjpeg62-turbo-dev libdeflate-dev zlib1g-dev libstb-dev groff-base
python3 python3-numpy python3-pil parallel nettle-dev"
DEV_PKGS="clang libclang-rt-14-dev llvm valgrind debootstrap slurm-wlm munge openssh-server jq
procps"
[ "$dev" = 0 ] || PKGS="$PKGS $DEV_PKGS"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "install-deps: all packages present"
	exit 0
fi
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "install-deps: installing$missing"
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
