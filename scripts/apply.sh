#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Reset the work tree's branch "series" to the base and apply every patch
# listed in series with git am --3way.  A patch that does not apply stops
# everything, naming the patch file and the paths that conflict.
#
# The branch is rebuilt from patches/, so commits in the work tree that
# were not exported (scripts/export.sh) would be lost: the script refuses
# then, unless KSERIES_FORCE=1.
. "$(dirname "$0")/lib.sh"

bash "$KSERIES_REPO/scripts/fetch-base.sh" || exit 1

cover=$KSERIES_REPO/patches/0000-cover-letter.patch

# The branch description that export.sh turns back into the cover letter:
# the cover letter's subject (without the [PATCH n/m] prefix) and body
# (up to the shortlog).
cover_description() {
	[ -f "$cover" ] || return 0
	awk '
		!hdr_done && /^Subject: / { subj = $0; sub(/^Subject: *(\[[^]]*\] *)?/, "", subj); insubj = 1; next }
		!hdr_done && insubj && /^[ \t]/ { s = $0; sub(/^[ \t]+/, " ", s); subj = subj s; next }
		!hdr_done && /^$/ { hdr_done = 1; printf "%s\n\n", subj; next }
		!hdr_done { insubj = 0; next }
		/^[^ \t].* \([0-9]+\):$/ { exit }
		{ body[++n] = $0 }
		END {
			while (n > 0 && body[n] == "") n--
			for (i = 1; i <= n; i++) print body[i]
		}' "$cover"
}

if ktree_git rev-parse -q --verify "$KSERIES_BRANCH" >/dev/null &&
	[ "${KSERIES_FORCE:-0}" != 1 ]; then
	[ -z "$(ktree_git status --porcelain --untracked-files=no)" ] ||
		die "$KSERIES_TREE has uncommitted changes; commit and export them, or KSERIES_FORCE=1 to discard"
	if [ "$(ktree_git rev-parse "$KSERIES_BRANCH")" != "$(ktree_git rev-parse "$KSERIES_BASE_TAG")" ] &&
		! bash "$KSERIES_REPO/scripts/export.sh" --check >/dev/null 2>&1; then
		die "branch $KSERIES_BRANCH in $KSERIES_TREE has commits that are not in patches/; run scripts/export.sh, or KSERIES_FORCE=1 to discard them"
	fi
fi

ktree_git am --abort >/dev/null 2>&1
ktree_git checkout -q -f -B "$KSERIES_BRANCH" "$KSERIES_BASE_TAG" || die "checkout of the base failed"
ktree_git config "branch.$KSERIES_BRANCH.description" "$(cover_description)"

# Every listed patch must exist before anything is applied.
n=0
while read -r p; do
	[ -f "$KSERIES_REPO/patches/$p" ] || die "series lists $p, which is not in patches/"
	n=$((n + 1))
done < <(series_patches)

i=0
while read -r p; do
	i=$((i + 1))
	if ! out=$(ktree_git am --3way --committer-date-is-author-date "$KSERIES_REPO/patches/$p" 2>&1); then
		{
			printf 'error: patch %d/%d does not apply: %s\n' "$i" "$n" "$p"
			paths=$( {
				ktree_git diff --name-only --diff-filter=U
				sed -n -e 's/^error: patch failed: \(.*\):[0-9]*$/\1/p' \
					-e 's/^error: \(.*\): does not exist in index$/\1/p' \
					-e 's/^error: \(.*\): already exists in index$/\1/p' \
					-e 's/^CONFLICT ([^)]*): .* in \(.*\)$/\1/p' <<<"$out"
			} | sort -u)
			if [ -n "$paths" ]; then
				printf 'conflicting paths:\n'
				sed 's/^/  /' <<<"$paths"
			fi
			printf -- '--- git am said:\n%s\n' "$out"
		} >&2
		ktree_git am --abort >/dev/null 2>&1
		exit 1
	fi
done < <(series_patches)

info "applied $i patches on $KSERIES_BASE_TAG: $KSERIES_TREE (branch $KSERIES_BRANCH at $(ktree_git rev-parse --short HEAD))"
