#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Can the series move to another version of the base package?  Run it
# when Debian uploads a new linux-source-7.3 (the archive keeps one
# version per suite: the pinned one then leaves it, and scripts/fetch-base.sh
# stops on every new machine).
#
#   base-move.sh [VERSION]   VERSION of $BASE_PACKAGE, default the newest
#                            the archive has (the pinned one if it is still
#                            the newest)
#
# The package is downloaded and imported as fetch-base.sh would import it
# (one commit, fixed metadata) into the work tree's repository, as
# refs/kseries/next-base; nothing else of the work tree changes.  Then it
# prints result lines (STATUS<TAB>NAME<TAB>DETAIL):
#   base-move:import            (VERSION the pinned one) the import gives
#                               the pinned tree and commit again
#   base-move:touched           the files the series touches that differ
#                               between the pinned base and VERSION
#   base-move:apply:<posting>   the posting alone applies (git am, no 3-way)
#   base-move:apply:series      all postings in order apply
#   base-move:build:<posting>   the .c files of the posting that the test
#                               kernel builds compile with kbuild on VERSION
#                               (the test kernel's config, olddefconfig)
#   base-move:build:series      the same for the series' tip
# and the scripts/base.conf lines for VERSION.  To move the base: update
# scripts/base.conf with them, rebase the series onto the new base if a
# posting did not apply (scripts/apply.sh, then scripts/export.sh), and
# run scripts/test.sh.
# It needs a machine with the work tree and the test build (scripts/build.sh
# ran there while the pinned version was in the archive): a developer's.
# Exit status 1 when a check failed.
. "$(dirname "$0")/lib.sh"

failed=
# A result line, remembered when it is a FAIL.
res() {
	[ "$1" != FAIL ] || failed=1
	result "$@"
}

[ -f "$KSERIES_BUILD/.config" ] || die "no $KSERIES_BUILD/.config: run scripts/build.sh first"
ktree_git rev-parse -q --verify "$KSERIES_BASE_TAG" >/dev/null || die "no work tree at the base: run scripts/build.sh first"

