#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage bisect: every patch builds, applied on the ones before it.
#   bisect:<posting>/<patch>   at that commit, kbuild brings the objects of
#                              every .c file the series touches (and that
#                              exist by then) up to date: the files the
#                              patch changed and every object including a
#                              header it changed (kbuild's own dependency
#                              tracking decides), with the test kernel's
#                              .config; after a Kconfig change the config
#                              is refreshed first
#   bisect:alone:<posting>     the same at the tip of a posting applied
#                              alone on the base (refs/kseries/alone/*)
# The full kernel is built at the tip by the build stage.  W=1, sparse,
# clang and kernel-doc are compared at the tip by the static stage, and
# patch by patch by scripts/review.sh (before posting).
#
# Verdicts are cached by the commit's tree id, the .config and the
# compiler, so a second run rebuilds only from the first changed patch.
# Runs in the review checkout ($KSERIES_REVIEW); logs in
# $KSERIES_RUN/bisect/.
. "$(dirname "$0")/../lib.sh"

B=$KSERIES_REVIEW/build
L=$KSERIES_RUN/bisect
cache=$KSERIES_CACHE/results/bisect
mkdir -p "$L" "$cache"
rm -f "$L"/*.log

base=$(ktree_git rev-parse "$KSERIES_BASE_TAG") || die "no $KSERIES_BASE_TAG"
tip=$(ktree_git rev-parse "$KSERIES_BRANCH") || die "no branch $KSERIES_BRANCH"
mapfile -t commits < <(ktree_git rev-list --reverse "$base..$tip")
mapfile -t names < <(series_patches)
[ ${#commits[@]} -eq ${#names[@]} ] ||
	die "branch $KSERIES_BRANCH has ${#commits[@]} commits, series lists ${#names[@]} patches"

# The series' .c files that the test kernel builds; the others cannot be
# compiled with its config (reported, not hidden).
all_c=$(series_files "$base" "$tip" | kernel_c)
built=$(built_c <<<"$all_c")
unbuilt=$(comm -23 <(sort <<<"$all_c") <(sort <<<"$built") | tr '\n' ' ')
key_env=$( {
	cat "$KSERIES_BUILD/.config"
	gcc --version | head -n 1
	cat "${BASH_SOURCE[0]}"
	printf '%s\n' "$built"
} | sha256sum | cut -c1-16)

prepared=
prepare() {
	[ -z "$prepared" ] || return 0
	review_checkout "$1"
	review_configure "$B"
	kmake "$REVIEW_TREE" "$B" -s prepare >"$L/prepare.log" 2>&1 || {
		tail -n 20 "$L/prepare.log" >&2
		die "make prepare in the review checkout failed"
	}
	prepared=1
}

# build_at NAME COMMIT FILES: bring the objects of FILES (that exist at
# COMMIT) up to date there; result line; cached when it passes.
build_at() {
	local name=$1 c=$2 files=$3 key objs=() f n log
	key=$cache/$(ktree_git rev-parse "$c^{tree}")-$key_env
	if [ -f "$key" ]; then
		result PASS "$name" "$(cat "$key") (cached: same tree, config and compiler)"
		return
	fi
	prepare "$c"
	rgit checkout -q -f --detach "$c" || die "checkout of $c failed"
	if ktree_git diff-tree --no-commit-id -r --name-only "$c^" "$c" | grep -qE '(^|/)Kconfig[^/]*$'; then
		kmake "$REVIEW_TREE" "$B" -s olddefconfig >&2
	fi
	for f in $files; do
		[ -f "$REVIEW_TREE/$f" ] && objs+=("$(obj_of "$f")")
	done
	log=$L/${name//\//_}.log
	if [ ${#objs[@]} -eq 0 ]; then
		result PASS "$name" "no object of the series exists yet"
		return
	fi
	if kmake "$REVIEW_TREE" "$B" -k "${objs[@]}" >"$log" 2>&1; then
		n=$(grep -c -E '^  CC( \[M\])? ' "$log")
		printf '%s objects up to date, %s compiled\n' "${#objs[@]}" "$n" >"$key"
		result PASS "$name" "$(cat "$key")"
	else
		result FAIL "$name" "does not build: $(grep -m3 -hE 'error:|Error [0-9]' "$log" | tr '\n' ' ')(log: $log)"
	fi
}

for i in "${!commits[@]}"; do
	build_at "bisect:${names[$i]}" "${commits[$i]}" "$built"
done

# Each posting alone on the base, but the first (that is the series so far).
first=$(series_postings | head -n 1)
while read -r posting; do
	[ "$posting" != "$first" ] || continue
	alone=$(ktree_git rev-parse -q --verify "refs/kseries/alone/$posting") || {
		result FAIL "bisect:alone:$posting" "no refs/kseries/alone/$posting (apply stage)"
		continue
	}
	build_at "bisect:alone:$posting" "$alone" "$(series_files "$base" "$alone" | kernel_c | built_c)"
done < <(series_postings)

[ -z "$unbuilt" ] || result SKIP bisect:unbuilt "not built by the test kernel's config, so not compiled: $unbuilt"
