#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Turn the postings into mail with b4 (Debian's b4 0.12): b4 prep keeps
# each posting on a branch b4/<posting> (cover letter in the branch
# description), b4 prep --auto-to-cc fills To/Cc from the tree's
# scripts/get_maintainer.pl (maintainers and reviewers To, lists Cc), and
# b4 send writes, reflects or sends the mails (threading, Message-Ids).
#
#   send.sh --dry-run [POSTING...]  write the mails to $KSERIES_RUN/outgoing/
#                                   POSTING/ and POSTING.mbox (nothing sent)
#   send.sh --reflect [POSTING...]  b4 send --reflect: to yourself only
#   send.sh --send [POSTING...]     b4 send: to the lists (asks first)
#   send.sh --check                 CI: mail under a test identity, then
#                                   prove it (result lines, see below)
#   send.sh --ident                 print the sender identity found
#
# The sender: the project's git identity is not a person and cannot
# certify the DCO, so the mails are sent by you.  Your identity comes from
# your own git configuration (user.name/user.email, or sendemail.from).
# You become the author (From:) of each patch the placeholder authored (a
# patch someone else wrote keeps its author) and the committer of all;
# the placeholder's Signed-off-by goes and yours comes last.  Reviewed-by,
# Acked-by and Tested-by that "b4 trailers -u" added on b4/<posting> stay
# when the branch is made again from patches/ (matched by subject and
# patch id, so a second posting keeps them for the unchanged patches).  The script refuses to write sendable
# mail when there is no identity or it is a placeholder (the committed
# patches' author, or an address at .invalid/.example/.test/localhost or
# a noreply address).  The committed patches stay as they are.  b4 keeps
# its revision tracking in the work tree's repository, so a second
# posting becomes v2.
#
# --check (what scripts/test.sh runs) prints result lines:
#   mail:refuses-placeholder      --dry-run refuses the placeholder identity
#   mail:sender-identity          the sender is read from git configuration
#                                 and from GIT_AUTHOR_* (a name with ')
#   mail:foreign-author           a patch someone else wrote keeps its
#                                 author; the sender is committer, and
#                                 the sender's Signed-off-by comes last
#   mail:trailers-kept:<posting>  a Reviewed-by added on b4/<posting> (as
#                                 b4 trailers -u does) survives making the
#                                 branch again (the first posting only)
#   mail:b4-send:<posting>        b4 send -o wrote cover letter and patches,
#                                 From: and Signed-off-by: of the sender,
#                                 To: filled
#   mail:git-am:<posting>         git am of the posting's patch mails on a fresh
#                                 base gives the tree of the posting alone
#   mail:b4-am:<posting>          b4 am of the same mbox, then git am, same
#   mail:git-am:series            all postings' patch mails in order give the
#                                 series' tree
. "$(dirname "$0")/lib.sh"

