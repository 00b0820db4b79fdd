# SPDX-License-Identifier: MIT
# `make install` and `make uninstall` into a temporary DESTDIR (the GNU directory variables),
# and `climg --version`: the version the Makefile computes and the libraries' versions,
# against what dpkg says is installed. Helpers and variables start with in_.

in_d=$T/install
rm -rf "$in_d"
mkdir -p "$in_d"

# in_make ARG...: make in the repository, installing $CLIMG as it is (-o: never rebuilt),
# apart from any make that runs the suite.
in_make() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory \
		-o "$(dirname "$CLIMG")/climg" OUT="$(dirname "$CLIMG")/" "$@"
}

# in_tree NAME DIR LINE...: the files under DIR, "MODE PATH" sorted, are exactly the LINEs.
in_tree() {
	_in=$1
	_dir=$2
	shift 2
	if [ $# -eq 0 ]; then : >"$in_d/want"; else printf '%s\n' "$@" >"$in_d/want"; fi
	(cd "$_dir" && find . -type f -printf '%m %p\n' | sort) >"$in_d/got"
	if cmp -s "$in_d/want" "$in_d/got"; then ok; else
		bad "$_in"
		diff "$in_d/want" "$in_d/got" | sed 's/^/    | /' | head -n 8
	fi
}

# ---- PREFIX and DESTDIR ------------------------------------------------------------------------
check "make install PREFIX=/usr DESTDIR=..." in_make install PREFIX=/usr DESTDIR="$in_d/a"
in_tree "the installed tree" "$in_d/a" \
	"644 ./usr/share/bash-completion/completions/climg" \
	"644 ./usr/share/man/man1/climg.1" \
	"755 ./usr/bin/climg"
check "the binary installed is the one built" cmp "$CLIMG" "$in_d/a/usr/bin/climg"
check "the man page installed" cmp man/climg.1 "$in_d/a/usr/share/man/man1/climg.1"
check "the completion installed" cmp completion/climg.bash \
	"$in_d/a/usr/share/bash-completion/completions/climg"
check "the installed completion registers itself" bash -c \
	". '$in_d/a/usr/share/bash-completion/completions/climg' && complete -p climg"
expect_exit 0 "the installed binary runs" "$in_d/a/usr/bin/climg" --version
check "make uninstall with the same variables" in_make uninstall PREFIX=/usr DESTDIR="$in_d/a"
in_tree "make uninstall leaves no file" "$in_d/a"
check "make uninstall of what is not there succeeds" in_make uninstall PREFIX=/usr \
	DESTDIR="$in_d/a"

# ---- the GNU directory variables --------------------------------------------------------------
check "make install prefix= bindir= mandir= datarootdir=" in_make install DESTDIR="$in_d/b" \
	prefix=/opt/c bindir=/opt/c/sbin mandir=/opt/c/man datarootdir=/opt/c/data
in_tree "the tree the variables name" "$in_d/b" \
	"644 ./opt/c/data/bash-completion/completions/climg" \
	"644 ./opt/c/man/man1/climg.1" \
	"755 ./opt/c/sbin/climg"
check "INSTALL_PROGRAM installs the binary" in_make install DESTDIR="$in_d/c" \
	INSTALL_PROGRAM="install -m 700"
check "...with its mode" test "$(stat -c %a "$in_d/c/usr/local/bin/climg")" = 700
check "the default prefix is /usr/local" test -f "$in_d/c/usr/local/share/man/man1/climg.1"
check "make uninstall with the variables" in_make uninstall DESTDIR="$in_d/b" \
	prefix=/opt/c bindir=/opt/c/sbin mandir=/opt/c/man datarootdir=/opt/c/data
in_tree "...leaves no file" "$in_d/b"

# ---- the version -------------------------------------------------------------------------------
# in_version ARG...: the CLIMG_VERSION the Makefile computes with ARG...
in_version() {
	in_make -pnq "$@" all 2>/dev/null | sed -n 's/^CLIMG_VERSION := //p'
}
in_rel=$(sed -n 's/^VERSION *:= *//p' Makefile)
check "the Makefile has a release version X.Y.Z" sh -c "echo '$in_rel' | grep -Eqx '[0-9]+\.[0-9]+\.[0-9]+'"
check "debian/changelog's version is the Makefile's" \
	test "$(sed -n '1s/^climg (\([^)]*\)).*/\1/p' debian/changelog)" = "$in_rel"
check "without git, the release version" test "$(in_version GIT_DESCRIBE=)" = "$in_rel"
check "a tag: its describe without the v" \
	test "$(in_version GIT_DESCRIBE=v1.2.3-4-gabc1234-dirty)" = "1.2.3-4-gabc1234-dirty"
check "no tag: the release version and the commit" \
	test "$(in_version GIT_DESCRIBE=abc1234-dirty)" = "$in_rel-gabc1234-dirty"

"$CLIMG" --version >"$in_d/version" 2>&1
check "--version: 6 lines" test "$(wc -l <"$in_d/version")" = 6
check "--version: climg's version first" sh -c "head -n 1 '$in_d/version' | grep -Eqx 'climg [0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?'"
for l in libpng libjpeg-turbo libdeflate zlib opencl-icd-loader; do
	check "--version names $l" grep -Eq "^$l [0-9]+\.[0-9]+(\.[0-9]+)?( |\$)" "$in_d/version"
done
# in_pkg NAME PACKAGE: --version's number for NAME starts dpkg's version of PACKAGE (its
# epoch removed), where dpkg knows the package.
in_pkg() {
	_v=$(dpkg-query -W -f='${Version}' "$2" 2>/dev/null) || return 0
	_v=${_v#*:}
	_got=$(sed -n "s/^$1 \([^ ]*\).*/\1/p" "$in_d/version")
	case $_v in
	"$_got"[-+~.]* | "$_got") ok ;;
	*) bad "--version: $1 $_got, but $2 is $_v" ;;
	esac
}
if command -v dpkg-query >/dev/null; then
	in_pkg libpng libpng16-16
	in_pkg libjpeg-turbo libjpeg62-turbo-dev
	in_pkg libdeflate libdeflate-dev
	in_pkg zlib zlib1g
	in_pkg opencl-icd-loader ocl-icd-libopencl1
fi
if command -v python3 >/dev/null; then
	check "--version: zlib is the one running (python3's zlib)" grep -qx \
		"zlib $(python3 -c 'import zlib; print(zlib.ZLIB_RUNTIME_VERSION)')" "$in_d/version"
fi
