# SPDX-License-Identifier: MIT
# pyref MODULE...: prints the first python (Debian's /usr/bin/python3 first: `python3` on PATH
# may be a shim that does not see Debian's packages) that imports every MODULE, or nothing
# (status 1) when none does; the reference tests then skip with a message.
pyref() {
	for _py in /usr/bin/python3 python3; do
		command -v "$_py" >/dev/null 2>&1 || continue
		_imp=$(printf 'import %s;' "$@")
		if "$_py" -c "$_imp" >/dev/null 2>&1; then
			echo "$_py"
			return 0
		fi
	done
	return 1
}
