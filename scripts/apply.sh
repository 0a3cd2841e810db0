#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Make the work tree's branch "series" the base plus every patch that
# series lists, posting by posting, applied with git am --3way.  A patch
# that does not apply stops everything, naming the patch file and the
# paths that conflict.
#
# The commits are made with fixed metadata (committer: the workbench,
# committer date: the author date), so the same patches give the same
# commit ids on every machine.  The patches are applied in a sparse
# scratch worktree; the work tree itself is then moved to the result, which
# rewrites only the files whose content changes (so kbuild rebuilds only
# what changed), and nothing at all when the branch is already there.
#
# The branch is rebuilt from patches/, so commits in the work tree that
# were not exported (scripts/export.sh) would be lost: the script refuses
# then, unless KSERIES_FORCE=1 (or KSERIES_DISPOSABLE=1, scripts/test.sh's
# own tree).
#
#   apply.sh            as above
#   apply.sh --check    also apply each posting alone on the base (its tip
#                       becomes refs/kseries/alone/<posting>); print
#                       result lines (STATUS<TAB>NAME<TAB>DETAIL)
. "$(dirname "$0")/lib.sh"

check=0
case ${1:-} in
--check)
	check=1
	# stdout is for result lines then.
	exec 3>&1 1>&2
	;;
"") ;;
*) die "usage: $0 [--check]" ;;
esac

bash "$KSERIES_REPO/scripts/fetch-base.sh" >&2 || exit 1

# Every listed patch must exist before anything is applied.
mapfile -t patches < <(series_patches)
[ ${#patches[@]} -gt 0 ] || die "series lists no patches"
for p in "${patches[@]}"; do
	[ -f "$KSERIES_PATCHES/$p" ] || die "series lists $p, which is not in patches/"
done

base=$(ktree_git rev-parse "$KSERIES_BASE_TAG") || die "no $KSERIES_BASE_TAG in $KSERIES_WORKTREE"
make_owned_dir "$KSERIES_SCRATCH"
head=$(ktree_git rev-parse -q --verify "refs/heads/$KSERIES_BRANCH")

# Apply FILES on REV; print the tip.  On failure, explain and fail.
apply_files() {
	local what=$1 rev=$2 log tip i=0 n p
	shift 2
	log=$(mktemp)
	n=$#
	if tip=$(am_on "$rev" "$log" "$@"); then
		rm -f "$log"
		printf '%s\n' "$tip"
		return 0
	fi
	# Which patch stopped git am: the first whose subject is not in the log.
	for p in "$@"; do
		i=$((i + 1))
		grep -qF "Applying: $(git mailinfo /dev/null /dev/null <"$p" | sed -n 's/^Subject: //p')" "$log" || break
	done
	{
		printf 'error: %s: patch %d/%d does not apply: %s\n' "$what" "$i" "$n" "${p#"$KSERIES_PATCHES"/}"
		paths=$(sed -n -e 's/^error: patch failed: \(.*\):[0-9]*$/\1/p' \
			-e 's/^error: \(.*\): does not exist in index$/\1/p' \
			-e 's/^error: \(.*\): already exists in index$/\1/p' \
			-e 's/^CONFLICT ([^)]*): .* in \(.*\)$/\1/p' "$log" | sort -u)
		if [ -n "$paths" ]; then
			printf 'conflicting paths:\n'
			sed 's/^/  /' <<<"$paths"
		fi
		printf -- '--- git am said:\n'
		cat "$log"
	} >&2
	rm -f "$log"
	return 1
}

# All postings in order.
tip=$(apply_files "series" "$base" "${patches[@]/#/$KSERIES_PATCHES/}") || exit 1

if [ "$tip" = "$head" ] && [ -z "$(ktree_git status --porcelain --untracked-files=no)" ] &&
	[ "$(ktree_git symbolic-ref -q HEAD)" = "refs/heads/$KSERIES_BRANCH" ]; then
	info "up to date: $KSERIES_WORKTREE (branch $KSERIES_BRANCH at $(ktree_git rev-parse --short HEAD), ${#patches[@]} patches)"
else
	if [ -n "$head" ] && [ "$head" != "$base" ] && [ "${KSERIES_FORCE:-0}" != 1 ] &&
		[ "${KSERIES_DISPOSABLE:-0}" != 1 ]; then
		[ -z "$(ktree_git status --porcelain --untracked-files=no)" ] ||
			die "$KSERIES_WORKTREE has uncommitted changes; commit and export them, or KSERIES_FORCE=1 to discard"
		bash "$KSERIES_REPO/scripts/export.sh" --check >/dev/null 2>&1 ||
			die "branch $KSERIES_BRANCH in $KSERIES_WORKTREE has commits that are not in patches/; run scripts/export.sh, or KSERIES_FORCE=1 to discard them"
	fi
	owned_dir "$KSERIES_WORKTREE" || die "$KSERIES_WORKTREE is not the workbench's; refusing to reset it"
	ktree_git am --abort >/dev/null 2>&1
	# From the current checkout to the tip: only differing files are written.
	ktree_git checkout -q -f -B "$KSERIES_BRANCH" "$tip" || die "checkout of $tip failed"
	info "applied ${#patches[@]} patches on $KSERIES_BASE_TAG: $KSERIES_WORKTREE (branch $KSERIES_BRANCH at $(ktree_git rev-parse --short HEAD))"
fi

[ $check = 1 ] || exit 0

# Each posting alone on the base.
exec 1>&3
result PASS "apply:series" "${#patches[@]} patches in order on the base: $(ktree_git rev-parse --short "$tip")"
while read -r posting; do
	mapfile -t pp < <(posting_patches "$posting")
	if alone=$(apply_files "$posting" "$base" "${pp[@]/#/$KSERIES_PATCHES/}" 2>"$KSERIES_SCRATCH/alone.log"); then
		# The bisect stage builds it: refs/kseries/alone/<posting>.
		ktree_git update-ref "refs/kseries/alone/$posting" "$alone"
		result PASS "apply:alone:$posting" "${#pp[@]} patches on the base without the other postings"
	else
		cat "$KSERIES_SCRATCH/alone.log" >&2
		result FAIL "apply:alone:$posting" "$(grep -m1 '^error:' "$KSERIES_SCRATCH/alone.log")"
	fi
done < <(series_postings)
