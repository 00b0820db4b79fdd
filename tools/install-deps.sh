#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the Debian 12 packages climg needs to build and test, where missing.
# Run as root (or with sudo available).
set -eu
PKGS="make gcc pkg-config ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo
libpng-dev libjpeg62-turbo-dev libdeflate-dev zlib1g-dev libstb-dev groff-base
clang libclang-rt-14-dev valgrind nettle-dev"
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
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
