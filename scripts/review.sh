#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What reviewers check, patch by patch, on the series applied in
# $KSERIES_TREE (branch series; scripts/apply.sh):
#
#   review:build:<patch>      the patch, applied on the ones before it, builds:
#                             the objects of the .c files it touches, and when
#                             it touches a header, Kconfig or Makefile, the
#                             objects of every other .c file of the series
#   review:warnings:<patch>   no W=1 or sparse (C=2) warning on the touched .c
#                             files that the same files do not have on the base
#                             or after an earlier patch (which was blamed)
#   review:kernel-doc:<patch> no scripts/kernel-doc -none warning on touched
#                             .c/.h files that the base does not have (idem)
#   review:coccicheck         no coccinelle report (MODE=report) on the
#                             series' .c files that the base does not have
#
# Warnings are compared without line and column numbers, counted per file,
# so moving code does not count as new and one more of the same does.
# The checks use the test kernel's .config ($KSERIES_BUILD/.config, made by
# build-kernel.sh) in a second checkout, $KSERIES_REVIEW/{linux,build}, laid
# out like the test tree so that ccache shares objects with the test build.
# Prints result lines (STATUS<TAB>NAME<TAB>DETAIL); logs in $KSERIES_RUN/review.
. "$(dirname "$0")/lib.sh"

KSERIES_REVIEW=${KSERIES_REVIEW:-$(dirname "$KSERIES_TREE")/review}
R=$KSERIES_REVIEW/linux
B=$KSERIES_REVIEW/build
L=$KSERIES_RUN/review
mkdir -p "$L" "$B"
rm -f "$L"/*

result() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}"; }

[ -f "$KSERIES_BUILD/.config" ] || die "no $KSERIES_BUILD/.config: build the series first (build-kernel.sh)"
base=$(ktree_git rev-parse "$KSERIES_BASE_TAG") || die "no $KSERIES_BASE_TAG in $KSERIES_TREE"
mapfile -t commits < <(ktree_git rev-list --reverse "$KSERIES_BASE_TAG..$KSERIES_BRANCH")
mapfile -t names < <(series_patches)
[ ${#commits[@]} -eq ${#names[@]} ] ||
	die "branch $KSERIES_BRANCH has ${#commits[@]} commits, series lists ${#names[@]} patches"

# The review checkout: a worktree of the test tree, detached.
if [ ! -e "$R/.git" ]; then
	rm -rf "$R"
	ktree_git worktree prune
	ktree_git worktree add -q --detach "$R" "$base" || die "git worktree add $R failed"
fi
rgit() { git -C "$R" "$@"; }
checkout() { rgit checkout -q -f --detach "$1" || die "checkout of $1 in $R failed"; }

# --output-sync: with -j2, two sparse runs writing at once can splice a
# warning of one file into the line of another, and a spliced line is
# "new" to the comparison below (seen in CI on kfd_mqd_manager_v10/v11).
KMAKE=(make -C "$R" O="$B" ARCH=x86_64 CC="ccache gcc" HOSTCC="ccache gcc"
	-j"$KSERIES_JOBS" --output-sync=target
	KBUILD_BUILD_USER=kseries KBUILD_BUILD_HOST=kseries)

configure() {
	cp "$KSERIES_BUILD/.config" "$B/.config"
	"${KMAKE[@]}" -s olddefconfig >/dev/null 2>&1
}

# Files a commit touches (added or modified, not deleted).
touched() { rgit diff-tree --no-commit-id -r --name-only --diff-filter=AMR "$1^" "$1"; }
# Kernel .c files: not tools/, not scripts/, not Documentation/.
kernel_c() { grep -E '\.c$' | grep -vE '^(tools|scripts|Documentation|samples)/' || true; }

# Warnings of a build log, normalized: "path: text" without line:column,
# paths relative to the tree, then counted.
rel=$(realpath -m --relative-to="$B" "$R")
norm_warnings() {
	sed -n -e "s|$R/||g" -e "s|^$rel/||" \
		-e 's/^\([^ :]*\):[0-9]*:[0-9]*: \(warning\|error\): /\1: \2: /p' \
		-e 's/^\([^ :]*\):[0-9]*: \(warning\|error\): /\1: \2: /p' |
		sort | uniq -c | sed 's/^ *//'
}

