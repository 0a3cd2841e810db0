#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# MAINTAINERS coverage of the series, on the applied tree ($KSERIES_TREE):
#   review:maintainers:coverage   every file the series adds is in a
#                                 MAINTAINERS section (not only THE REST)
#   review:maintainers:fragment   MAINTAINERS.fragment lists exactly the
#                                 lines the series adds to MAINTAINERS,
#                                 under the section they go to
# Prints result lines (STATUS<TAB>NAME<TAB>DETAIL).
. "$(dirname "$0")/lib.sh"

result() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}"; }

added=$(ktree_git diff --name-only --diff-filter=A "$KSERIES_BASE_TAG" "$KSERIES_BRANCH")
orphans=
for f in $added; do
	secs=$(cd "$KSERIES_TREE" && git show "$KSERIES_BRANCH:MAINTAINERS" >/tmp/kseries-maint.$$ &&
		perl scripts/get_maintainer.pl --mpath /tmp/kseries-maint.$$ --no-git --no-git-fallback \
			--no-email --no-l --no-s --subsystem --no-tree -f "$f" 2>/dev/null | grep -v '^THE REST$')
	[ -n "$secs" ] || orphans+="$f "
done
rm -f /tmp/kseries-maint.$$
if [ -z "$orphans" ]; then
	result PASS review:maintainers:coverage "$(wc -w <<<"$added") new files, all in a MAINTAINERS section"
else
	result FAIL review:maintainers:coverage "in no MAINTAINERS section: $orphans"
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
	result FAIL review:maintainers:fragment "no MAINTAINERS.fragment"
elif d=$(diff <(fragment_lines) <(added_lines)); then
	result PASS review:maintainers:fragment "$(fragment_lines | wc -l) lines"
else
	result FAIL review:maintainers:fragment "MAINTAINERS.fragment differs from what the series adds: $(tr '\n' ' ' <<<"$d")"
fi
