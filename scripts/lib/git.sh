# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# scripts/lib.sh, part git: git as the scripts run it, owned directories, scratch repositories, git am.
# Sourced by scripts/lib.sh only.

# ------------------------------------------------------------------- git
#
# git as the scripts run it: no user or system configuration (so results
# do not depend on who runs them) and the workbench's fixed identity for
# the commits the scripts make.  (The cover letters and send.sh say whose
# identity they need through KSERIES_GIT_NAME/KSERIES_GIT_EMAIL.)
xgit() {
	GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 \
		GIT_AUTHOR_NAME=${KSERIES_GIT_NAME:-$KSERIES_BOT_NAME} \
		GIT_AUTHOR_EMAIL=${KSERIES_GIT_EMAIL:-$KSERIES_BOT_EMAIL} \
		GIT_COMMITTER_NAME=${KSERIES_GIT_NAME:-$KSERIES_BOT_NAME} \
		GIT_COMMITTER_EMAIL=${KSERIES_GIT_EMAIL:-$KSERIES_BOT_EMAIL} \
		git "$@"
}

# git in the kernel work tree.
ktree_git() {
	xgit -C "$KSERIES_WORKTREE" "$@"
}

# ---------------------------------------------------- owned directories
#
# The scripts delete or reset only directories they created: those with
# the marker file (at the top, or in .git/ for a git tree), or missing
# ones.  Trees that earlier versions of the scripts made without a marker
# count only if they are where those put them (the work trees and build
# directories under $KSERIES_CACHE) and are what they made.  Anything
# else (a user's own kernel tree named by mistake) is refused.
owned_dir() {
	local real
	[ -e "$1" ] || return 0
	[ ! -f "$1/$KSERIES_MARKER" ] && [ ! -f "$1/.git/$KSERIES_MARKER" ] || return 0
	real=$(realpath -m "$1")
	case $real in
	"$KSERIES_CACHE"/linux | "$KSERIES_CACHE"/ci/linux)
		git -C "$real" rev-parse -q --verify "refs/tags/$KSERIES_BASE_TAG" >/dev/null 2>&1 ;;
	"$KSERIES_CACHE"/build | "$KSERIES_CACHE"/ci/build | "$KSERIES_CACHE"/review | "$KSERIES_CACHE"/ci/review | \
		"$KSERIES_CACHE"/review/* | "$KSERIES_CACHE"/ci/review/* | "$KSERIES_CACHE"/run | "$KSERIES_CACHE"/ci/run | \
		"$KSERIES_CACHE"/scratch | "$KSERIES_CACHE"/send | "$KSERIES_CACHE"/send/*)
		return 0 ;;
	*) return 1 ;;
	esac
}

# mkdir a directory the workbench owns; an existing one must be its own
# already (it never adopts a directory it did not make).
make_owned_dir() {
	if [ -e "$1" ] && [ -n "$(ls -A "$1" 2>/dev/null)" ]; then
		owned_dir "$1" || die "$1 exists and the workbench did not create it; refusing to use it"
	fi
	mkdir -p "$1" && touch "$1/$KSERIES_MARKER"
}

# scripts/test.sh's own tree, which may be replaced or reset whatever it
# holds (KSERIES_DISPOSABLE=1, which test.sh sets, counts for it only).
disposable_tree() {
	[ "${KSERIES_DISPOSABLE:-0}" = 1 ] && [ "$KSERIES_WORKTREE" = "$KSERIES_CACHE/ci/linux" ]
}

# Mark a git tree the workbench created (the marker in .git/, where
# neither git status nor the kernel's own files see it).
mark_owned_tree() {
	touch "$1/.git/$KSERIES_MARKER"
}

# rm -rf a directory, only if the workbench owns it.
remove_owned_dir() {
	owned_dir "$1" || die "refusing to delete $1: the workbench did not create it (no $KSERIES_MARKER)"
	rm -rf "$1"
}

# A scratch directory, removed at exit by the caller's trap.
scratch_dir() {
	make_owned_dir "$KSERIES_SCRATCH"
	mktemp -d "$KSERIES_SCRATCH/$1.XXXXXX"
}

# A worktree of the work tree's repository at commit $2, in directory $1,
# with only the paths read from stdin checked out (b4 needs a checkout,
# of a few files).
sparse_worktree() {
	local dir=$1 rev=$2
	ktree_git worktree add -q --no-checkout --detach "$dir" "$rev" >/dev/null || return 1
	xgit -C "$dir" sparse-checkout set --no-cone --stdin || return 1
	xgit -C "$dir" checkout -q --detach "$rev"
}

# The paths patch files (or mbox files) touch, as sparse-checkout
# patterns.
patch_paths() {
	grep -h '^diff --git a/' "$@" | sed -E 's#^diff --git a/(.*) b/(.*)$#/\1\n/\2#' | sort -u
}

# "ID PATH" for every file the series touches: ID is the blob the file
# has at the base, as the first patch that touches it names it (its index
# line, 12 hex digits), or "new" for a file the series creates.  Each
# posting applies alone on the base, so every first touch is the base's.
base_blobs() {
	local p
	series_patches | while read -r p; do
		awk '/^diff --git a\// { path = substr($3, 3); next }
			path != "" && /^new file mode/ { print "new", path; path = ""; next }
			path != "" && /^index [0-9a-f]+\.\./ { split($2, id, "."); print id[1], path; path = "" }' \
			"$KSERIES_PATCHES/$p"
	done | awk '!seen[$2]++'
}

# base_differs GIT_DIR TREE: the files the series touches that TREE does
# not have as the base has them (base_blobs); nothing when TREE can stand
# in for the base.
base_differs() {
	local id path have
	while read -r id path; do
		have=$(xgit -C "$1" rev-parse -q --verify "$2:$path" 2>/dev/null)
		if [ "$id" = new ]; then
			[ -z "$have" ] || printf '%s (the series creates it)\n' "$path"
		elif [[ $have != "$id"* ]]; then
			printf '%s\n' "$path"
		fi
	done < <(base_blobs)
}

# Let the repository at DIR borrow the objects of the repository at FROM
# (default: the work tree's), through its alternates file.
borrow_objects() {
	printf '%s\n' "$(git -C "${2:-$KSERIES_WORKTREE}" rev-parse --path-format=absolute --git-common-dir)/objects" \
		>"$1/.git/objects/info/alternates"
}

# git am of mbox/patch files on REV in a scratch repository of its own
# (its configuration is empty, whatever the work tree's repository says),
# borrowing the work tree's objects, with only the paths the files touch
# checked out (seconds, not minutes).  The resulting commits are fetched
# into the work tree's repository; prints the last one.  git am's output
# goes to LOG.
#   [AM_OPTS=...] am_on REV LOG FILE...   (AM_OPTS default: --no-3way:
#   the scratch repository borrows every object of the work tree, so a
#   three-way merge could succeed here where a maintainer's git am fails)
am_on() {
	local rev=$1 log=$2 wt rc=0 tip
	shift 2
	[ $# -gt 0 ] || { echo "am_on: no patch files" >"$log"; return 1; }
	wt=$(scratch_dir am) || return 1
	{
		xgit init -q "$wt/repo" &&
			borrow_objects "$wt/repo" &&
			patch_paths "$@" | xgit -C "$wt/repo" sparse-checkout set --no-cone --stdin &&
			xgit -C "$wt/repo" checkout -q --detach "$rev"
	} >"$log" 2>&1 || { rm -rf "$wt"; return 1; }
	# shellcheck disable=SC2086
	if xgit -C "$wt/repo" am --committer-date-is-author-date ${AM_OPTS:---no-3way} "$@" >>"$log" 2>&1 &&
		tip=$(xgit -C "$wt/repo" rev-parse HEAD) &&
		ktree_git fetch -q --no-tags "$wt/repo" "$tip" >>"$log" 2>&1; then
		printf '%s\n' "$tip"
	else
		rc=1
	fi
	rm -rf "$wt"
	return $rc
}

remove_worktree() {
	[ -e "$1" ] || return 0
	ktree_git worktree remove --force "$1" >/dev/null 2>&1 || rm -rf "$1"
	ktree_git worktree prune
}

# kselftest_make TREE DIR OUT PROG [VAR=value...]: build the kselftest
# program PROG of tools/testing/selftests/DIR in TREE into OUT/PROG with
# DIR's Makefile, against the test build's UAPI headers.
kselftest_make() {
	local tree=$1 dir=$2 out=$3 prog=$4
	shift 4
	make -s -C "$tree/tools/testing/selftests/$dir" OUTPUT="$out" CC="ccache gcc" \
		KHDR_INCLUDES="-isystem $KSERIES_BUILD/usr/include" "$@" "$out/$prog"
}
