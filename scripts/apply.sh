#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Make the work tree's branch "series" the base plus every patch that
# series lists, posting by posting, applied with git am as a maintainer
# would (no three-way merge).  A patch that does not apply stops
# everything, naming the patch file and the paths that conflict.
#
# The commits are made with fixed metadata (committer: the workbench,
# committer date: the author date), so the same patches give the same
# commit ids on every machine.  The patches are applied in a sparse
# scratch worktree; the work tree itself is then moved to the result, which
# rewrites only the files whose content changes (so kbuild rebuilds only
# what changed), and nothing at all when the branch is already there.
#
# The branch is rebuilt from patches/: the script refuses when that would
# lose something (uncommitted changes, commits not exported with
# scripts/export.sh, a rebase or am in progress, HEAD on another branch),
# unless KSERIES_FORCE=1 (or KSERIES_DISPOSABLE=1, set by scripts/test.sh
# for its own tree).  It only resets a tree the workbench created.
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

# Apply FILES on REV; print the tip.  On failure, explain and fail.  The
# result is remembered by the content of the files and REV
# (refs/kseries/applied/<hash>): the same patches give the same commits,
# so a second run need not apply them again.
apply_files() {
	local what=$1 rev=$2 log tip n p key
	shift 2
	n=$#
	key=refs/kseries/applied/$( { printf '%s\n' "$rev" "git am --no-3way"; cat "$@"; } | sha256sum | cut -c1-24)
	if tip=$(ktree_git rev-parse -q --verify "$key^{commit}"); then
		printf '%s\n' "$tip"
		return 0
	fi
	log=$(mktemp)
	if tip=$(am_on "$rev" "$log" "$@"); then
		rm -f "$log"
		ktree_git update-ref "$key" "$tip"
		printf '%s\n' "$tip"
		return 0
	fi
	# git am says which patch stopped it: "Patch failed at NNNN subject".
	i=$(sed -n 's/^Patch failed at \([0-9]*\) .*/\1/p' "$log" | head -n 1)
	i=$((10#${i:-0}))
	p=
	[ "$i" -lt 1 ] || eval "p=\${$i}"
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

# Why the work tree cannot be reset without losing something, or nothing.
unsafe_to_reset() {
	local gd
	gd=$(ktree_git rev-parse --path-format=absolute --git-dir)
	for f in rebase-merge rebase-apply MERGE_HEAD CHERRY_PICK_HEAD REVERT_HEAD BISECT_LOG; do
		[ ! -e "$gd/$f" ] || { echo "a git operation is in progress there ($f)"; return; }
	done
	[ -z "$(ktree_git status --porcelain --untracked-files=no)" ] ||
		{ echo "it has uncommitted changes"; return; }
	[ "$(ktree_git symbolic-ref -q HEAD)" = "refs/heads/$KSERIES_BRANCH" ] ||
		{ echo "its HEAD is not branch $KSERIES_BRANCH"; return; }
	if [ -n "$head" ] && [ "$head" != "$base" ] &&
		! bash "$KSERIES_REPO/scripts/export.sh" --check >/dev/null 2>&1; then
		echo "branch $KSERIES_BRANCH has commits that are not in patches/ (run scripts/export.sh)"
	fi
}

# All postings in order.
tip=$(apply_files "series" "$base" "${patches[@]/#/$KSERIES_PATCHES/}") || exit 1

if [ "$tip" = "$head" ] && [ -z "$(unsafe_to_reset)" ]; then
	info "up to date: $KSERIES_WORKTREE (branch $KSERIES_BRANCH at $(ktree_git rev-parse --short HEAD), ${#patches[@]} patches)"
else
	owned_dir "$KSERIES_WORKTREE" || die "$KSERIES_WORKTREE is not the workbench's; refusing to reset it"
	if [ "${KSERIES_FORCE:-0}" != 1 ] && ! disposable_tree; then
		why=$(unsafe_to_reset)
		[ -z "$why" ] || die "not resetting $KSERIES_WORKTREE: $why; KSERIES_FORCE=1 discards it"
	else
		ktree_git am --abort >/dev/null 2>&1
		ktree_git rebase --abort >/dev/null 2>&1
	fi
	# From the current checkout to the tip: only differing files are written.
	ktree_git checkout -q -f -B "$KSERIES_BRANCH" "$tip" || die "checkout of $tip failed"
	info "applied ${#patches[@]} patches on $KSERIES_BASE_TAG: $KSERIES_WORKTREE (branch $KSERIES_BRANCH at $(ktree_git rev-parse --short HEAD))"
fi

pack_loose_objects
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
		ktree_git update-ref -d "refs/kseries/alone/$posting" 2>/dev/null
		cat "$KSERIES_SCRATCH/alone.log" >&2
		result FAIL "apply:alone:$posting" "$(grep -m1 '^error:' "$KSERIES_SCRATCH/alone.log")"
	fi
done < <(series_postings)
