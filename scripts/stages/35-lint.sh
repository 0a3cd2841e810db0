#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage lint: the series as files (no kernel build; checkpatch.pl comes
# from the base tree):
#   lint:series                  series lists exactly the patch files of
#                                patches/ (but the cover letters)
#   lint:cover-letter:<posting>  filled in, names the base commit and the
#                                upstream tag it applies to
#   lint:format:<patch>          a "subsystem: summary" subject and a
#                                Signed-off-by of its author
#   lint:checkpatch:<patch>      scripts/checkpatch.pl --strict finds nothing
# checkpatch runs in the work tree at the series' tip (after the apply
# stage), the tree whose include/ it reads CamelCase names from; its
# verdict on a patch file is cached by the file's content, the checkpatch
# version and that include/ tree (a second run re-checks only changed
# patches).
#
# Two checkpatch types are ignored, because they cannot work on this base:
#   UNKNOWN_COMMIT_ID   the base is a one-commit import without upstream
#                       history, so every upstream id in a Fixes: tag is
#                       "unknown" (the tag's form is still checked)
#   FILE_PATH_CHANGES   "does MAINTAINERS need updating?" on every new file;
#                       MAINTAINERS coverage is checked by the docs stage
# and two findings are dropped: CamelCase on an AMD register name
# (mmFOO_BAR, regFOO_BAR, ixFOO, smnFOO) that the generated register headers
# under drivers/gpu/drm/amd/include/asic_reg/ define (amdgpu code can only
# name registers that way; checkpatch knows CamelCase names of include/
# only), and "perhaps it also needs a 'Fixes:' tag" on a patch whose stable
# tag says instead what it needs ("Cc: stable@vger.kernel.org # ..."), as
# stable-kernel-rules.rst allows for a fix that no one commit made needed.
. "$(dirname "$0")/../lib.sh"

P=$KSERIES_PATCHES
checkpatch=$KSERIES_WORKTREE/scripts/checkpatch.pl
cache=$KSERIES_CACHE/results/checkpatch
mkdir -p "$cache"

listed=$(series_patches | sort)
present=$( (cd "$P" && find . -mindepth 2 -name '*.patch' ! -name 0000-cover-letter.patch | sed 's|^\./||') | sort)
if [ "$listed" = "$present" ]; then
	result PASS lint:series "$(wc -w <<<"$listed") patches in $(series_postings | wc -l) postings"
else
	result FAIL lint:series "only in series: $(comm -23 <(echo "$listed") <(echo "$present") | tr '\n' ' ')only in patches/: $(comm -13 <(echo "$listed") <(echo "$present") | tr '\n' ' ')"
fi

while read -r posting; do
	c=$(cover_letter "$posting")
	if [ ! -f "$c" ]; then
		result FAIL "lint:cover-letter:$posting" "patches/$posting/0000-cover-letter.patch is missing"
	elif grep -q '\*\*\* \(SUBJECT\|BLURB\) HERE \*\*\*' "$c"; then
		result FAIL "lint:cover-letter:$posting" "still the format-patch template"
	elif ! grep -q "^base-commit: $BASE_COMMIT\$" "$c"; then
		result FAIL "lint:cover-letter:$posting" "no base-commit: $BASE_COMMIT line"
	elif ! grep -qw "$BASE_UPSTREAM_TAG" "$c"; then
		result FAIL "lint:cover-letter:$posting" "does not name $BASE_UPSTREAM_TAG, the upstream tag the posting applies to"
	else
		result PASS "lint:cover-letter:$posting"
	fi
done < <(series_postings)

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
	if [[ $1 == WARNING:MISSING_FIXES_TAG:* ]] &&
		grep -qE '^Cc: stable@vger\.kernel\.org # [^ ]' "$f"; then
		return 1
	fi
	name=$(sed -n '1s/^CHECK:CAMELCASE: Avoid CamelCase: <\(\(mm\|reg\|ix\|smn\)[A-Z0-9_]*\)>$/\1/p' <<<"$1")
	[ -z "$name" ] && return 0
	! grep -rqw -- "$name" "$KSERIES_WORKTREE/drivers/gpu/drm/amd/include/asic_reg"
}

empty_home=$(scratch_dir home) || exit 1
# checkpatch's CamelCase list of the tree, left in the tree: removed.
trap 'rm -rf "$empty_home"; rm -f "$KSERIES_WORKTREE"/.checkpatch-camelcase.*' EXIT
[ ! -e "$KSERIES_WORKTREE/.checkpatch.conf" ] || die "$KSERIES_WORKTREE/.checkpatch.conf: the base has none; remove it"
[ "$(ktree_git rev-parse HEAD)" = "$(ktree_git rev-parse "$KSERIES_BRANCH")" ] ||
	die "$KSERIES_WORKTREE is not at the series' tip (run the apply stage first)"
cp_key=$( {
	printf '%s\n' "$checkpatch" "$KSERIES_WORKTREE/scripts/spelling.txt" \
		"$KSERIES_WORKTREE/scripts/const_structs.checkpatch" "${BASH_SOURCE[0]}" "$KSERIES_REPO/scripts/lib.sh" "$KSERIES_REPO"/scripts/lib/*.sh | hash_files
	ktree_git rev-parse HEAD:include HEAD:drivers/gpu/drm/amd/include/asic_reg
} | sha256sum | cut -c1-16)
for p in $listed; do
	f=$P/$p
	[ -f "$f" ] || continue
	subject=$(patch_subject "$f")
	author=$(patch_author "$f")
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

	if [ ! -f "$checkpatch" ]; then
		result FAIL "lint:checkpatch:$p" "no $checkpatch (run scripts/fetch-base.sh)"
		continue
	fi
	key=$cache/$(sha256sum "$f" | cut -c1-16)-$cp_key
	if ! cp_out=$(cache_get "$key"); then
		# Status 0: clean, 1: findings; anything else, or a status that
		# its output contradicts, is checkpatch failing.  HOME,
		# CHECKPATCH_CONFIG_DIR: no .checkpatch.conf of whoever runs it.
		cp_out=$(cd "$KSERIES_WORKTREE" && HOME=$empty_home env -u CHECKPATCH_CONFIG_DIR perl "$checkpatch" --strict --quiet --no-summary \
			--show-types --ignore FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID "$f" 2>&1)
		rc=$?
		if ! { [ $rc = 0 ] && [ -z "$cp_out" ]; } && ! { [ $rc = 1 ] && grep -qE '^(ERROR|WARNING|CHECK)' <<<"$cp_out"; }; then
			result FAIL "lint:checkpatch:$p" "checkpatch.pl failed (status $rc): $(tail -n 2 <<<"$cp_out" | tr '\n' ' ')"
			continue
		fi
		cp_out=$(drop_register_camelcase <<<"$cp_out") || {
			result FAIL "lint:checkpatch:$p" "filtering checkpatch's output failed"
			continue
		}
		cache_put "$key" <<<"$cp_out"
	fi
	if [ -z "$cp_out" ]; then
		result PASS "lint:checkpatch:$p"
	else
		result FAIL "lint:checkpatch:$p" "$(grep -E '^(ERROR|WARNING|CHECK)' <<<"$cp_out" | head -n 5 | tr '\n' ' ')"
		printf '%s\n' "$cp_out" >&2
	fi
done
