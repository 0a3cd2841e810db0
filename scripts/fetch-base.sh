#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Make the kernel work tree at the base: $KSERIES_TREE, a git repository
# whose tag kseries-base is the base imported as one commit.
#
# Default: download the Debian package named in scripts/base.conf with a
# private apt source list (derived from the machine's own Debian source,
# the system's apt configuration is not touched), check the tarball's
# sha256 and import it.  With KERNEL_TREE=/path, the tree at HEAD of that
# git repository is used instead; it must be the base (same tree id).
# The user's tree is only read.
. "$(dirname "$0")/lib.sh"

DL=$KSERIES_CACHE/dl

# The URI of the machine's Debian archive, from its apt sources (deb822
# or one-line format), skipping security and third-party archives.
debian_archive_uri() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk -v RS= '
			/(^|\n)Types:[^\n]*deb/ && /(^|\n)Suites:[^\n]*(buster|bullseye|bookworm|trixie|forky|sid|stable|testing|unstable)/ &&
			!/(^|\n)Suites:[^\n]*-security/ && /debian-archive-keyring|(^|\n)URIs:[^\n]*\/debian\/?(\n|$)/ {
				if (match($0, /(^|\n)URIs:[ \t]*[^ \t\n]+/)) {
					s = substr($0, RSTART, RLENGTH); sub(/^\n?URIs:[ \t]*/, "", s); print s; exit
				}
			}' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk '$1 == "deb" {
			i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			if ($(i + 1) !~ /-security/ && $(i + 1) ~ /^(buster|bullseye|bookworm|trixie|forky|sid|stable|testing|unstable)/) { print $i; exit }
		}' "$f"
	done
}

apt_private() {
	local cmd=$1
	shift
	"$cmd" -o Dir::Etc::SourceList="$DL/sources.list" \
		-o Dir::Etc::SourceParts="$DL/sources.list.d" \
		-o Dir::State::Lists="$DL/lists" \
		-o Dir::Cache="$DL/cache" \
		-o Debug::NoLocking=1 \
		${KSERIES_APT_SANDBOX:+-o APT::Sandbox::User="$KSERIES_APT_SANDBOX"} "$@"
}

# Download the package into $DL and print the path of the .deb.
download_package() {
	local uri version avail deb
	uri=$(debian_archive_uri | head -n 1)
	[ -n "$uri" ] || die "no Debian archive found in the apt sources of this machine"
	mkdir -p "$DL/sources.list.d" "$DL/lists/partial" "$DL/cache/archives/partial"
	: >"$DL/sources.list"
	cat >"$DL/sources.list.d/kseries-base.sources" <<-EOF
	Types: deb
	URIs: $uri
	Suites: $BASE_SUITE
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	[ "$(id -u)" -eq 0 ] && KSERIES_APT_SANDBOX=root
	apt_private apt-get -qq update >&2 || die "apt-get update of $BASE_SUITE failed"

	version=$BASE_VERSION
	avail=$(apt_private apt-cache madison "$BASE_PACKAGE" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }')
	if ! grep -qxF "$BASE_VERSION" <<<"$avail"; then
		version=$(head -n 1 <<<"$avail")
		[ -n "$version" ] || die "$BASE_PACKAGE is not in $BASE_SUITE"
		cat >&2 <<-EOF
		################################################################
		WARNING: $BASE_PACKAGE $BASE_VERSION is no longer in $BASE_SUITE.
		WARNING: using the newest one, $version, instead.  The series was
		WARNING: made for $BASE_VERSION and may not apply or behave the same.
		################################################################
		EOF
	fi
	(cd "$DL" && apt_private apt-get -qq download "$BASE_PACKAGE=$version" >&2) ||
		die "apt-get download $BASE_PACKAGE=$version failed"
	deb=$(ls "$DL"/"${BASE_PACKAGE}"_*.deb | grep -F "_${version/:/%3a}_" | head -n 1)
	[ -n "$deb" ] || die "downloaded package not found in $DL"
	printf '%s %s\n' "$deb" "$version"
}

# Commit the tree in the index of $KSERIES_TREE as the base, with fixed
# metadata, and tag it.
commit_base() {
	local tree=$1 version=$2 sha=$3 commit
	commit=$(GIT_AUTHOR_NAME="$KSERIES_BASE_NAME" GIT_AUTHOR_EMAIL="$KSERIES_BASE_EMAIL" \
		GIT_AUTHOR_DATE="$BASE_DATE" GIT_COMMITTER_NAME="$KSERIES_BASE_NAME" \
		GIT_COMMITTER_EMAIL="$KSERIES_BASE_EMAIL" GIT_COMMITTER_DATE="$BASE_DATE" \
		ktree_git commit-tree "$tree" -m "Import $BASE_PACKAGE $version" \
		-m "Linux $BASE_KERNELVERSION as shipped in Debian's $BASE_PACKAGE $version ($BASE_SUITE), $BASE_TARBALL, sha256 $sha.") ||
		die "git commit-tree failed"
	ktree_git tag -f "$KSERIES_BASE_TAG" "$commit" >/dev/null
	printf '%s\n' "$commit"
}

