#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Lint the series as files (no kernel tree needed but for checkpatch.pl):
#   - series lists exactly the patch files of patches/ (but the cover letter)
#   - the cover letter is filled in and names the base
#   - each patch: a "subsystem: summary" subject, a Signed-off-by of its
#     author, and scripts/checkpatch.pl --strict without a finding
#
# Two checkpatch types are ignored, because they cannot work on this base:
#   UNKNOWN_COMMIT_ID   the base is a one-commit import without upstream
#                       history, so every upstream id in a Fixes: tag is
#                       "unknown" (the tag's form is still checked)
#   FILE_PATH_CHANGES   "does MAINTAINERS need updating?" on every new file;
#                       MAINTAINERS coverage is checked by check-maintainers.sh
# and one finding is dropped: CamelCase on an AMD register name (mmFOO_BAR,
# regFOO_BAR, ixFOO, smnFOO) that the generated register headers under
# drivers/gpu/drm/amd/include/asic_reg/ define.  amdgpu code can only name
# registers that way; checkpatch knows CamelCase names of include/ only.
# Prints one result line per case (STATUS<TAB>NAME<TAB>DETAIL).
. "$(dirname "$0")/lib.sh"

result() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}"; }

P=$KSERIES_REPO/patches
checkpatch=$KSERIES_TREE/scripts/checkpatch.pl

listed=$(series_patches | sort)
present=$( (cd "$P" && ls *.patch 2>/dev/null) | grep -v '^0000-cover-letter\.patch$' | sort)
if [ "$listed" = "$present" ]; then
	result PASS lint:series "$(wc -w <<<"$listed") patches"
else
	result FAIL lint:series "only in series: $(comm -23 <(echo "$listed") <(echo "$present") | tr '\n' ' ')only in patches/: $(comm -13 <(echo "$listed") <(echo "$present") | tr '\n' ' ')"
fi

if [ -n "$present" ]; then
	c=$P/0000-cover-letter.patch
	if [ ! -f "$c" ]; then
		result FAIL lint:cover-letter "patches/0000-cover-letter.patch is missing"
	elif grep -q '\*\*\* \(SUBJECT\|BLURB\) HERE \*\*\*' "$c"; then
		result FAIL lint:cover-letter "still the format-patch template"
	elif ! grep -q "^base-commit: $BASE_COMMIT\$" "$c"; then
		result FAIL lint:cover-letter "no base-commit: $BASE_COMMIT line"
	else
		result PASS lint:cover-letter
	fi
fi

# checkpatch output (findings separated by blank lines) without the
# CamelCase findings on AMD register names.
drop_register_camelcase() {
	local block= line
	while IFS= read -r line || [ -n "$line" ]; do
		if [ -n "$line" ]; then
			block+="$line"$'\n'
			continue
		fi
		keep_finding "$block" && printf '%s\n' "$block"
		block=
	done
	[ -z "$block" ] || ! keep_finding "$block" || printf '%s' "$block"
}
keep_finding() {
	local name
	name=$(sed -n '1s/^CHECK:CAMELCASE: Avoid CamelCase: <\(\(mm\|reg\|ix\|smn\)[A-Z0-9_]*\)>$/\1/p' <<<"$1")
	[ -z "$name" ] && return 0
	! grep -rqw -- "$name" "$KSERIES_TREE/drivers/gpu/drm/amd/include/asic_reg"
}

for p in $listed; do
	f=$P/$p
	[ -f "$f" ] || continue
	info=$(git mailinfo /dev/null /dev/null <"$f")
	subject=$(sed -n 's/^Subject: //p' <<<"$info")
	author="$(sed -n 's/^Author: //p' <<<"$info") <$(sed -n 's/^Email: //p' <<<"$info")>"
	why=
	grep -qE '^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*: [^ ]' <<<"$subject" ||
		why+="subject \"$subject\" has no subsystem prefix; "
	grep -qxF "Signed-off-by: $author" "$f" ||
		why+="no Signed-off-by: $author; "
	if [ -z "$why" ]; then
		result PASS "lint:format:$p"
	else
		result FAIL "lint:format:$p" "$why"
	fi

	if [ ! -x "$checkpatch" ]; then
		result FAIL "lint:checkpatch:$p" "no $checkpatch (run scripts/fetch-base.sh)"
		continue
	fi
	cp_out=$(cd "$KSERIES_TREE" && perl "$checkpatch" --strict --quiet --no-summary \
		--show-types --ignore FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID "$f" 2>&1 |
		drop_register_camelcase)
	if [ -z "$cp_out" ]; then
		result PASS "lint:checkpatch:$p"
	else
		result FAIL "lint:checkpatch:$p" "$(grep -E '^(ERROR|WARNING|CHECK)' <<<"$cp_out" | head -n 5 | tr '\n' ' ')"
		printf '%s\n' "$cp_out" >&2
	fi
done