apt_private_update deb
mapfile -t avail < <(apt_private deb apt-cache madison "$BASE_PACKAGE" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }')
[ ${#avail[@]} -gt 0 ] || die "the archive has no $BASE_PACKAGE in $BASE_SUITE"
version=${1:-${avail[0]}}
printf '%s\n' "${avail[@]}" | grep -qxF -- "$version" ||
	die "$BASE_PACKAGE $version is not in the archive (it has: ${avail[*]})"
if [ "$version" = "$BASE_VERSION" ]; then
	info "$BASE_PACKAGE $version is the pinned base (the archive has: ${avail[*]}); checking it all the same" >&2
fi

tmp=$(scratch_dir base-move) || exit 1
trap 'rm -rf "$tmp"' EXIT
deb=$KSERIES_DL/${BASE_PACKAGE}_${version/:/%3a}_all.deb
if [ ! -f "$deb" ]; then
	(cd "$tmp" && apt_private deb apt-get -qq download "$BASE_PACKAGE=$version" >&2) ||
		die "apt-get download $BASE_PACKAGE=$version failed"
	mv "$tmp"/*.deb "$deb"
fi
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "./$BASE_TARBALL" || die "$BASE_TARBALL not found in $deb"
sha=$(sha256sum "$tmp/$BASE_TARBALL" | cut -d' ' -f1)
tar -xJf "$tmp/$BASE_TARBALL" -C "$tmp" || die "unpacking $BASE_TARBALL failed"
rm -f "$tmp/$BASE_TARBALL"
src=$tmp/$BASE_TOPDIR
kv=$(make -s -C "$src" kernelversion 2>/dev/null)

# The import, into the work tree's repository (its own index file; most
# blobs are there already).
export GIT_INDEX_FILE=$tmp/index
xgit --git-dir="$(ktree_git rev-parse --path-format=absolute --git-common-dir)" --work-tree="$src" add -A -f . ||
	die "git add of $BASE_PACKAGE $version failed"
tree=$(ktree_git write-tree) || die "git write-tree failed"
unset GIT_INDEX_FILE
# The pinned version with its pinned date: the import must give the
# pinned ids again, else this command is not importing as fetch-base.sh.
if [ "$version" = "$BASE_VERSION" ]; then
	date=$BASE_DATE
else
	date=$(date -u -d "@$(stat -c %Y "$src/Makefile")" +%Y-%m-%dT%H:%M:%S+00:00)
fi
new=$(base_import_commit "$tree" "$version" "$kv" "$sha" "$date") || die "git commit-tree failed"
if [ "$version" = "$BASE_VERSION" ]; then
	if [ "$tree $new $sha" = "$BASE_TREE $BASE_COMMIT $BASE_SHA256" ]; then
		res PASS base-move:import "$version imported again gives the pinned tree and commit ($BASE_COMMIT)"
	else
		res FAIL base-move:import "$version imported again gives tree $tree, commit $new, sha256 $sha; scripts/base.conf pins $BASE_TREE, $BASE_COMMIT, $BASE_SHA256"
	fi
fi
ktree_git update-ref refs/kseries/next-base "$new"
rm -rf "$src"
old=$(ktree_git rev-parse "$KSERIES_BASE_TAG")

hold_build_lock
mapfile -t patches < <(series_patches)
mapfile -t paths < <(patch_paths "${patches[@]/#/$KSERIES_PATCHES/}" | sed 's|^/||')
differ=$(ktree_git diff --name-only "$old" "$new" -- "${paths[@]}" | tr '\n' ' ')
if [ -z "$differ" ]; then
	res PASS base-move:touched "the files the series touches are the same in $version (Linux $kv) as in the pinned base"
else
	res PASS base-move:touched "changed in $version (Linux $kv): $differ"
fi

# build NAME TIP FILES: compile those of FILES the test kernel builds, at
# TIP, in a build directory of the review checkout for the new base.
B=$KSERIES_REVIEW/build-next-base
build() {
	local name=$1 tip=$2 objs=() f miss
	for f in $(kernel_c <<<"$3" | built_c); do objs+=("$(obj_of "$f")"); done
	if [ ${#objs[@]} -eq 0 ]; then
		res SKIP "base-move:build:$name" "no .c file of it is built by the test kernel"
		return
	fi
	review_checkout "$tip"
	rm -rf "$B"
	mkdir -p "$B"
	cp "$KSERIES_BUILD/.config" "$B/.config"
	if kmake "$REVIEW_TREE" "$B" -s olddefconfig >"$tmp/$name.log" 2>&1 &&
		kmake "$REVIEW_TREE" "$B" -k "${objs[@]}" >>"$tmp/$name.log" 2>&1 &&
		miss=$(missing_objs "$B" "${objs[@]}") && [ -z "$miss" ]; then
		res PASS "base-move:build:$name" "${#objs[@]} objects compiled on $version"
	else
		cp "$tmp/$name.log" "$KSERIES_RUN/base-move-$name.log"
		res FAIL "base-move:build:$name" "$(grep -m3 -E 'error:|Error [0-9]' "$tmp/$name.log" | tr '\n' ' ')${miss:+missing: $miss }(log: $KSERIES_RUN/base-move-$name.log)"
	fi
}

mkdir -p "$KSERIES_RUN"
while read -r posting; do
	mapfile -t pp < <(posting_patches "$posting")
	if tip=$(am_on "$new" "$tmp/am-$posting.log" "${pp[@]/#/$KSERIES_PATCHES/}"); then
		res PASS "base-move:apply:$posting" "${#pp[@]} patches apply alone on $version"
		build "$posting" "$tip" "$(ktree_git diff --name-only --diff-filter=AMR "$new" "$tip")"
	else
		res FAIL "base-move:apply:$posting" "$(grep -m1 -E '^(error|Patch failed)' "$tmp/am-$posting.log")"
	fi
done < <(series_postings)
if tip=$(am_on "$new" "$tmp/am-series.log" "${patches[@]/#/$KSERIES_PATCHES/}"); then
	res PASS base-move:apply:series "${#patches[@]} patches apply in order on $version"
	build series "$tip" "$(ktree_git diff --name-only --diff-filter=AMR "$new" "$tip")"
else
	res FAIL base-move:apply:series "$(grep -m1 -E '^(error|Patch failed)' "$tmp/am-series.log")"
fi
rm -rf "$B"

cat <<EOF

scripts/base.conf for $BASE_PACKAGE $version (Linux $kv):
BASE_VERSION=$version
BASE_SHA256=$sha
BASE_KERNELVERSION=$kv
BASE_DATE=$date
BASE_TREE=$tree
BASE_COMMIT=$new
(and BASE_UPSTREAM_TAG, BASE_ORIG_TARBALL, BASE_ORIG_SHA256 when the
kernel version changed: the .orig tarball's sha256 is in the archive's
Sources index)
EOF
[ -z "$failed" ]
