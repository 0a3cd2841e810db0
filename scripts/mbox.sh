#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Turn patches/ into what the lists would receive, and prove it applies.
#
#   mbox.sh              write $KSERIES_RUN/outgoing/: one file per mail with
#                        To:/Cc: from scripts/get_maintainer.pl (maintainers
#                        and reviewers To, lists Cc; the cover letter goes to
#                        everyone), Message-Id/In-Reply-To threading, and
#                        series.mbox with all of them
#   mbox.sh --dry-run    also: git send-email --dry-run of outgoing/ (no
#                        network, nothing is sent)
#   mbox.sh --check      also: the dry run, git am of series.mbox onto a
#                        fresh checkout of the base (and b4 am of it, when b4
#                        is installed) must give the tree of the series
# With --check, prints result lines (STATUS<TAB>NAME<TAB>DETAIL).
. "$(dirname "$0")/lib.sh"

mode=${1:-}
case $mode in "" | --dry-run | --check) ;; *) die "usage: $0 [--dry-run|--check]" ;; esac
result() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}"; }

out=$KSERIES_RUN/outgoing
rm -rf "$out"
mkdir -p "$out"
gm() {
	(cd "$KSERIES_TREE" && perl scripts/get_maintainer.pl --no-git --no-git-fallback \
		--no-rolestats --no-tree --no-multiline "$@" 2>/dev/null)
}

cover=$KSERIES_REPO/patches/0000-cover-letter.patch
mapfile -t pats < <(series_patches)
[ -f "$cover" ] && [ ${#pats[@]} -gt 0 ] || die "no patches (patches/ and series)"

# Message-Ids derived from the base and the patches: same series, same ids.
sid=$( (echo "$BASE_COMMIT"; cat "$cover" "${pats[@]/#/$KSERIES_REPO/patches/}") | sha1sum | cut -c1-16)
msgid() { printf '<kseries-%s-%d@kseries.invalid>' "$sid" "$1"; }

# Insert headers after "From ...", before the first header.
addhdr() {
	local f=$1 n=$2 to=$3 cc=$4
	{
		head -n 1 "$f"
		printf 'Message-Id: %s\n' "$(msgid "$n")"
		[ "$n" = 0 ] || printf 'In-Reply-To: %s\nReferences: %s\n' "$(msgid 0)" "$(msgid 0)"
		# To/Cc folded one address a line (RFC 5322 lines stay under
		# 998 characters however many recipients the cover letter has).
		[ -z "$to" ] || printf 'To: %s\n' "$(sed 's/, /,\n /g' <<<"$to")"
		[ -z "$cc" ] || printf 'Cc: %s\n' "$(sed 's/, /,\n /g' <<<"$cc")"
		# The patch's own headers unfolded: b4 0.12 (Debian 12) fails on
		# a folded From:.
		tail -n +2 "$f" | awk 'body { print; next }
			/^$/ { if (h != "") print h; print; body = 1; next }
			/^[ \t]/ { sub(/^[ \t]+/, " "); h = h $0; next }
			{ if (h != "") print h; h = $0 }'
	} >"$out/$(basename "$f")"
}

allto= allcc=
n=0
for p in "${pats[@]}"; do
	n=$((n + 1))
	f=$KSERIES_REPO/patches/$p
	to=$(gm --no-l "$f" | sed 's/, */\n/g' | grep . | paste -sd, | sed 's/,/, /g')
	cc=$(gm --no-m --no-r "$f" | sed 's/, */\n/g' | grep . | paste -sd, | sed 's/,/, /g')
	allto+="$to, " allcc+="$cc, "
	addhdr "$f" "$n" "$to" "$cc"
done
uniq_list() { sed 's/, /\n/g' <<<"$1" | grep . | awk '!seen[$0]++' | paste -sd, | sed 's/,/, /g'; }
addhdr "$cover" 0 "$(uniq_list "$allto")" "$(uniq_list "$allcc")"
cat "$out"/0000-cover-letter.patch "${pats[@]/#/$out/}" >"$out/series.mbox"
[ -n "$mode" ] || { info "wrote $out (series.mbox: $((n + 1)) mails)"; exit 0; }

# Dry-run send: what git send-email would do, without a network.
dry=$(git send-email --dry-run --confirm=never --quiet --suppress-cc=all \
	--smtp-server=/bin/false --from="$(git var GIT_AUTHOR_IDENT | sed 's/>.*/>/')" \
	--8bit-encoding=UTF-8 --transfer-encoding=8bit \
	"$out"/0000-cover-letter.patch "${pats[@]/#/$out/}" 2>&1)
sent=$(grep -c '^Dry-Sent\|^Dry-OK' <<<"$dry")
printf '%s\n' "$dry" >"$out/send-email.dry-run"
if [ "$mode" = --dry-run ]; then
	printf '%s\n' "$dry"
	exit 0
fi
if [ "$sent" -eq $((n + 1)) ]; then
	result PASS review:send-dry-run "$sent mails, To/Cc from get_maintainer.pl"
else
	result FAIL review:send-dry-run "git send-email --dry-run passed $sent of $((n + 1)) mails, see $out/send-email.dry-run"
fi

# A fresh base checkout, git am of the mbox, compare trees.
want=$(ktree_git rev-parse "$KSERIES_BRANCH^{tree}")
fresh=$(mktemp -d)
trap 'ktree_git worktree remove --force "$fresh/am" >/dev/null 2>&1; rm -rf "$fresh"' EXIT
ktree_git worktree add -q --detach "$fresh/am" "$KSERIES_BASE_TAG" || die "worktree add failed"
if git -C "$fresh/am" am -q --empty=drop "$out/series.mbox" >"$fresh/am.log" 2>&1 &&
	[ "$(git -C "$fresh/am" rev-parse 'HEAD^{tree}')" = "$want" ]; then
	result PASS review:mbox-git-am "series.mbox applies on a fresh base, same tree as the series"
else
	result FAIL review:mbox-git-am "git am of series.mbox on the base: $(head -n 3 "$fresh/am.log" | tr '\n' ' ')"
fi
if command -v b4 >/dev/null; then
	git -C "$fresh/am" checkout -q --detach "$KSERIES_BASE_TAG"
	if mkdir -p "$fresh/b4" && (cd "$fresh" && b4 -q am --no-cache -m "$out/series.mbox" -o "$fresh/b4" "$(msgid 0 | tr -d '<>')") >"$fresh/b4.log" 2>&1 &&
		mbx=$(ls "$fresh"/b4/*.mbx 2>/dev/null | head -n 1) && [ -n "$mbx" ] &&
		git -C "$fresh/am" am -q "$mbx" >>"$fresh/b4.log" 2>&1 &&
		[ "$(git -C "$fresh/am" rev-parse 'HEAD^{tree}')" = "$want" ]; then
		result PASS review:mbox-b4-am "b4 am of series.mbox applies on a fresh base, same tree"
	else
		result FAIL review:mbox-b4-am "b4 am: $(grep -v '^$' "$fresh/b4.log" | tail -n 3 | tr '\n' ' ')"
	fi
fi
