#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage docs: documentation and MAINTAINERS of what the series adds, on the
# applied tree ($KSERIES_WORKTREE):
#   docs:<patch>            each sysfs attribute the patch adds (DEVICE_ATTR*,
#                           __ATTR*, attribute .name = "...") is a What: entry
#                           of Documentation/ABI at the tip of the series, and
#                           each debugfs file it adds (debugfs_create_*("..."))
#                           is named in a Documentation/ file the series
#                           writes
#   docs:abi                tools/docs/get_abi.py validate finds nothing new
#   docs:rst                the .rst files the series touches parse with
#                           docutils (Sphinx-only directives and roles aside)
#   docs:maintainers:coverage   every file the series adds is in a
#                               MAINTAINERS section (not only THE REST)
#   docs:maintainers:fragment   MAINTAINERS.fragment lists exactly the
#                               lines the series adds to MAINTAINERS,
#                               under the section they go to
. "$(dirname "$0")/../lib.sh"

mapfile -t commits < <(ktree_git rev-list --reverse "$KSERIES_BASE_TAG..$KSERIES_BRANCH")
mapfile -t names < <(series_patches)
[ ${#commits[@]} -eq ${#names[@]} ] && [ ${#commits[@]} -gt 0 ] ||
	die "branch $KSERIES_BRANCH has ${#commits[@]} commits, series lists ${#names[@]} patches"
tip=$KSERIES_BRANCH
tmp=$(scratch_dir docs) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The ABI and documentation text at the tip, and the documentation files
# the series writes (a debugfs file must be named in one of those).
ktree_git archive "$tip" Documentation | tar -x -C "$tmp" || die "git archive of Documentation failed"
abi_whats=$(grep -rh '^What:' "$tmp/Documentation/ABI" | sed 's/^What:[[:space:]]*//')
[ -n "$abi_whats" ] || die "no What: lines in Documentation/ABI at the tip"
docs_changed=$(ktree_git diff --name-only --diff-filter=AM "$KSERIES_BASE_TAG" "$tip" -- Documentation/ | sed "s|^|$tmp/|")

for i in "${!commits[@]}"; do
	c=${commits[$i]} p=${names[$i]}
	diff=$(ktree_git show --format= "$c" -- 'drivers/' 'mm/' 'lib/' 'kernel/' 'fs/') || die "git show $c failed"
	plus=$(grep '^+' <<<"$diff")
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
		# shellcheck disable=SC2086
		[ -n "$docs_changed" ] && grep -qw -- "$a" $docs_changed ||
			missing+="debugfs $a (in no Documentation file the series writes); "
	done
	n=$(wc -w <<<"$sysfs $dbg")
	if [ -z "$missing" ]; then
		result PASS "docs:$p" "$n new sysfs/debugfs files, all documented"
	else
		result FAIL "docs:$p" "undocumented: $missing"
	fi
done

# ABI files: the validator's warnings, tip against base.  The validator
# must run (status 0) on both.
abi_warnings() {
	local d=$tmp/abi-$1
	mkdir -p "$d"
	ktree_git archive "$1" Documentation/ABI tools/docs tools/lib/python | tar -x -C "$d" || return 1
	(cd "$d" && python3 tools/docs/get_abi.py -D Documentation/ABI validate) >"$d.out" 2>&1 || {
		tail -n 3 "$d.out" >&2
		return 1
	}
	sed 's/:[0-9]\+//g' "$d.out" | sort >"$d.sorted"
}
if ! abi_warnings "$KSERIES_BASE_TAG" || ! abi_warnings "$tip"; then
	result FAIL docs:abi "tools/docs/get_abi.py validate failed to run"
elif new=$(comm -13 "$tmp/abi-$KSERIES_BASE_TAG.sorted" "$tmp/abi-$tip.sorted") && [ -z "$new" ]; then
	result PASS docs:abi "get_abi.py validate: nothing new"
else
	result FAIL docs:abi "$(head -n 3 <<<"$new" | tr '\n' ' ')"
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
	result PASS docs:rst "$(wc -w <<<"$rsts") rst files"
else
	result FAIL docs:rst "$bad"
fi

# MAINTAINERS: every new file is in a section other than THE REST.
ktree_git show "$KSERIES_BRANCH:MAINTAINERS" >"$tmp/MAINTAINERS"
added=$(ktree_git diff --name-only --diff-filter=A "$KSERIES_BASE_TAG" "$KSERIES_BRANCH")
orphans=
for f in $added; do
	secs=$(cd "$KSERIES_WORKTREE" && HOME=$tmp perl scripts/get_maintainer.pl --mpath "$tmp/MAINTAINERS" --no-git --no-git-fallback \
			--no-email --no-l --no-s --subsystem --no-tree -f "$f" 2>/dev/null | grep -v '^THE REST$')
	[ -n "$secs" ] || orphans+="$f "
done
if [ -z "$orphans" ]; then
	result PASS docs:maintainers:coverage "$(wc -w <<<"$added") new files, all in a MAINTAINERS section"
else
	result FAIL docs:maintainers:coverage "in no MAINTAINERS section: $orphans"
fi

# "SECTION<TAB>line" for each line the series adds to MAINTAINERS.
added_lines() {
	ktree_git diff -U1000000 "$KSERIES_BASE_TAG" "$KSERIES_BRANCH" -- MAINTAINERS |
		awk 'NR > 5 || !/^(diff|index|---|\+\+\+|@@)/ {
			if (/^(diff|index|--- |\+\+\+ |@@)/) next
			l = substr($0, 2)
			if (l !~ /^[A-Z]:\t/ && l != "") sec = l
			if (substr($0, 1, 1) == "+") printf "%s\t%s\n", sec, l
		}'
}
fragment_lines() {
	awk '/^#/ || /^$/ { next } !/^[A-Z]:\t/ { sec = $0; next } { printf "%s\t%s\n", sec, $0 }' \
		"$KSERIES_REPO/MAINTAINERS.fragment"
}
if [ ! -f "$KSERIES_REPO/MAINTAINERS.fragment" ]; then
	result FAIL docs:maintainers:fragment "no MAINTAINERS.fragment"
elif d=$(diff <(fragment_lines) <(added_lines)); then
	result PASS docs:maintainers:fragment "$(fragment_lines | wc -l) lines"
else
	result FAIL docs:maintainers:fragment "MAINTAINERS.fragment differs from what the series adds: $(tr '\n' ' ' <<<"$d")"
fi
