# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# scripts/lib.sh, part review: the review checkout, the base and the series files, warnings, kernel-doc, cover letters.
# Sourced by scripts/lib.sh only.

# ---------------------------------------------------------------- review
#
# The review checkout: a second, detached worktree of the work tree's
# repository, $KSERIES_REVIEW/linux, where the bisect, static and review
# checks check out one commit after another (only changed files are
# rewritten, so kbuild rebuilds only what they reach), with build
# directories of its own beside it.  A checkout left pointing into a
# repository that was replaced (a base bump) is recreated.
KSERIES_REVIEW=${KSERIES_REVIEW:-$(dirname "$KSERIES_WORKTREE")/review}
REVIEW_TREE=$KSERIES_REVIEW/linux

rgit() { xgit -C "$REVIEW_TREE" "$@"; }

review_checkout() {
	local common
	common=$(rgit rev-parse --path-format=absolute --git-common-dir 2>/dev/null)
	if [ -z "$common" ] || [ "$common" != "$(ktree_git rev-parse --path-format=absolute --git-common-dir)" ]; then
		[ ! -e "$REVIEW_TREE" ] || info "review: recreating $REVIEW_TREE (not a worktree of $KSERIES_WORKTREE)" >&2
		remove_owned_dir "$REVIEW_TREE"
		ktree_git worktree prune
		make_owned_dir "$KSERIES_REVIEW"
		ktree_git worktree add -q --detach "$REVIEW_TREE" "$1" >&2 || die "git worktree add $REVIEW_TREE failed"
		# The marker at the top (Debian's /* .gitignore hides it from git).
		touch "$REVIEW_TREE/$KSERIES_MARKER"
	fi
	rgit checkout -q -f --detach "$1" || die "checkout of $1 in $REVIEW_TREE failed"
}

# Configure a build directory of the review checkout for the commit
# checked out there: the test kernel's .config, then olddefconfig at this
# tree (an option the series adds does not exist at the base), every time,
# so the result never depends on where it was configured last.
#   review_configure DIR [make args...] (e.g. LLVM=-19)
review_configure() {
	local dir=$1 a
	shift
	[ -f "$KSERIES_BUILD/.config" ] || die "no $KSERIES_BUILD/.config: build the series first (build-kernel.sh)"
	build_dir_for_base "$dir"
	cp "$KSERIES_BUILD/.config" "$dir/.config"
	kmake "$REVIEW_TREE" "$dir" -s "$@" olddefconfig >&2 || die "make olddefconfig in $dir failed"
	for a in "$@"; do
		case $a in
		LLVM=*) grep -qx 'CONFIG_CC_IS_CLANG=y' "$dir/.config" || die "$dir: LLVM build is not configured for clang" ;;
		esac
	done
}

# Of the objects named, those missing from build directory $1 (a build
# that "succeeded" without producing them checked nothing).
missing_objs() {
	local dir=$1 o
	shift
	for o in "$@"; do [ -f "$dir/$o" ] || printf '%s ' "$o"; done
}