# The kbuild target of a .c file.  amdkfd is built by amdgpu's Makefile
# (AMDKFD_PATH := ../amdkfd), so its objects are named from there.
obj_of() {
	case $1 in
	drivers/gpu/drm/amd/amdkfd/*) echo "drivers/gpu/drm/amd/amdgpu/../amdkfd/$(basename "${1%.c}").o" ;;
	*) echo "${1%.c}.o" ;;
	esac
}

# Build the object of each .c file in $@ with W=1 and sparse; log to $log.
build_objs() {
	local log=$1 f o
	shift
	local objs=()
	for f in "$@"; do
		[ -f "$R/$f" ] || continue
		o=$(obj_of "$f")
		rm -f "$B/$o"
		objs+=("$o")
	done
	[ ${#objs[@]} -gt 0 ] || { : >"$log"; return 0; }
	"${KMAKE[@]}" -k W=1 C=2 CHECK="$KSERIES_REPO/scripts/sparse-compat" "${objs[@]}" >"$log" 2>&1
}

kdoc() {
	local f
	for f in "$@"; do
		[ -f "$R/$f" ] || continue
		(cd "$R" && PYTHONDONTWRITEBYTECODE=1 python3 scripts/kernel-doc -none "$f" 2>&1)
	done | sed -e 's/^\(Warning\|warning\|WARNING\): *//' -e 's/:[0-9]\+\( \|:\)/\1/' |
		grep -v '^$' | sort | uniq -c | sed 's/^ *//'
}

# Every .c and documentation-checkable file the series touches.
all_touched=$(for c in "${commits[@]}"; do ktree_git diff-tree --no-commit-id -r --name-only --diff-filter=AMR "$c^" "$c"; done | sort -u)
all_c=$(kernel_c <<<"$all_touched")
all_kdoc=$(grep -E '\.(c|h)$' <<<"$all_touched" | grep -vE '^(tools|scripts|samples)/' || true)

# 1. The base: warnings of the same files, and the base must build them.
stage_begin review-base
checkout "$base"
configure
# shellcheck disable=SC2086
build_objs "$L/base.build.log" $all_c
norm_warnings <"$L/base.build.log" >"$L/base.warnings"
# shellcheck disable=SC2086
kdoc $all_kdoc >"$L/base.kdoc"
stage_end

# Lines of $2 (count text) with a count above what $1 has.
new_lines() {
	awk 'FILENAME == ARGV[1] { n = $1; $1 = ""; have[$0] = n; next }
		{ n = $1; $1 = ""; if (n > have[$0] + 0) printf "%d x%s\n", n - have[$0], $0 }' "$1" "$2"
}

# Merge count lists $2 into $1 (the larger count of each line wins).
# The baseline of a patch is the base plus what the patches before it
# were already blamed for, so a finding is reported once, on the patch
# that introduces it, and not again on every later patch touching the
# same file.
merge_counts() {
	awk '{ n = $1; $1 = ""; if (n > have[$0] + 0) have[$0] = n }
		END { for (l in have) printf "%d%s\n", have[l], l }' "$1" "$2" | sort >"$1.new"
	mv "$1.new" "$1"
}

