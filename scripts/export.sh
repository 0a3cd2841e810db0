#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Write the work tree's commits (kseries-base..series) back to patches/
# and series, with git format-patch and a cover letter made from the
# branch description (apply.sh sets it from the current cover letter).
#
#   export.sh          write patches/ and series
#   export.sh --check  write nothing; fail if patches/ or series differ
#                      from what export would write
#
# The output does not depend on who runs it: commit ids are zeroed and no
# signature or Message-Id is written.
. "$(dirname "$0")/lib.sh"

check=0
case ${1:-} in
--check) check=1 ;;
"") ;;
*) die "usage: $0 [--check]" ;;
esac

ktree_git rev-parse -q --verify "$KSERIES_BRANCH" >/dev/null ||
	die "no branch $KSERIES_BRANCH in $KSERIES_TREE (run scripts/apply.sh)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/patches"

if [ "$(ktree_git rev-list --count "$KSERIES_BASE_TAG..$KSERIES_BRANCH")" -gt 0 ]; then
	desc=$(ktree_git config "branch.$KSERIES_BRANCH.description" || true)
	[ -n "$desc" ] || warn "branch $KSERIES_BRANCH has no description: the cover letter will be a template"
	ktree_git format-patch -q --numbered --zero-commit --no-signature \
		--base="$KSERIES_BASE_TAG" --cover-letter --cover-from-description=subject \
		-o "$tmp/patches" "$KSERIES_BASE_TAG..$KSERIES_BRANCH" ||
		die "git format-patch failed"
	# format-patch dates the cover letter "now": give it the date of the
	# newest commit, so that exporting the same branch twice is identical.
	tipdate=$(ktree_git log -1 --format=%aD "$KSERIES_BRANCH")
	sed -i "1,/^\$/s/^Date: .*/Date: $tipdate/" "$tmp/patches/0000-cover-letter.patch"
fi
(cd "$tmp/patches" && ls | grep -v '^0000-cover-letter\.patch$' || true) >"$tmp/series"

if [ $check = 1 ]; then
	mkdir -p "$tmp/repo"
	cp -r "$KSERIES_REPO/patches" "$tmp/repo/patches"
	[ -f "$KSERIES_REPO/series" ] && cp "$KSERIES_REPO/series" "$tmp/repo/series"
	series_patches >"$tmp/repo/series.list" 2>/dev/null || : >"$tmp/repo/series.list"
	rc=0
	diff -ru --exclude=.gitkeep "$tmp/repo/patches" "$tmp/patches" >"$tmp/diff" || rc=1
	diff -u "$tmp/repo/series.list" "$tmp/series" >>"$tmp/diff" || rc=1
	if [ $rc != 0 ]; then
		head -n 200 "$tmp/diff" >&2
		die "patches/ and series differ from the work tree ($KSERIES_TREE, branch $KSERIES_BRANCH); run scripts/export.sh"
	fi
	info "patches/ and series match the work tree ($(wc -l <"$tmp/series") patches)"
	exit 0
fi

find "$KSERIES_REPO/patches" -maxdepth 1 -name '*.patch' -delete
cp "$tmp"/patches/*.patch "$KSERIES_REPO/patches/" 2>/dev/null || true
cp "$tmp/series" "$KSERIES_REPO/series"
info "exported $(wc -l <"$tmp/series") patches to $KSERIES_REPO/patches"
