#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Does the series apply to pristine upstream (BASE_UPSTREAM_TAG, v7.3.4)
# as it does to the Debian base?  The base is Debian's linux-source
# tarball: upstream plus Debian's own patches, so the cover letters name
# the upstream tag too, and this proves it.
#
# Upstream comes from the .orig tarball of Debian's linux source package
# (apt-get source --download-only with a private deb-src list; its sha256
# is pinned in scripts/base.conf), or from KSERIES_UPSTREAM_TARBALL=/path
# (e.g. linux-7.3.4.tar.xz from kernel.org; not pinned, so it is said).
# Only the files the series touches are extracted.  Then:
#   apply:upstream:files      which of them differ between upstream and
#                             the Debian base (none expected)
#   apply:upstream:<posting>  the posting alone applies to upstream
#   apply:upstream:series     all postings in order apply to upstream
# When the archive does not serve the tarball (some mirrors carry no
# source packages), every case is a SKIP that says so.
# Prints result lines (STATUS<TAB>NAME<TAB>DETAIL).
. "$(dirname "$0")/lib.sh"

tmp=$(scratch_dir upstream) || exit 1
trap 'rm -rf "$tmp"' EXIT

skip_all() {
	result SKIP apply:upstream "$1"
	exit 0
}

tarball=${KSERIES_UPSTREAM_TARBALL:-}
if [ -z "$tarball" ]; then
	tarball=$KSERIES_DL/src/$BASE_ORIG_TARBALL
	if [ ! -f "$tarball" ]; then
		mkdir -p "$KSERIES_DL/src"
		(apt_private_update deb-src) 2>"$tmp/apt.log" ||
			skip_all "no deb-src index of $BASE_SUITE: $(tail -n 1 "$tmp/apt.log")"
		if ! (cd "$tmp" && apt_private deb-src apt-get -qq source --download-only \
			"$BASE_ORIG_SOURCE=$BASE_VERSION") >"$tmp/apt.log" 2>&1 || [ ! -f "$tmp/$BASE_ORIG_TARBALL" ]; then
			skip_all "Debian's archive here does not serve $BASE_ORIG_TARBALL ($BASE_ORIG_SOURCE $BASE_VERSION): $(grep -m1 -o "$BASE_ORIG_TARBALL.*" "$tmp/apt.log" || tail -n 1 "$tmp/apt.log"); set KSERIES_UPSTREAM_TARBALL to a copy of $BASE_UPSTREAM_TAG"
		fi
		mv "$tmp/$BASE_ORIG_TARBALL" "$tarball"
	fi
	sha=$(sha256sum "$tarball" | cut -d' ' -f1)
	[ "$sha" = "$BASE_ORIG_SHA256" ] || {
		rm -f "$tarball"
		result FAIL apply:upstream "sha256 of $BASE_ORIG_TARBALL is $sha, scripts/base.conf pins $BASE_ORIG_SHA256"
		exit 0
	}
	what="$BASE_ORIG_TARBALL (sha256 checked)"
else
	[ -f "$tarball" ] || die "KSERIES_UPSTREAM_TARBALL=$tarball: no such file"
	what="$(basename "$tarball") (KSERIES_UPSTREAM_TARBALL, sha256 $(sha256sum "$tarball" | cut -c1-16)..., not pinned)"
fi

mapfile -t patches < <(series_patches)
files=("${patches[@]/#/$KSERIES_PATCHES/}")
mapfile -t paths < <(patch_paths "${files[@]}" | sed 's|^/||')
top=$(tar -tf "$tarball" | head -n 1 | cut -d/ -f1)
mkdir -p "$tmp/up"
# Paths the series creates are not in the tarball: tar says so, that is fine.
tar -xf "$tarball" -C "$tmp/up" --strip-components=1 "${paths[@]/#/$top/}" 2>/dev/null

# Which touched files differ between upstream and the Debian base.
base=$(ktree_git rev-parse "$KSERIES_BASE_TAG")
differ=()
for p in "${paths[@]}"; do
	want=$(ktree_git rev-parse -q --verify "$base:$p" 2>/dev/null)
	if [ -f "$tmp/up/$p" ]; then
		have=$(xgit hash-object "$tmp/up/$p")
	else
		have=
	fi
	[ "$want" = "$have" ] || differ+=("$p")
done
if [ ${#differ[@]} -eq 0 ]; then
	result PASS apply:upstream:files "the ${#paths[@]} files the series touches are the same in $BASE_UPSTREAM_TAG ($what) and in the Debian base"
else
	result FAIL apply:upstream:files "${#differ[@]} of the files the series touches differ between $BASE_UPSTREAM_TAG and the Debian base: ${differ[*]}"
fi

# git apply of the patches on a copy of upstream's files; the result must
# be, file by file, what git am made of them on the Debian base (the
# posting alone: refs/kseries/alone/<posting>; all: the series branch).
# GIT_CEILING_DIRECTORIES: git apply must not find a repository above the
# copy (it would apply relative to that one and skip these files).
apply_on_upstream() {
	local name=$1 want=$2 dir=$tmp/apply-$1 f p blob differ=
	shift 2
	rm -rf "$dir"
	cp -a "$tmp/up" "$dir"
	for f in "$@"; do
		if ! (cd "$dir" && GIT_CEILING_DIRECTORIES=$tmp xgit apply --whitespace=nowarn "$f") >"$tmp/apply.log" 2>&1; then
			result FAIL "apply:upstream:$name" "${f#"$KSERIES_PATCHES"/} does not apply to $BASE_UPSTREAM_TAG: $(head -n 2 "$tmp/apply.log")"
			return
		fi
	done
	if ! ktree_git rev-parse -q --verify "$want^{commit}" >/dev/null; then
		result FAIL "apply:upstream:$name" "no $want to compare with (the apply stage makes it)"
		return
	fi
	for p in "${paths[@]}"; do
		blob=$(ktree_git rev-parse -q --verify "$want:$p" 2>/dev/null)
		if [ -f "$dir/$p" ]; then
			[ "$(xgit hash-object "$dir/$p")" = "$blob" ] || differ+="$p "
		else
			[ -z "$blob" ] || differ+="$p "
		fi
	done
	if [ -n "$differ" ]; then
		result FAIL "apply:upstream:$name" "applied to $BASE_UPSTREAM_TAG, these files differ from the series on the Debian base: $differ"
	else
		result PASS "apply:upstream:$name" "$# patches apply to $BASE_UPSTREAM_TAG ($what), with the same result as on the Debian base"
	fi
}
while read -r posting; do
	mapfile -t pp < <(posting_patches "$posting")
	apply_on_upstream "$posting" "refs/kseries/alone/$posting" "${pp[@]/#/$KSERIES_PATCHES/}"
done < <(series_postings)
apply_on_upstream series "refs/heads/$KSERIES_BRANCH" "${files[@]}"