# 2. Each patch in order.
stage_begin review-patches
cp "$L/base.warnings" "$L/running.warnings"
cp "$L/base.kdoc" "$L/running.kdoc"
for i in "${!commits[@]}"; do
	c=${commits[$i]} p=${names[$i]}
	checkout "$c"
	configure
	files=$(touched "$c")
	cfiles=$(kernel_c <<<"$files")

	# Build: touched objects with W=1/sparse, then the directories a
	# header/Kconfig/Makefile change reaches.
	# shellcheck disable=SC2086
	build_objs "$L/$p.objs.log" $cfiles
	obj_rc=$?
	# A header, Kconfig or Makefile change reaches further: build the
	# objects of every .c file of the series that exists at this patch
	# (not a whole directory: a changed amdgpu header would rebuild all
	# of amdgpu for every patch, hours on two cores).  The full kernel
	# and modules are built at the tip by the test build.
	others=
	if grep -qE '(\.h|Kconfig[^/]*|Makefile|Kbuild)$' <<<"$files"; then
		others=$(for f in $all_c; do
			[ -f "$R/$f" ] && ! grep -qxF "$f" <<<"$cfiles" && obj_of "$f"
		done)
	fi
	others_rc=0
	if [ -n "$others" ]; then
		# shellcheck disable=SC2086
		"${KMAKE[@]}" -k $others >"$L/$p.others.log" 2>&1 || others_rc=1
	fi
	if [ $obj_rc = 0 ] && [ $others_rc = 0 ]; then
		result PASS "review:build:$p" "$(wc -w <<<"$cfiles") touched objects${others:+, $(wc -w <<<"$others") other objects of the series}"
	else
		err=$(grep -hE 'error:|Error [0-9]' "$L/$p.objs.log" "$L/$p.others.log" 2>/dev/null | head -n 3 | tr '\n' ' ')
		result FAIL "review:build:$p" "the tree does not build at this patch: $err(log: $L/$p.*.log)"
	fi

	# W=1 and sparse, against the base and what earlier patches were blamed for.
	# (Warnings located in headers count too: the base built every .c
	# file of the series, so a header's old warnings are in its list.)
	norm_warnings <"$L/$p.objs.log" >"$L/$p.warnings"
	new=$(new_lines "$L/running.warnings" "$L/$p.warnings")
	merge_counts "$L/running.warnings" "$L/$p.warnings"
	if [ -z "$new" ]; then
		result PASS "review:warnings:$p" "W=1 + sparse on $(wc -w <<<"$cfiles") files"
	else
		result FAIL "review:warnings:$p" "new W=1/sparse warnings: $(head -n 3 <<<"$new" | tr '\n' ';')"
		printf '%s: new warnings:\n%s\n' "$p" "$new" >&2
	fi

	# kernel-doc of touched C sources and headers.
	kfiles=$(grep -E '\.(c|h)$' <<<"$files" | grep -vE '^(tools|scripts|samples)/' || true)
	# shellcheck disable=SC2086
	kdoc $kfiles >"$L/$p.kdoc"
	new=$(new_lines "$L/running.kdoc" "$L/$p.kdoc")
	merge_counts "$L/running.kdoc" "$L/$p.kdoc"
	if [ -z "$new" ]; then
		result PASS "review:kernel-doc:$p" "$(wc -w <<<"$kfiles") files"
	else
		result FAIL "review:kernel-doc:$p" "new kernel-doc warnings: $(head -n 3 <<<"$new" | tr '\n' ';')"
		printf '%s: new kernel-doc warnings:\n%s\n' "$p" "$new" >&2
	fi
done
stage_end

# 3. Coccinelle on the series' .c files: tip against base.
stage_begin review-coccicheck
cocci() {
	local s files=()
	for f in "$@"; do [ -f "$R/$f" ] && files+=("$f"); done
	[ ${#files[@]} -gt 0 ] || return 0
	# One spatch per script over all files (spatch's start-up, not the
	# matching, is what costs: ~1 s a call).
	for s in "$R"/scripts/coccinelle/*/*.cocci; do
		grep -q 'virtual report' "$s" || continue
		(cd "$R" && spatch -D report --very-quiet --no-show-diff --cocci-file "$s" \
			--no-includes --include-headers-for-types "${files[@]}" 2>/dev/null)
	done | sed -e "s|$R/||g" -e 's/:[0-9]*:[0-9]*-[0-9]*:/:/' -e 's/line [0-9][0-9]*/line N/g' | sort | uniq -c | sed 's/^ *//'
}
if ! command -v spatch >/dev/null; then
	result FAIL review:coccicheck "spatch not installed (scripts/deps.sh)"
else
	checkout "$base"
	# shellcheck disable=SC2086
	cocci $all_c >"$L/base.cocci"
	checkout "${commits[-1]}"
	# shellcheck disable=SC2086
	cocci $all_c >"$L/tip.cocci"
	new=$(new_lines "$L/base.cocci" "$L/tip.cocci")
	if [ -z "$new" ]; then
		result PASS review:coccicheck "$(wc -w <<<"$all_c") files"
	else
		result FAIL review:coccicheck "new coccinelle reports: $(head -n 3 <<<"$new" | tr '\n' ';')"
		printf 'new coccinelle reports:\n%s\n' "$new" >&2
	fi
fi
stage_end
