#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Make the kernel work tree at the base: $KSERIES_WORKTREE, a git
# repository whose tag kseries-base is the base imported as one commit.
#
# Default: download the Debian package pinned in scripts/base.conf with a
# private apt source list (derived from the machine's own Debian source;
# the system's apt configuration is not touched), check the tarball's
# sha256 and import it.  The pinned version is the base: when it has left
# the archive, this fails and says so (the series is never silently moved
# to another base).
#
# KSERIES_IMPORT_FROM=/path: use the tree at HEAD of that git repository
# instead (the base's objects are copied from it, nothing in it is
# written).  It is the base (same tree id), or a tree that can stand in
# for it: one where every file the series touches is the base's, blob for
# blob, and no file it creates exists (scripts/lib/git.sh: base_differs), e.g. your
# own linux.git at the upstream tag (BASE_UPSTREAM_TAG) once the pinned
# Debian version has left the archive.  Such a base is its own commit
# (not BASE_COMMIT); the patches, their export and the checks of the
# series' files are the same on it, the rest of the kernel is not
# Debian's.
#
# A work tree at another base is replaced only when the workbench owns it
# (scripts/lib/git.sh: owned_dir) and either KSERIES_DISPOSABLE=1 (the CI tree
# of scripts/test.sh) or KSERIES_FORCE=1 (the developer says so).
. "$(dirname "$0")/lib.sh"

# Fail, saying so, when the pinned version is not in the archive.
require_pinned() {
	local what=$1 avail=$2
	grep -qxF "$BASE_VERSION" <<<"$avail" && return 0
	cat >&2 <<-EOF
	error: $what $BASE_VERSION, the base of this series, is no longer in
	error: Debian's $BASE_SUITE (available: $(tr '\n' ' ' <<<"$avail")).
	error: The series is not moved to another base silently: rebase it,
	error: update scripts/base.conf (version, sha256s, BASE_TREE, BASE_COMMIT)
	error: and re-run; or point KSERIES_IMPORT_FROM at a git tree of the base.
	EOF
	exit 1
}

# Download the pinned package into $KSERIES_DL (once) and print the .deb's path.
download_package() {
	local deb avail
	deb=$KSERIES_DL/${BASE_PACKAGE}_${BASE_VERSION/:/%3a}_all.deb
	if [ ! -f "$deb" ]; then
		apt_private_update deb
		avail=$(apt_private deb apt-cache madison "$BASE_PACKAGE" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }')
		require_pinned "$BASE_PACKAGE" "$avail"
		(cd "$KSERIES_DL" && apt_private deb apt-get -qq download "$BASE_PACKAGE=$BASE_VERSION" >&2) ||
			die "apt-get download $BASE_PACKAGE=$BASE_VERSION failed"
	fi
	[ -f "$deb" ] || die "downloaded package not found: $deb"
	printf '%s\n' "$deb"
}

# Commit the tree in the index of $KSERIES_WORKTREE as the base, with
# fixed metadata, and tag it.
commit_base() {
	local tree=$1 commit
	commit=$(base_import_commit "$tree" "$BASE_VERSION" "$BASE_KERNELVERSION" "$BASE_SHA256" "$BASE_DATE") ||
		die "git commit-tree failed"
	[ "$commit" = "$BASE_COMMIT" ] ||
		die "the base import gave commit $commit, scripts/base.conf says $BASE_COMMIT"
	ktree_git tag -f "$KSERIES_BASE_TAG" "$commit" >/dev/null
	printf '%s\n' "$commit"
}

init_tree_repo() {
	ktree_git init -q -b "$KSERIES_BRANCH"
	mark_owned_tree "$KSERIES_WORKTREE"
	ktree_git config gc.auto 0
	ktree_git config core.untrackedCache true
	ktree_git config am.threeWay true
}