mode=${1:-}
case $mode in
--dry-run | --reflect | --send | --check | --ident) shift ;;
*) die "usage: $0 --dry-run|--reflect|--send|--check [POSTING...]" ;;
esac
mapfile -t all_postings < <(series_postings)
if [ $# -gt 0 ]; then
	postings=("$@")
	for p in "${postings[@]}"; do
		printf '%s\n' "${all_postings[@]}" | grep -qxF -- "$p" ||
			die "no posting \"$p\" in series (postings: ${all_postings[*]})"
	done
else
	postings=("${all_postings[@]}")
fi
command -v b4 >/dev/null || die "b4 is not installed (scripts/deps.sh)"

out=$KSERIES_RUN/outgoing
base=$(ktree_git rev-parse "$KSERIES_BASE_TAG") || die "no $KSERIES_BASE_TAG in $KSERIES_WORKTREE (scripts/apply.sh)"

# The address of IDENT ("Name <email>").
email_of() { sed -n 's/.*<\(.*\)>.*/\1/p' <<<"$1"; }

# The author of the committed patches: the project's identity.
project_ident() {
	printf '%s\n' "$KSERIES_PROJECT_IDENT"
}

# Why IDENT ("Name <email>") cannot send, or nothing.
unsendable() {
	local ident=$1 email
	email=$(email_of "$ident")
	if [ -z "$email" ] || [ -z "${ident%%<*}" ] || [ "${ident%% <*}" = "" ]; then
		echo "no sender identity: set user.name and user.email in your git configuration"
	elif [ "$ident" = "$(project_ident)" ]; then
		echo "$ident is the project's placeholder identity (the committed patches' author), not a person"
	elif grep -qiE '(\.invalid|\.example|\.test|\.localhost|@localhost|@example\.(com|org|net)|\(none\))$|no-?reply' <<<"$email"; then
		echo "$ident is not an address mail can be sent from (placeholder domain or noreply)"
	fi
}

# The sender from the user's own git configuration (the work tree's
# repository config may not say otherwise: it is the workbench's).
sender_ident() {
	local from name email
	# Outside any repository: the user's system and global files, with
	# their includes, and GIT_AUTHOR_* if set, as git itself would.
	from=$(cd / && git config --includes sendemail.from 2>/dev/null)
	if [ -n "$from" ]; then
		printf '%s\n' "$from"
		return
	fi
	name=${GIT_AUTHOR_NAME:-$(cd / && git config --includes user.name 2>/dev/null)}
	email=${GIT_AUTHOR_EMAIL:-$(cd / && git config --includes user.email 2>/dev/null)}
	[ -z "$name$email" ] || printf '%s <%s>\n' "$name" "$email"
}
if [ "$mode" = --ident ]; then
	sender_ident
	exit 0
fi

# git commit-tree in the work tree with AUTHOR ("Name <email>") and DATE
# as author and date, and the sender ($SENDER) as committer.
commit_tree_as() {
	local author=$1 date=$2
	shift 2
	GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 \
		GIT_AUTHOR_NAME=${author% <*} GIT_AUTHOR_EMAIL=$(email_of "$author") \
		GIT_COMMITTER_NAME=${SENDER% <*} GIT_COMMITTER_EMAIL=$(email_of "$SENDER") \
		GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
		git -C "$KSERIES_WORKTREE" commit-tree "$@"
}

# The stable patch id of commit C (what a tag was given for).
patch_id() { ktree_git show "$1" | ktree_git patch-id --stable | cut -d' ' -f1; }

# What reviewers gave on the posting's b4 branch since it was made (b4
# trailers -u): "SUBJECT<TAB>PATCH-ID<TAB>TRAILER" lines of Reviewed-by,
# Acked-by and Tested-by.  They are kept when the branch is made again,
# for the patch of that subject if its change is the same (patch id).
given_trailers() {
	local c subject id t
	ktree_git rev-parse -q --verify "$1" >/dev/null || return 0
	for c in $(ktree_git rev-list --reverse "$base..$1"); do
		subject=$(ktree_git log -1 --format=%s "$c")
		id=
		while read -r t; do
			[ -n "$id" ] || id=$(patch_id "$c")
			printf '%s\t%s\t%s\n' "$subject" "$id" "$t"
		done < <(ktree_git log -1 --format=%B "$c" | ktree_git interpret-trailers --parse |
			grep -E '^(Reviewed-by|Acked-by|Tested-by): ')
	done
}

# Commit C on PARENT as the sender sends it: its author, unless that is
# the project's placeholder, whose place the sender takes; the trailers
# of GIVEN (given_trailers) for its subject and change (a tag given for
# another version of the patch is dropped, saying so); the placeholder's
# Signed-off-by dropped and the sender's last.  Prints the new commit.
sender_commit() {
	local c=$1 parent=$2 given=$3 author subject id gid t args=()
	author=$(ktree_git log -1 --format='%an <%ae>' "$c")
	[ "$author" != "$(project_ident)" ] || author=$SENDER
	subject=$(ktree_git log -1 --format=%s "$c")
	while IFS=$'\t' read -r gid t; do
		[ -n "$t" ] || continue
		[ -n "${id:-}" ] || id=$(patch_id "$c")
		if [ "$gid" = "$id" ]; then
			args+=(--trailer "$t")
		else
			warn "\"$subject\" changed since it got \"$t\": not kept (add it again if it still holds)"
		fi
	done < <(awk -F'\t' -v s="$subject" '$1 == s { print $2 "\t" $3 }' <<<"$given")
	ktree_git log -1 --format=%B "$c" |
		grep -vxF -e "Signed-off-by: $(project_ident)" -e "Signed-off-by: $SENDER" |
		ktree_git interpret-trailers --if-exists addIfDifferent "${args[@]}" \
			--if-exists add --trailer "Signed-off-by: $SENDER" |
		commit_tree_as "$author" "$(ktree_git log -1 --format=%aD "$c")" "$c^{tree}" -p "$parent" -F -
}

# The posting's commits alone on the base, as the sender ($SENDER) sends
# them (sender_commit), with what reviewers gave on b4/<posting> before.
# Prints the new tip.
rewrite_for_sender() {
	local posting=$1 tip parent c log given
	mapfile -t pp < <(posting_patches "$posting")
	log=$(mktemp)
	tip=$(am_on "$base" "$log" "${pp[@]/#/$KSERIES_PATCHES/}") || {
		cat "$log" >&2
		rm -f "$log"
		die "posting $posting does not apply alone on the base"
	}
	rm -f "$log"
	given=$(given_trailers "$B4_PREFIX/$posting")
	parent=$base
	for c in $(ktree_git rev-list --reverse "$base..$tip"); do
		parent=$(sender_commit "$c" "$parent" "$given") || die "commit-tree failed"
	done
	printf '%s\n' "$parent"
}

# b4 prep state of a posting: branch b4/<posting> in the work tree's
# repository, checked out in a sparse worktree that holds what
# get_maintainer.pl reads.  b4's settings are passed in the environment
# (b4 reads git config): the cover letter in a commit before the patches.
B4_MARKER="--- b4-submit-tracking ---"
B4CFG=("b4.prep-cover-strategy=commit"
	"b4.send-auto-to-cmd=perl scripts/get_maintainer.pl --no-tree --nogit --nogit-fallback --nogit-chief-penguins --norolestats --nos --nol"
	"b4.send-auto-cc-cmd=perl scripts/get_maintainer.pl --no-tree --nogit --nogit-fallback --nogit-chief-penguins --norolestats --nos --nom")
# b4's branches: b4/<posting>, or b4-check/<posting> for --check (thrown
# away: it must not touch what a real posting tracks).
B4_PREFIX=b4

b4_in() {
	local wt=$1 kv=("${B4CFG[@]}")
	shift
	# b4 writes From: from user.*: the sender chosen above, whatever else
	# the configuration says.
	kv+=("user.name=${SENDER% <*}" "user.email=$(email_of "$SENDER")")
	# GIT_CONFIG_PARAMETERS holds shell-quoted items: a ' in a value
	# (O'Brien) is written '\''.
	(cd "$wt" && GIT_CONFIG_PARAMETERS="$(printf "'%s' " "${kv[@]//\'/\'\\\'\'}")" b4 "$@")
}

prep_posting() {
	local posting=$1 wt=$2 branch=$B4_PREFIX/$1 tip prefixes desc tracking old cover c
	tip=$(rewrite_for_sender "$posting") || exit 1
	# b4's tracking (revision, change-id, sent history) lives in the cover
	# commit of the branch: keep it across runs, start it once.
	old=$(ktree_git log -1 --format=%B --grep="$B4_MARKER" -F "$branch" 2>/dev/null |
		sed -n "/^$B4_MARKER\$/,\$p" | sed '1,2d')
	if [ -n "$old" ]; then
		tracking=$old
	else
		prefixes=$(posting_prefix "$posting" | sed 's/\bPATCH\b//' | xargs)
		tracking=$(printf '{\n  "series": {\n    "revision": 1,\n    "change-id": "%s-%s-%s",\n    "base-branch": null,\n    "prefixes": [%s]\n  }\n}' \
			"$(date -u +%Y%m%d)" "$posting" "$(printf '%s' "$posting$BASE_COMMIT" | sha1sum | cut -c1-12)" \
			"$(for p in $prefixes; do printf '"%s"' "$p"; done | sed 's/""/", "/g')")
	fi
	desc=$(cover_description "$(cover_letter "$posting")")
	# b4's "commit" cover strategy: an empty commit on the base holds the
	# cover letter, the patches follow.  (b4 0.12's branch-description
	# strategy names the base's parent as base-commit.)
	cover=$(printf '%s\n\n%s\n# This section is used internally by b4 prep for tracking purposes.\n%s\n' \
		"$desc" "$B4_MARKER" "$tracking" | ktree_git commit-tree "$base^{tree}" -p "$base" -F -) ||
		die "cover commit failed"
	c=$cover
	for tip in $(ktree_git rev-list --reverse "$base..$tip"); do
		c=$(commit_tree_as "$(ktree_git log -1 --format='%an <%ae>' "$tip")" "$(ktree_git log -1 --format=%aD "$tip")" \
			"$tip^{tree}" -p "$c" -F <(ktree_git log -1 --format=%B "$tip")) || die "commit-tree failed"
	done
	if [ ! -e "$wt/.git" ]; then
		remove_owned_dir "$wt"
		ktree_git worktree prune
		printf '/MAINTAINERS\n/.get_maintainer.ignore\n/.mailmap\n/scripts/get_maintainer.pl\n' |
			sparse_worktree "$wt" "$c" >&2 || die "worktree for $branch failed"
		touch "$wt/$KSERIES_MARKER"
	fi
	# The branch is checked out there: move it there (git branch -f would
	# refuse, and b4 would send what the branch held before).
	xgit -C "$wt" checkout -q -f -B "$branch" "$c" || die "checkout of $branch failed"
	[ "$(xgit -C "$wt" rev-parse HEAD)" = "$c" ] || die "$branch is not at the new commits"
	b4_in "$wt" prep --auto-to-cc >&2 || die "b4 prep --auto-to-cc of $posting failed"
}

# The messages b4 send -o wrote (one file each, in order) as an mboxrd.
to_mbox() {
	python3 - "$@" <<'PY'
import mailbox, sys
out = mailbox.mbox(sys.argv[1], create=True)
for path in sys.argv[2:]:
    with open(path, 'rb') as f:
        out.add(mailbox.mboxMessage(f.read()))
out.flush()
PY
}

# An mbox with every header on one line.
unfold_headers() {
	awk '/^From / { if (h != "") print h; h = ""; print; hdr = 1; next }
		!hdr { print; next }
		/^$/ { if (h != "") print h; h = ""; print; hdr = 0; next }
		/^[ \t]/ { sub(/^[ \t]+/, " "); h = h $0; next }
		{ if (h != "") print h; h = $0 }'
}

# b4 send of a posting in MODE (-o DIR, --reflect, or nothing).
send_posting() {
	local wt=$1
	shift
	b4_in "$wt" send --no-sign "$@"
}

if [ "$mode" != --check ]; then
	sender=$(sender_ident)
	why=$(unsendable "$sender")
	[ -z "$why" ] || die "refusing to write mail: $why"
	SENDER=$sender
	mkdir -p "$out"
	for posting in "${postings[@]}"; do
		wt=$KSERIES_CACHE/send/$posting
		make_owned_dir "$KSERIES_CACHE/send"
		prep_posting "$posting" "$wt"
		case $mode in
		--dry-run)
			rm -rf "${out:?}/$posting"
			send_posting "$wt" -o "$out/$posting" || die "b4 send -o failed"
			rm -f "$out/$posting.mbox"
			to_mbox "$out/$posting.mbox" "$out/$posting"/*
			info "$posting: $(ls "$out/$posting" | wc -l) mails in $out/$posting.mbox, from $sender"
			;;
		--reflect) send_posting "$wt" --reflect || die "b4 send --reflect failed" ;;
		--send) send_posting "$wt" || die "b4 send failed" ;;
		esac
	done
	exit 0
fi

# --check: everything above with a test identity, in a throwaway
# repository configuration, then the round trips.
tmp=$(scratch_dir send) || exit 1
trap 'for w in "$tmp"/wt-*; do remove_worktree "$w"; done; [ -n "${KSERIES_KEEP:-}" ] || rm -rf "$tmp"' EXIT
export GIT_CONFIG_NOSYSTEM=1

# The placeholder identity must be refused.
printf '[user]\n\tname = %s\n\temail = %s\n' "$(project_ident | sed 's/ <.*//')" \
	"$(project_ident | sed 's/.*<\(.*\)>/\1/')" >"$tmp/placeholder.gitconfig"
if refusal=$(env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL GIT_CONFIG_GLOBAL="$tmp/placeholder.gitconfig" bash "$0" --dry-run 2>&1); then
	result FAIL mail:refuses-placeholder "--dry-run wrote mail as $(project_ident)"
elif grep -q 'refusing to write mail.*placeholder identity' <<<"$refusal"; then
	result PASS mail:refuses-placeholder "$(grep -m1 'refusing' <<<"$refusal")"
else
	result FAIL mail:refuses-placeholder "--dry-run failed otherwise: $(tail -n 1 <<<"$refusal")"
fi

# The test sender, read the way a real one is (sender_ident), from a git
# configuration and from GIT_AUTHOR_*; the ' in its name must survive.
want_sender="Round-trip O'Check <round-trip-check@kseries.invalid>"
printf '[user]\n\tname = %s\n\temail = %s\n' "${want_sender% <*}" round-trip-check@kseries.invalid >"$tmp/check.gitconfig"
sender=$(env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL GIT_CONFIG_GLOBAL="$tmp/check.gitconfig" bash "$KSERIES_REPO/scripts/send.sh" --ident)
from_env=$(GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_NAME="${want_sender% <*}" GIT_AUTHOR_EMAIL=round-trip-check@kseries.invalid \
	bash "$KSERIES_REPO/scripts/send.sh" --ident)
if [ "$sender" = "$want_sender" ] && [ "$from_env" = "$want_sender" ]; then
	result PASS mail:sender-identity "read from git configuration and from GIT_AUTHOR_*: $sender"
else
	result FAIL mail:sender-identity "want '$want_sender', from the configuration: '$sender', from GIT_AUTHOR_*: '$from_env'"
	sender=$want_sender
fi
SENDER=$sender
export GIT_CONFIG_GLOBAL=$tmp/check.gitconfig
# No ~/.get_maintainer.conf of whoever runs the check.
export HOME=$tmp
B4_PREFIX=b4-check

other="Other Author <other-author@kseries.invalid>"
c=$(printf 'test: a patch someone else wrote\n\nBody.\n\nSigned-off-by: %s\nSigned-off-by: %s\n' "$other" "$(project_ident)" |
	commit_tree_as "$other" "$(ktree_git log -1 --format=%aD "$base")" "$base^{tree}" -p "$base" -F -)
got=$(sender_commit "$c" "$base" "")
who=$(ktree_git log -1 --format='%an <%ae>|%cn <%ce>' "$got")
trailers=$(ktree_git log -1 --format=%B "$got" | ktree_git interpret-trailers --parse)
if [ "$who" = "$other|$sender" ] && [ "$trailers" = "$(printf 'Signed-off-by: %s\nSigned-off-by: %s' "$other" "$sender")" ]; then
	result PASS mail:foreign-author "author $other kept, committer the sender, Signed-off-by: the author's, then the sender's"
else
	result FAIL mail:foreign-author "author|committer: $who; trailers: $(tr '\n' ';' <<<"$trailers")"
fi

for posting in "${postings[@]}"; do
	ktree_git branch -D "$B4_PREFIX/$posting" >/dev/null 2>&1
done
series_mboxes=()
for posting in "${postings[@]}"; do
	wt=$tmp/wt-$posting
	if ! (prep_posting "$posting" "$wt") 2>"$tmp/$posting.prep.log" ||
		! send_posting "$wt" -o "$tmp/out-$posting" >"$tmp/$posting.send.log" 2>&1; then
		result FAIL "mail:b4-send:$posting" "b4 prep/send failed: $(tail -n 2 "$tmp/$posting".*.log | tr '\n' ' ')"
		continue
	fi
	mbox=$tmp/$posting.mbox
	to_mbox "$mbox" "$tmp/out-$posting"/*
	# git am gets the patches (a cover letter is no patch to git am).
	mails=("$tmp/out-$posting"/*.eml)
	to_mbox "$tmp/$posting.patches.mbox" "${mails[@]:1}"
	series_mboxes+=("$tmp/$posting.patches.mbox")
	n=$(posting_patches "$posting" | wc -l)
	nmails=${#mails[@]}
	froms=$(grep -c "^From: $sender\$" "$mbox")
	sobs=$(grep -c "^Signed-off-by: $sender\$" "$mbox")
	placeholder=$(grep -c -F "$(project_ident)" "$mbox")
	to=$(grep -m1 '^To: ' "$mbox")
	basec=$(grep -c "^base-commit: $base\$" "$mbox")
	if [ "$nmails" -eq $((n + 1)) ] && [ "$froms" -eq $((n + 1)) ] && [ "$sobs" -ge "$n" ] &&
		[ "$placeholder" -eq 0 ] && [ -n "$to" ] && [ "$basec" -eq 1 ]; then
		result PASS "mail:b4-send:$posting" "$nmails mails from the sender with their Signed-off-by, base-commit $base; ${to:0:100}"
	else
		result FAIL "mail:b4-send:$posting" "$nmails mails for $n patches + cover, $froms From: and $sobs Signed-off-by: of the sender, $placeholder mentions of the placeholder, $basec base-commit: $base lines, To: '${to:0:60}'"
	fi

	# The tree of the posting alone, as the sender's commits have it.
	want=$(ktree_git rev-parse -q --verify "$B4_PREFIX/$posting^{tree}")
	if got=$(AM_OPTS=--no-3way am_on "$base" "$tmp/$posting.am.log" "$tmp/$posting.patches.mbox") &&
		[ "$(ktree_git rev-parse "$got^{tree}")" = "$want" ]; then
		# Whose patches git am made them: the sender for the
		# placeholder's patches, the others' own.
		authors=$(ktree_git log --format='%an <%ae>' "$base..$got" | sort | uniq -c | sed 's/^ *//' | paste -sd, -)
		want_authors=$(posting_patches "$posting" | while read -r f; do
			a=$(patch_author "$KSERIES_PATCHES/$f")
			if [ "$a" = "$(project_ident)" ]; then printf '%s\n' "$sender"; else printf '%s\n' "$a"; fi
		done | sort | uniq -c | sed 's/^ *//' | paste -sd, -)
		if [ "$authors" = "$want_authors" ]; then
			result PASS "mail:git-am:$posting" "the mbox applies alone on a fresh base: the posting's tree, authors $authors"
		else
			result FAIL "mail:git-am:$posting" "the mbox gives the posting's tree but its authors are: $authors (want $want_authors)"
		fi
	else
		result FAIL "mail:git-am:$posting" "git am of $posting.mbox on the base: $(grep -m2 -E 'error|fail|conflict' "$tmp/$posting.am.log" | tr '\n' ' ')"
	fi
	first=("$tmp/out-$posting"/*.eml)
	cover_id=$(sed -n '1,/^$/{s/^Message-Id: <\(.*\)>$/\1/Ip}' "${first[0]}" | head -n 1)
	mkdir -p "$tmp/b4am-$posting"
	# b4 0.12 under Python 3.11 cannot read a folded Subject: (its own
	# b4 send folds long ones): b4 am gets the mails with headers unfolded.
	unfold_headers <"$mbox" >"$tmp/$posting.unfolded.mbox"
	if (cd "$tmp" && b4 -q am --no-cache -m "$tmp/$posting.unfolded.mbox" -o "$tmp/b4am-$posting" "$cover_id") >"$tmp/$posting.b4am.log" 2>&1 &&
		mbx=$(ls "$tmp/b4am-$posting"/*.mbx 2>/dev/null | head -n 1) && [ -n "$mbx" ] &&
		got=$(am_on "$base" "$tmp/$posting.b4am.log" "$mbx") &&
		[ "$(ktree_git rev-parse "$got^{tree}")" = "$want" ]; then
		result PASS "mail:b4-am:$posting" "b4 am of the mbox, then git am on a fresh base: the posting's tree"
	else
		result FAIL "mail:b4-am:$posting" "b4 am: $(grep -v '^$' "$tmp/$posting.b4am.log" | tail -n 2 | tr '\n' ' ')"
	fi

	# A reviewer's tag on the branch, as b4 trailers -u adds it (to the
	# last patch here), then the branch made again from patches/.
	[ "$posting" = "${postings[0]}" ] || continue
	rb="Reviewed-by: A Reviewer <reviewer@kseries.invalid>"
	old_tip=$(ktree_git rev-parse "$B4_PREFIX/$posting")
	c=$(ktree_git log -1 --format=%B "$old_tip" | ktree_git interpret-trailers --trailer "$rb" |
		commit_tree_as "$sender" "$(ktree_git log -1 --format=%aD "$old_tip")" "$old_tip^{tree}" -p "$old_tip^" -F -)
	xgit -C "$wt" checkout -q -f -B "$B4_PREFIX/$posting" "$c"
	if (prep_posting "$posting" "$wt") 2>>"$tmp/$posting.prep.log"; then
		trailers=$(ktree_git log -1 --format=%B "$B4_PREFIX/$posting" | ktree_git interpret-trailers --parse)
		if grep -qxF "$rb" <<<"$trailers" && [ "$(tail -n 1 <<<"$trailers")" = "Signed-off-by: $sender" ] &&
			[ "$(ktree_git rev-parse "$B4_PREFIX/$posting^{tree}")" = "$want" ]; then
			result PASS "mail:trailers-kept:$posting" "the Reviewed-by given on $B4_PREFIX/$posting is there after prep again, before the sender's Signed-off-by"
		else
			result FAIL "mail:trailers-kept:$posting" "after prep again, the last patch's trailers: $(tr '\n' ';' <<<"$trailers")"
		fi
	else
		result FAIL "mail:trailers-kept:$posting" "prep again failed: $(tail -n 2 "$tmp/$posting.prep.log" | tr '\n' ' ')"
	fi
done

# All postings' mails in order: the series.
[ ${#postings[@]} -eq ${#all_postings[@]} ] || exit 0
if [ ${#series_mboxes[@]} -eq ${#postings[@]} ] &&
	got=$(AM_OPTS=--no-3way am_on "$base" "$tmp/series.am.log" "${series_mboxes[@]}") &&
	[ "$(ktree_git rev-parse "$got^{tree}")" = "$(ktree_git rev-parse "$KSERIES_BRANCH^{tree}")" ]; then
	result PASS mail:git-am:series "all postings' mboxes in order on a fresh base: the series' tree"
else
	result FAIL mail:git-am:series "the postings' mboxes in order do not give the series' tree: $(grep -m2 -E 'error|fail' "$tmp/series.am.log" 2>/dev/null | tr '\n' ' ')"
fi