# The kbuild target of a kernel .c file.  amdkfd is built by amdgpu's
# Makefile (AMDKFD_PATH := ../amdkfd), so its objects are named from there.
obj_of() {
	case $1 in
	drivers/gpu/drm/amd/amdkfd/*) echo "drivers/gpu/drm/amd/amdgpu/../amdkfd/$(basename "${1%.c}").o" ;;
	*) echo "${1%.c}.o" ;;
	esac
}

# Kernel .c files of a file list (stdin): not tools/, scripts/, Documentation/.
kernel_c() { grep -E '\.c$' | grep -vE '^(tools|scripts|Documentation|samples)/' || true; }

# undefined_configs GIT_DIR COMMIT [FROM]: the CONFIG_ symbols that the
# lines COMMIT adds to FROM (its parent by default) name in C, headers,
# Makefiles and Kconfig, and that no Kconfig of COMMIT defines.  The
# bisect stage compiles with the tip's config, so a patch using a symbol
# that a later patch (or another posting) adds would still build.
undefined_configs() {
	local s
	for s in $(xgit -C "$1" diff-tree -p --no-commit-id "${3:-$2^}" "$2" -- '*.c' '*.h' '*Makefile' '*Kbuild' '*Kconfig*' ':!tools/' |
		grep -E '^\+' | grep -vE '^\+\+\+ ' | grep -oE '\bCONFIG_[A-Z0-9_]+' | sed 's/_MODULE$//' | sort -u); do
		xgit -C "$1" grep -qE "^[[:space:]]*(menu)?config ${s#CONFIG_}[[:space:]]*\$" "$2" -- '*Kconfig*' ||
			printf '%s\n' "$s"
	done
}

# Pack the work tree repository's loose objects once there are many: an
# import or a few series applications leave tens of thousands of files.
# Automatic gc is off there (git would start it in the background, under
# the stages); this is git gc --auto in the foreground, from 20,000 loose
# objects, without delta search (one pack quickly); it also prunes
# unreachable objects after git's usual two weeks.
pack_loose_objects() {
	ktree_git -c gc.auto=20000 -c gc.autoDetach=false -c pack.window=0 gc --auto --quiet ||
		die "git gc --auto in $KSERIES_WORKTREE failed"
}

# base_import_commit TREE VERSION KERNELVERSION SHA256 DATE: the commit
# that imports TREE, $BASE_PACKAGE VERSION, as the base, with fixed
# metadata, so that its id is the same on every machine (xgit takes the
# identity from KSERIES_GIT_*, never from GIT_AUTHOR_*).
base_import_commit() {
	base_commit_tree "$1" "$5" -m "Import $BASE_PACKAGE $2" \
		-m "Linux $3 as shipped in Debian's $BASE_PACKAGE $2 ($BASE_SUITE), $BASE_TARBALL, sha256 $4."
}

# base_commit_tree TREE DATE COMMIT-TREE-ARGS...: a parentless commit of
# TREE by the base's fixed identity at DATE (the import, or a stand-in).
base_commit_tree() {
	local tree=$1 date=$2
	shift 2
	KSERIES_GIT_NAME="$KSERIES_BASE_NAME" KSERIES_GIT_EMAIL="$KSERIES_BASE_EMAIL" \
		GIT_AUTHOR_DATE="$date" GIT_COMMITTER_DATE="$date" \
		ktree_git commit-tree "$tree" "$@"
}

# Files a commit touches (added, modified or renamed; not deleted).
commit_files() { ktree_git diff-tree --no-commit-id -r --name-only --diff-filter=AMR "$1^" "$1"; }

# Every file the commits base..tip touch.
series_files() { ktree_git diff --name-only --diff-filter=AMR "$1" "$2"; }

# The objects the last build of $KSERIES_BUILD linked: the members of
# vmlinux.a and the objects of every module in modules.order (both
# rewritten by kbuild at each build; a .cmd file can outlive its option).
built_objs() {
	(
		cd "$KSERIES_BUILD" || exit 1
		ar t vmlinux.a || exit 1
		sed 's/\.o$/.mod/' modules.order | xargs -r cat
	) 2>/dev/null | sort -u
}

# The .c files of the series that the test kernel builds: the others are
# not compiled by any check.
built_c() {
	local f objs
	objs=$(built_objs)
	while read -r f; do
		grep -qxF "$(obj_of "$f")" <<<"$objs" && printf '%s\n' "$f"
	done
}

# Warnings of a build log, normalized: "path: text" without line:column,
# paths relative to the tree, then counted ("N path: warning: text").
norm_warnings() {
	local tree=$1 build=$2 rel
	rel=$(realpath -m --relative-to="$build" "$tree")
	sed -n -e "s|$tree/||g" -e "s|^$rel/||" \
		-e 's/^\([^ :]*\):[0-9]*:[0-9]*: \(warning\|error\): /\1: \2: /p' \
		-e 's/^\([^ :]*\):[0-9]*: \(warning\|error\): /\1: \2: /p' |
		sort | uniq -c | sed 's/^ *//'
}

# Lines of count list $2 with a count above what list $1 has.
new_lines() {
	awk 'FILENAME == ARGV[1] { n = $1; $1 = ""; have[$0] = n; next }
		{ n = $1; $1 = ""; if (n > have[$0] + 0) printf "%d x%s\n", n - have[$0], $0 }' "$1" "$2"
}

# kernel-doc -none of files (paths in the review tree), normalized and
# counted like norm_warnings.  kernel-doc exits 0 whatever it finds; its
# output is warnings only ("file:line: warning: ..." or "Warning: ..."):
# a non-zero exit or any other line is kernel-doc failing, and fails this.
kdoc() {
	local f out raw=
	for f in "$@"; do
		[ -f "$REVIEW_TREE/$f" ] || continue
		out=$(cd "$REVIEW_TREE" && python3 scripts/kernel-doc -none "$f" 2>&1) || {
			printf 'kernel-doc failed on %s (status %s): %s\n' "$f" "$?" "$(tail -n 1 <<<"$out")" >&2
			return 1
		}
		raw+=$out$'\n'
	done
	# A warning may go on over indented lines (the comment it quotes).
	if grep -v '^$' <<<"$raw" | grep -qviE '(^warning: |: warning: |^[[:space:]])'; then
		printf 'kernel-doc failed: %s\n' "$(grep -v '^$' <<<"$raw" | grep -viE '(^warning: |: warning: |^[[:space:]])' | head -n 1)" >&2
		return 1
	fi
	awk '/^$/ { next } /^[[:space:]]/ { w = w " |" $0; next } { if (w != "") print w; w = $0 } END { if (w != "") print w }' <<<"$raw" |
		sed -e 's/^\(Warning\|warning\|WARNING\): *//' -e 's/:[0-9]\+\( \|:\)/\1/' |
		sort | uniq -c | sed 's/^ *//'
	return 0
}

# The .c and .h files of a file list (stdin) that kernel-doc reads.
kdoc_files() { grep -E '\.(c|h)$' | grep -vE '^(tools|scripts|samples)/' || true; }

# The subject and text of a cover letter (everything above its shortlog),
# the form git format-patch --cover-from-description=subject takes back.
cover_description() {
	[ -f "$1" ] || return 0
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
		}' "$1"
}

# "Author Name <email>" and the subject of a patch file.
patch_author() {
	git mailinfo /dev/null /dev/null <"$1" |
		awk '/^Author: / { sub(/^Author: /, ""); n = $0 } /^Email: / { sub(/^Email: /, ""); e = $0 } END { printf "%s <%s>\n", n, e }'
}
patch_subject() {
	git mailinfo /dev/null /dev/null <"$1" | sed -n 's/^Subject: //p'
}
