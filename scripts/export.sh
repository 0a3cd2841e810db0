#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Write the work tree's commits (kseries-base..series) back to patches/
# and series, one posting per tree (scripts/postings.conf says which
# commit goes where): patches/NAME/ holds git format-patch output of the
# posting's commits applied alone on the base, with its own numbering,
# cover letter and base-commit.
#
#   export.sh          write patches/ and series
#   export.sh --check  write nothing; fail if patches/ or series differ
#                      from what export would write
#
# A cover letter keeps its subject and text (everything above the
# shortlog) from the current patches/NAME/0000-cover-letter.patch: edit
# them there.  The rest (numbering, shortlog, diffstat, base-commit) is
# generated.  The cover letter's From: and Date: are the author and date
# of the posting's newest commit.
#
# The output does not depend on who runs it or on their git
# configuration: git runs without user or system config, in scratch
# repositories of its own (git am and format-patch alike), with fixed
# identities; commit ids are zeroed and no signature or Message-Id is
# written.
. "$(dirname "$0")/lib.sh"

check=0
case ${1:-} in
--check) check=1 ;;
"") ;;
*) die "usage: $0 [--check]" ;;
esac

ktree_git rev-parse -q --verify "refs/heads/$KSERIES_BRANCH" >/dev/null ||
	die "no branch $KSERIES_BRANCH in $KSERIES_WORKTREE (run scripts/apply.sh)"
base=$(ktree_git rev-parse "$KSERIES_BASE_TAG") || die "no $KSERIES_BASE_TAG in $KSERIES_WORKTREE"
# A base that stands in for BASE_COMMIT (scripts/fetch-base.sh,
# KSERIES_IMPORT_FROM) gives the same patches; their base-commit: stays
# BASE_COMMIT.
# base_blobs knows the files of the committed patches only: a file the
# branch touches beyond them cannot be compared, so it cannot be exported
# from a stand-in.
if [ "$base" != "$BASE_COMMIT" ]; then
	differ=$(base_differs "$KSERIES_WORKTREE" "$base")
	[ -z "$differ" ] || die "the base of $KSERIES_WORKTREE is not $BASE_COMMIT, and the series' files differ there: $(head -n 5 <<<"$differ" | tr '\n' ' ')"
	unknown=$(comm -23 <(ktree_git diff --name-only "$base" "$KSERIES_BRANCH" | sort) <(base_blobs | cut -d' ' -f2- | sort))
	[ -z "$unknown" ] || die "on a stand-in base ($base, not $BASE_COMMIT) the branch touches files the committed patches do not, which cannot be compared with $BASE_COMMIT's: $(head -n 5 <<<"$unknown" | tr '\n' ' '); export from the Debian base"
fi

tmp=$(scratch_dir export) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/patches"

# A repository of our own that borrows the work tree's objects: its
# configuration is empty, whatever the developer set in the work tree.
xgit init -q "$tmp/repo"
# A fixed length for the abbreviated ids of the index lines: git's automatic
# length grows with the objects the repository (and its alternates) holds,
# so that a developer's tree and a fresh one wrote different patches.
xgit -C "$tmp/repo" config core.abbrev 12
borrow_objects "$tmp/repo"
sgit() { xgit -C "$tmp/repo" "$@"; }

# Sort the commits into postings, in order.
declare -A of
order=()
last=
mapfile -t commits < <(ktree_git rev-list --reverse "$KSERIES_BASE_TAG..$KSERIES_BRANCH")
mapfile -t conf_order < <(postings_conf | cut -f1)
for c in "${commits[@]}"; do
	subject=$(ktree_git log -1 --format=%s "$c")
	p=$(posting_of_subject "$subject") ||
		die "commit $(ktree_git rev-parse --short "$c") \"$subject\": its subject matches no posting of scripts/postings.conf"
	if [ "$p" != "$last" ]; then
		for q in "${order[@]}"; do
			[ "$q" != "$p" ] ||
				die "commit $(ktree_git rev-parse --short "$c") \"$subject\" ($p) comes after commits of another posting: keep each posting's commits together, in the order of scripts/postings.conf"
		done
		for q in "${conf_order[@]}"; do
			[ -n "$last" ] && [ "$q" = "$last" ] && break
			[ "$q" != "$p" ] || [ -z "$last" ] ||
				die "commit $(ktree_git rev-parse --short "$c") \"$subject\": posting $p must come before posting $last (scripts/postings.conf)"
		done
		order+=("$p")
		last=$p
	fi
	of[$p]+="$c "
