#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Documentation of what the series adds, on the applied tree ($KSERIES_TREE):
#   review:docs:<patch>   each sysfs attribute the patch adds (DEVICE_ATTR*,
#                         __ATTR*, attribute .name = "...") is a What: entry
#                         of Documentation/ABI at the tip of the series, and
#                         each debugfs file it adds (debugfs_create_*("..."))
#                         is named in Documentation/
#   review:docs:abi       tools/docs/get_abi.py validate finds nothing new
#   review:docs:rst       the .rst files the series touches parse with
#                         docutils (Sphinx-only directives and roles aside)
# Prints result lines (STATUS<TAB>NAME<TAB>DETAIL).
. "$(dirname "$0")/lib.sh"

result() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}"; }

mapfile -t commits < <(ktree_git rev-list --reverse "$KSERIES_BASE_TAG..$KSERIES_BRANCH")
mapfile -t names < <(series_patches)
tip=$KSERIES_BRANCH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The ABI and documentation text at the tip.
ktree_git archive "$tip" Documentation | tar -x -C "$tmp"
abi_whats=$(grep -rh '^What:' "$tmp/Documentation/ABI" | sed 's/^What:[[:space:]]*//')

for i in "${!commits[@]}"; do
	c=${commits[$i]} p=${names[$i]}
	plus=$(ktree_git show --format= "$c" -- 'drivers/' 'mm/' 'lib/' 'kernel/' 'fs/' | grep '^+' || true)
	missing=
	sysfs=$( {
		sed -n -E 's/.*\b(DEVICE|DRIVER|BUS|CLASS)_ATTR(_RO|_RW|_WO|_ADMIN_RO|_ADMIN_RW)?\(\s*([A-Za-z0-9_]+).*/\3/p' <<<"$plus"
		sed -n -E 's/.*\b__ATTR(_RO|_RW|_WO|_RO_MODE|_RW_MODE)?\(\s*([A-Za-z0-9_]+).*/\2/p' <<<"$plus"
		sed -n -E 's/.*attr[A-Za-z0-9_]*\.name\s*=\s*"([A-Za-z0-9_.-]+)".*/\1/p' <<<"$plus"
	} | sort -u)
	for a in $sysfs; do
		grep -qE "/$a\$" <<<"$abi_whats" || missing+="sysfs $a; "
	done
	dbg=$(sed -n -E 's/.*\bdebugfs_create_[a-z0-9_]+\(\s*"([A-Za-z0-9_.-]+)".*/\1/p' <<<"$plus" | sort -u)
	for a in $dbg; do
		grep -rqw -- "$a" "$tmp/Documentation" || missing+="debugfs $a; "
	done
	n=$(wc -w <<<"$sysfs $dbg")
	if [ -z "$missing" ]; then
		result PASS "review:docs:$p" "$n new sysfs/debugfs files, all documented"
	else
		result FAIL "review:docs:$p" "undocumented: $missing"
	fi
done

# ABI files: the validator's warnings, tip against base.
abi_warnings() {
	local d=$tmp/abi-$1
	mkdir -p "$d"
	ktree_git archive "$1" Documentation/ABI tools/docs tools/lib/python 2>/dev/null | tar -x -C "$d" 2>/dev/null
	(cd "$d" && PYTHONDONTWRITEBYTECODE=1 python3 tools/docs/get_abi.py -D Documentation/ABI validate 2>&1) |
		sed 's/:[0-9]\+//g' | sort
}
new=$(comm -13 <(abi_warnings "$KSERIES_BASE_TAG") <(abi_warnings "$tip"))
if [ -z "$new" ]; then
	result PASS review:docs:abi "get_abi.py validate: nothing new"
else
	result FAIL review:docs:abi "$(head -n 3 <<<"$new" | tr '\n' ' ')"
fi

# rst the series touches.
rsts=$(ktree_git diff --name-only --diff-filter=AM "$KSERIES_BASE_TAG" "$tip" -- '*.rst')
bad=
for f in $rsts; do
	out=$(python3 - "$tmp/$f" <<'PY' 2>&1
import sys
import docutils.core, docutils.utils
src = open(sys.argv[1]).read()
msgs = []
class Stream:
    def write(self, s):
        msgs.append(s)
docutils.core.publish_doctree(src, source_path=sys.argv[1],
    settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": Stream()})
sphinx_only = ("Unknown directive type", "Unknown interpreted text role",
               'No directive entry for', 'No role entry for', 'Trying "',
               '.. kernel-doc::', '.. toctree::', '.. c:', ':c:', ':ref:', ':doc:')
out = []
for m in "".join(msgs).split("\n" + sys.argv[1]):
    if m.strip() and not any(s in m for s in sphinx_only):
        out.append(m.strip())
print("\n".join(out))
PY
)
	[ -z "$out" ] || bad+="$f: $(head -n 2 <<<"$out" | tr '\n' ' '); "
done
if [ -z "$bad" ]; then
	result PASS review:docs:rst "$(wc -w <<<"$rsts") rst files"
else
	result FAIL review:docs:rst "$bad"
fi
