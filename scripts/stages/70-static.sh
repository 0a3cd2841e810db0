#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage static: what the compilers and checkers say about the series' code,
# tip of the series against the base, on exactly the same files:
#   static:gcc-w1-sparse   gcc W=1 and sparse (C=2) on the objects of every
#                          .c file the series touches: no warning the base
#                          does not have
#   static:clang-w1        the same objects built by clang (LLVM=-19, as
#                          the 0-day robot also builds with clang) with W=1
#   static:kernel-doc      scripts/kernel-doc -none on every .c/.h file the
#                          series touches
# Warnings are compared without line and column numbers, counted per file,
# so moved code does not count as new and one more of the same does.
#
# The same on every run, whatever was built before: each object is
# deleted before it is built (ccache replays a cached compile's warnings),
# and C=2 runs sparse on each named object.  Base and tip are built the
# same way, in build directories of their own beside the review checkout
# ($KSERIES_REVIEW).  Verdicts are cached by the base and tip trees, the
# config and the tools.  Patch by patch, the same checks (and coccinelle)
# are scripts/review.sh, run before posting.  Logs in $KSERIES_RUN/static/.
. "$(dirname "$0")/../lib.sh"
hold_build_lock

L=$KSERIES_RUN/static
cache=$KSERIES_CACHE/results/static
mkdir -p "$L" "$cache"
rm -f "$L"/*

base=$(ktree_git rev-parse "$KSERIES_BASE_TAG") || die "no $KSERIES_BASE_TAG"
tip=$(ktree_git rev-parse "$KSERIES_BRANCH") || die "no branch $KSERIES_BRANCH"
all=$(series_files "$base" "$tip")
all_c=$(kernel_c <<<"$all")
built=$(built_c <<<"$all_c")
unbuilt=$(comm -23 <(sort <<<"$all_c") <(sort <<<"$built") | tr '\n' ' ')
kfiles=$(kdoc_files <<<"$all")
CLANG=(LLVM=-19)

key=$( {
	ktree_git rev-parse "$base^{tree}" "$tip^{tree}"
	cat "$KSERIES_BUILD/.config"
	workbench_hash
	gcc --version | head -n 1
	clang-19 --version | head -n 1
	sparse --version
} | sha256sum | cut -c1-16)
if verdict=$(cache_get "$cache/$key"); then
	sed 's/$/ (cached: same trees, config and tools)/' <<<"$verdict"
	exit 0
fi

# build_warnings BUILD_DIR LOG [make args]: configure BUILD_DIR at the
# tree checked out, then build the objects of $built that exist there,
# each deleted first, with W=1 (and the make args); the log has every
# warning.  Fails if the build fails or an object is missing afterwards.
build_warnings() {
	local dir=$1 log=$2 f o objs=() miss
	shift 2
	review_configure "$dir" "$@"
	for f in $built; do
		[ -f "$REVIEW_TREE/$f" ] || continue
		o=$(obj_of "$f")
		rm -f "$dir/$o"
		objs+=("$o")
	done
	[ ${#objs[@]} -gt 0 ] || { : >"$log"; return 0; }
	# --output-sync: with -j2, two sparse runs writing at once could splice
	# a warning of one file into the line of another.
	kmake "$REVIEW_TREE" "$dir" -k --output-sync=target W=1 "$@" "${objs[@]}" >"$log" 2>&1 || return 1
	miss=$(missing_objs "$dir" "${objs[@]}")
	[ -z "$miss" ] || { printf 'not built: %s\n' "$miss" >>"$log"; return 1; }
}

# Everything at one tree: W=1+sparse (gcc), W=1 (clang), kernel-doc.
check_tree() {
	local name=$1 c=$2 rc=0
	review_checkout "$c"
	build_warnings "$KSERIES_REVIEW/build-w1" "$L/$name.gcc.log" \
		C=2 CHECK="$KSERIES_REPO/scripts/sparse-compat" || rc=1
	build_warnings "$KSERIES_REVIEW/build-clang" "$L/$name.clang.log" "${CLANG[@]}" || rc=1
	# shellcheck disable=SC2086
	kdoc $kfiles >"$L/$name.kdoc" 2>"$L/$name.kdoc.err" || echo "kernel-doc failed" >>"$L/$name.kdoc.failed"
	norm_warnings "$REVIEW_TREE" "$KSERIES_REVIEW/build-w1" <"$L/$name.gcc.log" >"$L/$name.gcc.warnings"
	norm_warnings "$REVIEW_TREE" "$KSERIES_REVIEW/build-clang" <"$L/$name.clang.log" >"$L/$name.clang.warnings"
	return $rc
}

prepare_dirs() {
	review_checkout "$base"
	review_configure "$KSERIES_REVIEW/build-w1"
	review_configure "$KSERIES_REVIEW/build-clang" "${CLANG[@]}"
	kmake "$REVIEW_TREE" "$KSERIES_REVIEW/build-w1" -s prepare >"$L/prepare.log" 2>&1 &&
		kmake "$REVIEW_TREE" "$KSERIES_REVIEW/build-clang" -s "${CLANG[@]}" prepare >>"$L/prepare.log" 2>&1 || {
		tail -n 20 "$L/prepare.log" >&2
		die "make prepare of the static build directories failed"
	}
}

# The results, kept in memory (a log file on a full disk can lose lines).
results=
say() {
	local line
	line=$(result "$@")
	printf '%s\n' "$line"
	results+=$line$'\n'
}

prepare_dirs
base_ok=1 tip_ok=1
check_tree base "$base" || base_ok=0
check_tree tip "$tip" || tip_ok=0

# A tool that failed is a failure of the tool, not "no new warnings".
tool_failed() {
	grep -h -m1 -E '^sparse-compat: sparse failed|^clang(-[0-9]+)?: error:|PLEASE submit a bug report|internal compiler error|^gcc: fatal error|^ccache: error' \
		"$L"/*.gcc.log "$L"/*.clang.log 2>/dev/null | head -n 1
}
failed=$(tool_failed)

compare() {
	local name=$1 what=$2 ext=$3 new
	new=$(new_lines "$L/base.$ext" "$L/tip.$ext")
	if [ -z "$new" ]; then
		say PASS "$name" "$what: nothing the base does not have ($(wc -w <<<"$built") objects)"
	else
		printf '%s: new:\n%s\n' "$name" "$new" >&2
		say FAIL "$name" "$what, new at the tip: $(head -n 3 <<<"$new" | tr '\n' ';')"
	fi
}

if [ -n "$failed" ]; then
	say FAIL static:tools "a tool failed: $failed (logs: $L)"
fi
compare static:gcc-w1-sparse "gcc W=1 and sparse" gcc.warnings
compare static:clang-w1 "clang-19 W=1" clang.warnings
if [ -f "$L/base.kdoc.failed" ] || [ -f "$L/tip.kdoc.failed" ]; then
	say FAIL static:kernel-doc "scripts/kernel-doc failed to run (logs: $L)"
else
	compare static:kernel-doc "kernel-doc -none on $(wc -w <<<"$kfiles") files" kdoc
fi
[ $base_ok = 1 ] || say FAIL static:build-base "the W=1 objects did not all build at the base (logs: $L/base.*.log)"
[ $tip_ok = 1 ] || say FAIL static:build-tip "the W=1 objects did not all build at the tip (logs: $L/tip.*.log)"

[ -z "$unbuilt" ] || say SKIP static:unbuilt "not built by the test kernel's config, so not checked: $unbuilt"
grep -q '^FAIL' <<<"$results" || printf '%s' "$results" | cache_put "$cache/$key"