init_tree_repo() {
	ktree_git init -q -b "$KSERIES_BRANCH"
	ktree_git config gc.auto 0
	ktree_git config core.untrackedCache true
	ktree_git config am.threeWay true
	# git am needs a committer; use the machine's identity, or a
	# neutral one where the machine has none.
	git config user.email >/dev/null 2>&1 ||
		ktree_git config user.email "workbench@kseries.invalid"
	git config user.name >/dev/null 2>&1 ||
		ktree_git config user.name "kseries workbench"
}

check_tree_id() {
	local tree=$1 what=$2
	if [ -n "$BASE_TREE" ] && [ "$tree" != "$BASE_TREE" ]; then
		die "$what has tree $tree, but the base is $BASE_TREE ($BASE_PACKAGE $BASE_VERSION)"
	fi
}

if [ -n "${KERNEL_TREE:-}" ]; then
	src=$(cd "$KERNEL_TREE" 2>/dev/null && pwd) || die "KERNEL_TREE=$KERNEL_TREE: no such directory"
	[ "$src" != "$KSERIES_TREE" ] || die "KERNEL_TREE must not be the work tree itself ($KSERIES_TREE)"
	tree=$(git -C "$src" rev-parse -q --verify 'HEAD^{tree}' 2>/dev/null) ||
		die "KERNEL_TREE=$src is not a git tree with a commit"
	[ -n "$BASE_TREE" ] || die "scripts/base.conf has no BASE_TREE to check KERNEL_TREE against"
	if [ "$tree" != "$BASE_TREE" ]; then
		cat >&2 <<-EOF
		error: KERNEL_TREE=$src is not at the base of this series.
		  its HEAD tree:  $tree
		  expected tree:  $BASE_TREE
		                  (Linux $BASE_KERNELVERSION, Debian $BASE_PACKAGE $BASE_VERSION,
		                   every file of $BASE_TARBALL, as imported by scripts/fetch-base.sh)
		Check out the base in that tree (or unset KERNEL_TREE to download it).
		EOF
		exit 1
	fi
fi

# Already imported?  (A KERNEL_TREE was checked above: same base.)
if ktree_git rev-parse -q --verify "$KSERIES_BASE_TAG^{tree}" >/dev/null 2>&1; then
	have=$(ktree_git rev-parse "$KSERIES_BASE_TAG^{tree}")
	if [ -z "$BASE_TREE" ] || [ "$have" = "$BASE_TREE" ]; then
		info "base: $KSERIES_TREE ($KSERIES_BASE_TAG = $(ktree_git rev-parse "$KSERIES_BASE_TAG"))"
		exit 0
	fi
	warn "$KSERIES_TREE holds another base ($have); re-importing"
	[ "${KSERIES_FORCE:-0}" = 1 ] ||
		die "refusing to replace $KSERIES_TREE (it may hold unexported work); KSERIES_FORCE=1 to replace it"
fi

if [ -n "${KERNEL_TREE:-}" ]; then
	rm -rf "$KSERIES_TREE"
	mkdir -p "$KSERIES_TREE"
	init_tree_repo
	# Borrow the objects, do not copy them.
	printf '%s\n' "$(git -C "$src" rev-parse --git-common-dir | sed "s|^[^/]|$src/&|")/objects" \
		>"$KSERIES_TREE/.git/objects/info/alternates"
	commit=$(commit_base "$tree" "$BASE_VERSION" "$BASE_SHA256")
	ktree_git checkout -q -B "$KSERIES_BRANCH" "$commit"
	info "base: $KSERIES_TREE from KERNEL_TREE=$src ($KSERIES_BASE_TAG = $commit)"
	exit 0
fi

read -r deb version < <(download_package) || exit 1
info "package: $deb"
rm -rf "$KSERIES_SRC"
mkdir -p "$KSERIES_SRC"
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$KSERIES_SRC" "./$BASE_TARBALL" ||
	die "$BASE_TARBALL not found in $deb"
sha=$(sha256sum "$KSERIES_SRC/$BASE_TARBALL" | cut -d' ' -f1)
if [ "$sha" != "$BASE_SHA256" ]; then
	[ "$version" = "$BASE_VERSION" ] &&
		die "sha256 of $BASE_TARBALL is $sha, expected $BASE_SHA256"
	warn "sha256 of $BASE_TARBALL ($version) is $sha (pinned $BASE_VERSION: $BASE_SHA256)"
	BASE_TREE=
fi
tar -xJf "$KSERIES_SRC/$BASE_TARBALL" -C "$KSERIES_SRC" || die "unpacking $BASE_TARBALL failed"
[ -f "$KSERIES_SRC/$BASE_TOPDIR/Makefile" ] || die "$BASE_TOPDIR/Makefile missing from $BASE_TARBALL"

rm -rf "$KSERIES_TREE"
mv "$KSERIES_SRC/$BASE_TOPDIR" "$KSERIES_TREE"
rm -rf "$KSERIES_SRC"
init_tree_repo
# -f: every file of the tarball, whatever its .gitignore files say.
ktree_git add -A -f . || die "git add failed"
tree=$(ktree_git write-tree)
check_tree_id "$tree" "the import of $BASE_TARBALL"
commit=$(commit_base "$tree" "$version" "$sha")
ktree_git reset -q --soft "$commit"
ktree_git update-ref "refs/heads/$KSERIES_BRANCH" "$commit"
info "base: $KSERIES_TREE ($KSERIES_BASE_TAG = $commit, tree $tree)"
