#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The full review, patch by patch, as mailing-list reviewers and the
# 0-day robot would do it: run it before posting (it takes about an hour
# cold on two cores, too long for CI, which runs the bisect and static
# stages instead).  On the series applied in $KSERIES_WORKTREE
# (scripts/apply.sh) and built (scripts/build-kernel.sh):
#
#   review:warnings:<patch>   gcc W=1 and sparse (C=2) on the .c files the
#                             patch touches: nothing those files do not
#                             have on the base or after an earlier patch
#                             (which was blamed for it)
#   review:kernel-doc:<patch> scripts/kernel-doc -none on the .c/.h files
#                             the patch touches, likewise
#   review:coccicheck         make coccicheck MODE=report on every .c file
#                             of the series: no report the base does not
#                             have
#
# Each object is deleted before it is built (ccache replays a cached
# compile's warnings), so the result does not depend on what was built
# before.  Prints result lines; logs in $KSERIES_RUN/review/.
. "$(dirname "$0")/lib.sh"
hold_build_lock

B=$KSERIES_REVIEW/build-w1
L=$KSERIES_RUN/review
mkdir -p "$L"
rm -f "$L"/*

base=$(ktree_git rev-parse "$KSERIES_BASE_TAG") || die "no $KSERIES_BASE_TAG in $KSERIES_WORKTREE"
tip=$(ktree_git rev-parse "$KSERIES_BRANCH") || die "no branch $KSERIES_BRANCH (scripts/apply.sh)"
mapfile -t commits < <(ktree_git rev-list --reverse "$base..$tip")
mapfile -t names < <(series_patches)
[ ${#commits[@]} -eq ${#names[@]} ] ||
	die "branch $KSERIES_BRANCH has ${#commits[@]} commits, series lists ${#names[@]} patches"
all_c=$(series_files "$base" "$tip" | kernel_c | built_c)
all_kdoc=$(series_files "$base" "$tip" | kdoc_files)

# W=1 and sparse on the objects of the .c files (that exist here and the
# test kernel builds), each deleted first, with the config refreshed at
# this tree.  Fails if the build fails or leaves an object missing.
build_objs() {
	local log=$1 f o objs=() miss
	shift
	review_configure "$B"
	for f in "$@"; do
		[ -f "$REVIEW_TREE/$f" ] || continue
		o=$(obj_of "$f")
		rm -f "$B/$o"
		objs+=("$o")
	done
	[ ${#objs[@]} -gt 0 ] || { : >"$log"; return 0; }
	kmake "$REVIEW_TREE" "$B" -k --output-sync=target W=1 C=2 \
		CHECK="$KSERIES_REPO/scripts/sparse-compat" "${objs[@]}" >"$log" 2>&1 || return 1
	miss=$(missing_objs "$B" "${objs[@]}")
	[ -z "$miss" ] || { printf 'not built: %s\n' "$miss" >>"$log"; return 1; }
}

# Merge count list $2 into $1 (the larger count of each line wins): the
# baseline of a patch is the base plus what earlier patches were blamed
# for, so a finding is reported once, on the patch that brings it.
merge_counts() {
	awk '{ n = $1; $1 = ""; if (n > have[$0] + 0) have[$0] = n }
		END { for (l in have) printf "%d%s\n", have[l], l }' "$1" "$2" | sort >"$1.new"
	mv "$1.new" "$1"
}

stage_begin review-base
review_checkout "$base"
review_configure "$B"
kmake "$REVIEW_TREE" "$B" -s prepare >"$L/prepare.log" 2>&1 || die "make prepare failed (see $L/prepare.log)"
# shellcheck disable=SC2086
build_objs "$L/base.build.log" $all_c || die "the series' objects do not build at the base (see $L/base.build.log)"
norm_warnings "$REVIEW_TREE" "$B" <"$L/base.build.log" >"$L/running.warnings"
# shellcheck disable=SC2086
kdoc $all_kdoc >"$L/running.kdoc" || die "kernel-doc failed on the base"
stage_end

stage_begin review-patches
for i in "${!commits[@]}"; do
	c=${commits[$i]} p=${names[$i]} lp=$L/${names[$i]//\//_}
	rgit checkout -q -f --detach "$c" || die "checkout of $c failed"
	files=$(commit_files "$c")
	cfiles=$(kernel_c <<<"$files")
	cfiles=$(built_c <<<"$cfiles")
	# shellcheck disable=SC2086
	if ! build_objs "$lp.log" $cfiles; then
		result FAIL "review:warnings:$p" "the touched objects did not build: $(grep -m2 -hE 'error|not built' "$lp.log" | tr '\n' ' ')(log: $lp.log)"
	elif grep -q '^sparse-compat: sparse failed' "$lp.log"; then
		result FAIL "review:warnings:$p" "$(grep -m1 '^sparse-compat: sparse failed' "$lp.log")"
	else
		norm_warnings "$REVIEW_TREE" "$B" <"$lp.log" >"$lp.warnings"
		new=$(new_lines "$L/running.warnings" "$lp.warnings")
		merge_counts "$L/running.warnings" "$lp.warnings"
		if [ -z "$new" ]; then
			result PASS "review:warnings:$p" "W=1 + sparse on $(wc -w <<<"$cfiles") files"
		else
			result FAIL "review:warnings:$p" "new W=1/sparse warnings: $(head -n 3 <<<"$new" | tr '\n' ';')"
			printf '%s: new warnings:\n%s\n' "$p" "$new" >&2
		fi
	fi
	kfiles=$(kdoc_files <<<"$files")
	# shellcheck disable=SC2086
	if ! kdoc $kfiles >"$lp.kdoc"; then
		result FAIL "review:kernel-doc:$p" "scripts/kernel-doc failed"
		continue
	fi
	new=$(new_lines "$L/running.kdoc" "$lp.kdoc")
	merge_counts "$L/running.kdoc" "$lp.kdoc"
	if [ -z "$new" ]; then
		result PASS "review:kernel-doc:$p" "$(wc -w <<<"$kfiles") files"
	else
		result FAIL "review:kernel-doc:$p" "new kernel-doc warnings: $(head -n 3 <<<"$new" | tr '\n' ';')"
	fi
done
stage_end

# Coccinelle: the tree's own "make coccicheck MODE=report M=DIR" (every
# script with its own Options: and the kbuild include paths), tip against
# base.  DIR is a scratch directory in the tree that mirrors the series'
# .c files and the headers beside them (symbolic links): one spatch per
# script over all of them, not the whole of amdgpu or mm.  A spatch that
# fails is a failure of the tool.
stage_begin review-coccicheck
cocci() {
	local f h s d=.kseries-cocci
	rm -rf "${REVIEW_TREE:?}/$d"
	for f in "$@"; do
		[ -f "$REVIEW_TREE/$f" ] || continue
		mkdir -p "$REVIEW_TREE/$d/${f%/*}"
		for h in "$REVIEW_TREE/$f" "$REVIEW_TREE/${f%/*}"/*.h; do
			[ ! -f "$h" ] || ln -sf "$h" "$REVIEW_TREE/$d/${f%/*}/"
		done
	done
	[ -d "$REVIEW_TREE/$d" ] || return 0
	: >"$L/cocci.out"
	# Script by script (COCCI=), as coccicheck picks them for report mode,
	# so that one needing OCaml, which Debian's spatch cannot run without
	# an OCaml compiler, is named and left out instead of failing the rest.
	find "$REVIEW_TREE/scripts/coccinelle" -name '*.cocci' | LC_ALL=C sort | while read -r s; do
		grep -q 'virtual[[:space:]]\+report' "$s" || continue
		if grep -q ':ocaml' "$s" && ! command -v ocamlopt >/dev/null; then
			printf 'not run (needs OCaml): %s\n' "${s#"$REVIEW_TREE"/}" >>"$L/spatch.err"
			continue
		fi
		kmake "$REVIEW_TREE" "$B" -s coccicheck MODE=report COCCI="$s" M="$d" J="$KSERIES_JOBS" \
			>>"$L/cocci.out" 2>>"$L/spatch.err" ||
			printf 'spatch failed: make coccicheck COCCI=%s\n' "${s#"$REVIEW_TREE"/}" >>"$L/spatch.err"
	done
	rm -rf "${REVIEW_TREE:?}/$d"
	# The findings ("FILE:LINE:COL-COL: ..."), not coccicheck's banner.
	grep -E '^[^ ]+\.[ch]:[0-9]+:' "$L/cocci.out" |
		sed -e "s|$REVIEW_TREE/||g" -e "s|^\./||" -e "s|^$d/||" -e 's/:[0-9]*:[0-9]*-[0-9]*:/:/' -e 's/line [0-9][0-9]*/line N/g' |
		sort | uniq -c | sed 's/^ *//'
}
if ! command -v spatch >/dev/null; then
	result FAIL review:coccicheck "spatch not installed (scripts/deps.sh)"
else
	: >"$L/spatch.err"
	review_checkout "$base"
	# shellcheck disable=SC2086
	cocci $all_c >"$L/base.cocci"
	review_checkout "$tip"
	# shellcheck disable=SC2086
	cocci $all_c >"$L/tip.cocci"
	new=$(new_lines "$L/base.cocci" "$L/tip.cocci")
	if grep -q '^spatch failed' "$L/spatch.err"; then
		result FAIL review:coccicheck "spatch failed: $(grep -m1 '^spatch failed' "$L/spatch.err") (see $L/spatch.err)"
	elif [ -z "$new" ]; then
		result PASS review:coccicheck "$(wc -w <<<"$all_c") files, make coccicheck MODE=report; $(grep '^not run' "$L/spatch.err" | sort -u | wc -l) scripts need OCaml, not run ($L/spatch.err)"
	else
		result FAIL review:coccicheck "new coccinelle reports: $(head -n 3 <<<"$new" | tr '\n' ';')"
		printf 'new coccinelle reports:\n%s\n' "$new" >&2
	fi
fi
stage_end
