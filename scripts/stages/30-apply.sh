#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage apply: the series as git applies it.
#   apply:series          every posting, in order, on the base (the tree the
#                         later stages test; scripts/apply.sh)
#   apply:alone:<posting> each posting alone on the base
#   apply:export          patches/ and series are exactly what
#                         scripts/export.sh writes from the applied tree
#   apply:upstream:*      scripts/check-upstream.sh: the series applies to
#                         pristine upstream v7.3.4 as it does to the Debian
#                         base (or a SKIP saying why it cannot be checked)
#   apply:stand-in-base   a tree that is not the base but has the series'
#                         files as the base has them (here: the base with
#                         an untouched file changed and one removed), given
#                         as KSERIES_IMPORT_FROM, is taken as the base:
#                         the series applies and export.sh --check passes
#                         there; a tree with one of the series' files
#                         changed is refused
. "$(dirname "$0")/../lib.sh"

if ! bash "$KSERIES_REPO/scripts/apply.sh" --check; then
	result FAIL apply:series "scripts/apply.sh failed (the patch and the paths it conflicts on are in the log)"
	exit 1
fi
if out=$(bash "$KSERIES_REPO/scripts/export.sh" --check 2>&1); then
	result PASS apply:export "$out"
else
	printf '%s\n' "$out" >&2
	result FAIL apply:export "patches/ is not what scripts/export.sh writes from the applied series: $(tail -n 1 <<<"$out")"
fi
bash "$KSERIES_REPO/scripts/check-upstream.sh"

# A stand-in base, made from the base's objects without a checkout.  Its
# verdict depends on the base, the patches and the workbench: cached on
# them.
key=$KSERIES_CACHE/results/stand-in/$( {
	ktree_git rev-parse "$KSERIES_BASE_TAG"
	find "$KSERIES_PATCHES" -name '*.patch' | LC_ALL=C sort | xargs cat
	cat "$KSERIES_SERIES"
	workbench_hash
} | sha256sum | cut -c1-16)
if verdict=$(cache_get "$key"); then
	printf '%s (cached: same base, patches and workbench)\n' "$verdict"
	exit 0
fi
# (KSERIES_IMPORT_FROM must be outside $KSERIES_CACHE: in $TMPDIR.)
t=$(scratch_dir stand-in) || exit 1
u=$(mktemp -d) || exit 1
trap 'rm -rf "$t" "$u"' EXIT
standin() {
	local dir=$1 change=$2 blob tree
	xgit init -q "$dir" &&
		borrow_objects "$dir" &&
		GIT_INDEX_FILE=$dir/.git/index xgit -C "$dir" read-tree "$(ktree_git rev-parse "$KSERIES_BASE_TAG")" &&
		blob=$(printf 'not the base\n' | xgit -C "$dir" hash-object -w --stdin) &&
		GIT_INDEX_FILE=$dir/.git/index xgit -C "$dir" update-index --cacheinfo "100644,$blob,$change" &&
		GIT_INDEX_FILE=$dir/.git/index xgit -C "$dir" rm -q --cached --ignore-unmatch scripts/package/debian/rules &&
		tree=$(GIT_INDEX_FILE=$dir/.git/index xgit -C "$dir" write-tree) &&
		xgit -C "$dir" update-ref refs/heads/main "$(xgit -C "$dir" commit-tree "$tree" -m stand-in)" &&
		xgit -C "$dir" symbolic-ref HEAD refs/heads/main
}
touched=$(base_blobs | awk '$1 != "new" { print $2; exit }')
if ! standin "$u/good" README || ! standin "$u/bad" "$touched"; then
	result FAIL apply:stand-in-base "making the stand-in trees failed"
	exit 0
fi
env_standin=(env KSERIES_WORKTREE="$t/linux" KSERIES_REVIEW="$t/review")
if ! "${env_standin[@]}" KSERIES_IMPORT_FROM="$u/good" bash "$KSERIES_REPO/scripts/fetch-base.sh" >"$t/fetch.log" 2>&1; then
	result FAIL apply:stand-in-base "fetch-base.sh refused a stand-in: $(tail -n 2 "$t/fetch.log" | tr '\n' ' ')"
elif ! "${env_standin[@]}" bash "$KSERIES_REPO/scripts/apply.sh" >"$t/apply.log" 2>&1 ||
	! out=$("${env_standin[@]}" bash "$KSERIES_REPO/scripts/export.sh" --check 2>&1); then
	result FAIL apply:stand-in-base "on the stand-in base: $(tail -n 2 "$t/apply.log" | tr '\n' ' ') ${out:-}"
elif env KSERIES_WORKTREE="$t/bad-linux" KSERIES_REVIEW="$t/review" KSERIES_IMPORT_FROM="$u/bad" bash "$KSERIES_REPO/scripts/fetch-base.sh" >"$t/bad.log" 2>&1 ||
	! grep -qF "$touched" "$t/bad.log"; then
	result FAIL apply:stand-in-base "a tree with $touched changed was not refused, or the refusal does not name it: $(tail -n 3 "$t/bad.log" | tr '\n' ' ')"
else
	line=$(result PASS apply:stand-in-base "on a stand-in for the base (another tree, the series' files the same): $out; one with $touched changed is refused")
	printf '%s\n' "$line"
	cache_put "$key" <<<"$line"
fi