# The tree at HEAD of KSERIES_IMPORT_FROM, checked to be the base.
import_from_tree() {
	local src tree
	src=$(cd "$KSERIES_IMPORT_FROM" 2>/dev/null && pwd -P) ||
		die "KSERIES_IMPORT_FROM=$KSERIES_IMPORT_FROM: no such directory"
	case $src/ in
	"$KSERIES_CACHE"/*) die "KSERIES_IMPORT_FROM must be a tree of your own, not one under $KSERIES_CACHE (the workbench replaces those)" ;;
	esac
	tree=$(git -C "$src" rev-parse -q --verify 'HEAD^{tree}' 2>/dev/null) ||
		die "KSERIES_IMPORT_FROM=$src is not a git tree with a commit"
	differ=
	[ "$tree" = "$BASE_TREE" ] || differ=$(base_differs "$src" "$tree")
	if [ -n "$differ" ]; then
		cat >&2 <<-EOF
		error: KSERIES_IMPORT_FROM=$src is not at the base of this series.
		  its HEAD tree:  $tree
		  expected tree:  $BASE_TREE
		                  (Linux $BASE_KERNELVERSION, Debian $BASE_PACKAGE $BASE_VERSION,
		                   every file of $BASE_TARBALL, as imported by scripts/fetch-base.sh)
		  nor can it stand in for it: of the files the series touches,
		  $(wc -l <<<"$differ") are not the base's: $(head -n 5 <<<"$differ" | tr '\n' ' ')
		Check out the base, or $BASE_UPSTREAM_TAG, in that tree (or unset KSERIES_IMPORT_FROM to download it).
		EOF
		exit 1
	fi
	printf '%s\n' "$src"
}

# A base that stands in for BASE_COMMIT: its own commit of TREE, saying so.
equivalent_base_commit() {
	local tree=$1 from=$2 commit
	commit=$(base_commit_tree "$tree" "$BASE_DATE" -m "Base for the series: $from" \
		-m "Not $BASE_PACKAGE $BASE_VERSION (commit $BASE_COMMIT): the files the series touches are that base's, blob for blob.") ||
		die "git commit-tree failed"
	ktree_git tag -f "$KSERIES_BASE_TAG" "$commit" >/dev/null
	printf '%s\n' "$commit"
}

[ -z "${KSERIES_IMPORT_FROM:-}" ] || src=$(import_from_tree) || exit 1

# Already imported?
if [ -e "$KSERIES_WORKTREE" ]; then
	owned_dir "$KSERIES_WORKTREE" ||
		die "$KSERIES_WORKTREE exists and the workbench did not create it; refusing to touch it (set KSERIES_WORKTREE to a new path)"
	have=$(ktree_git rev-parse -q --verify "$KSERIES_BASE_TAG^{tree}" 2>/dev/null)
	# A stand-in made from KSERIES_IMPORT_FROM before (that tree again, or
	# no KSERIES_IMPORT_FROM now), while it still stands in.
	if [ -n "$have" ] && [ "$have" != "$BASE_TREE" ] &&
		[[ "$(ktree_git log -1 --format=%s "$KSERIES_BASE_TAG")" == "Base for the series: "* ]] &&
		{ [ -z "${src:-}" ] || [ "$have" = "$(git -C "$src" rev-parse 'HEAD^{tree}')" ]; } &&
		[ -z "$(base_differs "$KSERIES_WORKTREE" "$KSERIES_BASE_TAG")" ]; then
		info "base: $KSERIES_WORKTREE ($KSERIES_BASE_TAG = $(ktree_git rev-parse "$KSERIES_BASE_TAG"), $(ktree_git log -1 --format=%s "$KSERIES_BASE_TAG"), standing in for $BASE_COMMIT)"
		exit 0
	elif [ "$have" = "$BASE_TREE" ]; then
		[ -f "$KSERIES_WORKTREE/.git/$KSERIES_MARKER" ] || mark_owned_tree "$KSERIES_WORKTREE"
		info "base: $KSERIES_WORKTREE ($KSERIES_BASE_TAG = $(ktree_git rev-parse "$KSERIES_BASE_TAG"))"
		exit 0
	fi
	if disposable_tree; then
		info "base: $KSERIES_WORKTREE holds another base (${have:-none}); replacing this disposable tree"
	elif [ "${KSERIES_FORCE:-0}" = 1 ]; then
		warn "$KSERIES_WORKTREE holds another base (${have:-none}); replacing it (KSERIES_FORCE=1)"
	else
		die "$KSERIES_WORKTREE holds another base (${have:-none}, want $BASE_TREE); it may hold unexported work: export it, then KSERIES_FORCE=1 to replace the tree"
	fi
	remove_owned_dir "$KSERIES_WORKTREE"
fi

# A tree whose import fails half-way is not left behind (the next run
# would take it for a tree holding work).
partial=
trap '[ -z "$partial" ] || rm -rf "$partial"' EXIT

if [ -n "${src:-}" ]; then
	mkdir -p "$KSERIES_WORKTREE"
	partial=$KSERIES_WORKTREE
	init_tree_repo
	# Borrow the objects to make the base commit, then copy what it needs
	# (one pack of the base tree) and stop borrowing: the work tree must
	# not break when the source is pruned, moved or deleted.
	borrow_objects "$KSERIES_WORKTREE" "$src"
	tree=$(git -C "$src" rev-parse 'HEAD^{tree}')
	if [ "$tree" = "$BASE_TREE" ]; then
		commit=$(commit_base "$BASE_TREE") || exit 1
	else
		commit=$(equivalent_base_commit "$tree" "$(git -C "$src" describe --tags --always HEAD 2>/dev/null) of $src") || exit 1
	fi
	ktree_git repack -a -d -q || die "git repack of the base objects failed"
	rm -f "$KSERIES_WORKTREE/.git/objects/info/alternates"
	ktree_git checkout -q -B "$KSERIES_BRANCH" "$commit" || die "checkout of the base failed"
	partial=
	info "base: $KSERIES_WORKTREE from KSERIES_IMPORT_FROM=$src ($KSERIES_BASE_TAG = $commit)"
	exit 0
fi

deb=$(download_package) || exit 1
info "package: $deb"
unpack=$(scratch_dir unpack) || exit 1
trap 'rm -rf "$unpack"; [ -z "$partial" ] || rm -rf "$partial"' EXIT
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$unpack" "./$BASE_TARBALL" ||
	die "$BASE_TARBALL not found in $deb"
sha=$(sha256sum "$unpack/$BASE_TARBALL" | cut -d' ' -f1)
[ "$sha" = "$BASE_SHA256" ] || die "sha256 of $BASE_TARBALL is $sha, expected $BASE_SHA256"
tar -xJf "$unpack/$BASE_TARBALL" -C "$unpack" || die "unpacking $BASE_TARBALL failed"
[ -f "$unpack/$BASE_TOPDIR/Makefile" ] || die "$BASE_TOPDIR/Makefile missing from $BASE_TARBALL"

mkdir -p "$(dirname "$KSERIES_WORKTREE")"
mv "$unpack/$BASE_TOPDIR" "$KSERIES_WORKTREE"
partial=$KSERIES_WORKTREE
init_tree_repo
# -f: every file of the tarball, whatever its .gitignore files say.
ktree_git add -A -f . || die "git add failed"
tree=$(ktree_git write-tree)
[ "$tree" = "$BASE_TREE" ] || die "the import of $BASE_TARBALL has tree $tree, scripts/base.conf says $BASE_TREE"
commit=$(commit_base "$tree") || exit 1
ktree_git reset -q --soft "$commit"
ktree_git update-ref "refs/heads/$KSERIES_BRANCH" "$commit"
pack_loose_objects
partial=
info "base: $KSERIES_WORKTREE ($KSERIES_BASE_TAG = $commit, tree $tree)"