done

: >"$tmp/series"
cat >>"$tmp/series" <<'EOF'
# The series: postings in the order they apply, each a "[name]" line and
# its patches (patches/name/, after its 0000-cover-letter.patch).  Each
# posting also applies alone on the base.  Written by scripts/export.sh.
EOF
for p in "${order[@]}"; do
	# The posting's commits, alone on the base.
	files=()
	n=0
	for c in ${of[$p]}; do
		n=$((n + 1))
		files+=("$tmp/in-$p.$n.patch")
		sgit format-patch -q --stdout --zero-commit --no-signature -1 "$c" >"${files[-1]}" ||
			die "format-patch of $c failed"
	done
	log=$tmp/am-$p.log
	chain=$(am_on "$base" "$log" "${files[@]}") || {
		cat "$log" >&2
		die "posting $p does not apply alone on the base (without the postings before it)"
	}
	ad=$(sgit log -1 --format=%aD "$chain")
	sgit update-ref "refs/heads/$p" "$chain"
	desc=$(cover_description "$(cover_letter "$p")")
	[ -n "$desc" ] || warn "posting $p has no cover letter yet: it will be the template (edit it in patches/$p/0000-cover-letter.patch)"
	sgit config "branch.$p.description" "$desc"
	KSERIES_GIT_NAME=$(sgit log -1 --format=%an "$chain") KSERIES_GIT_EMAIL=$(sgit log -1 --format=%ae "$chain") \
		sgit format-patch -q --numbered --zero-commit --no-signature \
		--subject-prefix="$(posting_prefix "$p")" \
		--base="$base" --cover-letter --cover-from-description=subject \
		-o "$tmp/patches/$p" "$base..$p" >/dev/null || die "git format-patch of posting $p failed"
	sed -i "s/^base-commit: $base\$/base-commit: $BASE_COMMIT/" "$tmp/patches/$p/0000-cover-letter.patch"
	# format-patch dates the cover letter "now": give it the date of the
	# posting's newest commit, so that exporting twice is identical.
	sed -i "1,/^\$/s/^Date: .*/Date: $ad/" "$tmp/patches/$p/0000-cover-letter.patch"
	printf '\n[%s]\n' "$p" >>"$tmp/series"
	(cd "$tmp/patches/$p" && ls | grep -v '^0000-cover-letter\.patch$') >>"$tmp/series"
done

if [ $check = 1 ]; then
	rc=0
	mkdir -p "$tmp/committed"
	cp -r "$KSERIES_PATCHES/." "$tmp/committed/" 2>/dev/null
	find "$tmp/committed" -name .gitkeep -delete
	diff -ru "$tmp/committed" "$tmp/patches" >"$tmp/diff" || rc=1
	diff -u "$KSERIES_SERIES" "$tmp/series" >>"$tmp/diff" || rc=1
	if [ $rc != 0 ]; then
		head -n 200 "$tmp/diff" >&2
		die "patches/ and series differ from the work tree ($KSERIES_WORKTREE, branch $KSERIES_BRANCH); run scripts/export.sh"
	fi
	info "patches/ and series match the work tree (${#commits[@]} patches in ${#order[@]} postings: ${order[*]})"
	exit 0
fi

find "$KSERIES_PATCHES" -name '*.patch' -delete
find "$KSERIES_PATCHES" -mindepth 1 -type d -empty -delete
cp -r "$tmp/patches/." "$KSERIES_PATCHES/"
cp "$tmp/series" "$KSERIES_SERIES"
info "exported ${#commits[@]} patches in ${#order[@]} postings (${order[*]}) to $KSERIES_PATCHES"
