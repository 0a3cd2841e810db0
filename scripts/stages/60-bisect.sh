#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage bisect: every patch builds, applied on the ones before it.
#   bisect:<posting>/<patch>   at that commit:
#                              - each .c file the patch touches is compiled
#                                with the command kbuild used for it in the
#                                test build (the tip's flags);
#                              - when the patch changes a Makefile, Kbuild
#                                or Kconfig, kbuild itself (config refreshed
#                                at that commit) builds those files and the
#                                series' files whose objects the changed
#                                lines name (for a Kconfig-only change, the
#                                series' files of that directory), so the
#                                change is exercised;
#                              - each other .c file of the series that
#                                includes a header the patch changes (the
#                                test build's dependency lists say which) is
#                                checked with its command and -fsyntax-only:
#                                declarations, types and prototypes, in half
#                                the time of a compile.  Files outside the
#                                series that include such a header are
#                                compiled at the tip only (build stage).
#                              - each kselftest program of the VM plan
#                                whose .c file the patch changes is built
#                                with its directory's Makefile;
#                              - every CONFIG_ symbol its added lines name
#                                is defined by a Kconfig at that commit
#                                (the compiles use the tip's config);
#                              a patch with nothing of that kind to compile
#                              (documentation, scripts) is a SKIP saying so
#   bisect:alone:<posting>     the .c files of a posting applied alone on
#                              the base (refs/kseries/alone/*) compile
# The full kernel, vmlinux and modules, is built at the tip by the build
# stage.  W=1, sparse, clang and kernel-doc are compared at the tip by the
# static stage, and patch by patch by scripts/review.sh (before posting).
#
# Only .c files the test kernel builds can be compiled with its config;
# others are reported as a SKIP.  Verdicts are cached by the commit's tree
# id, the config, the compiler, the compile commands and the workbench, so
# a second run compiles only from the first changed patch on.  Runs in the
# review checkout ($KSERIES_REVIEW); logs in $KSERIES_RUN/bisect/.
. "$(dirname "$0")/../lib.sh"
hold_build_lock

B=$KSERIES_REVIEW/build
L=$KSERIES_RUN/bisect
cache=$KSERIES_CACHE/results/bisect
mkdir -p "$L" "$cache"
rm -f "$L"/*.log

base=$(ktree_git rev-parse "$KSERIES_BASE_TAG") || die "no $KSERIES_BASE_TAG"
tip=$(ktree_git rev-parse "$KSERIES_BRANCH") || die "no branch $KSERIES_BRANCH"
mapfile -t commits < <(ktree_git rev-list --reverse "$base..$tip")
mapfile -t names < <(series_patches)
[ ${#commits[@]} -eq ${#names[@]} ] ||
	die "branch $KSERIES_BRANCH has ${#commits[@]} commits, series lists ${#names[@]} patches"

all_c=$(series_files "$base" "$tip" | kernel_c)
built=$(built_c <<<"$all_c")
unbuilt=$(comm -23 <(sort <<<"$all_c") <(sort <<<"$built") | tr '\n' ' ')

# The test build's compile command and dependency list of each built .c
# file, pointed at the review checkout: cmd/<file>, deps/<file> (the
# tree's own files it includes, relative paths).
meta=$L/meta
rm -rf "$meta"
for f in $built; do
	o=$(obj_of "$f")
	cmdfile=$KSERIES_BUILD/$(dirname "$o")/.$(basename "$o").cmd
	mkdir -p "$meta/cmd/$(dirname "$f")" "$meta/deps/$(dirname "$f")"
	# The compile alone (kbuild appends objtool and more after ";"), the
	# dependency file and the object into the log directory.
	sed -n "s|^savedcmd_[^ ]* := ||p" "$cmdfile" | sed -e 's/ ; .*//' -e 's/;.*//' \
		-e "s|$KSERIES_WORKTREE/|$REVIEW_TREE/|g" \
		-e "s|-Wp,-MMD,[^ ]*|-Wp,-MMD,$L/dep.d|" >"$meta/cmd/$f"
	# Paths are absolute, or relative to the build directory (ccache's
	# base_dir rewrites them so): the tree's own files, relative to it.
	awk '/^deps_/ { on = 1; next } on && /^$/ { exit } on && $1 !~ /^\$\(wildcard/ { print $1 }' "$cmdfile" |
		(cd "$KSERIES_BUILD" && xargs -r realpath -m) | sed -n "s|^$KSERIES_WORKTREE/||p" >"$meta/deps/$f"
	# A command that does not compile this file in the review checkout
	# (paths not rewritten, no -c -o) would check nothing, or the tip.
	src=$(awk '{ print $NF }' "$meta/cmd/$f")
	[ "$(realpath -m "$src")" = "$REVIEW_TREE/$f" ] && grep -q ' -c -o ' "$meta/cmd/$f" &&
		! grep -qF "$KSERIES_WORKTREE/" "$meta/cmd/$f" ||
		die "the test build's command for $f ($cmdfile) cannot be pointed at the review checkout"
	[ -s "$meta/deps/$f" ] || die "the test build lists no dependencies for $f ($cmdfile)"
done
# Verdicts depend on: the config, the compiler, the workbench, the
# compile commands (the tip's flags) and which files are checked.
key_env=$( {
	cat "$KSERIES_BUILD/.config"
	gcc --version | head -n 1
	workbench_hash
	cat "$meta"/cmd/* 2>/dev/null | sed "s|$REVIEW_TREE|TREE|g; s|$L|LOG|g"
	printf '%s\n' "$built"
} | sha256sum | cut -c1-16)

# compile FILE MODE: the test build's command for FILE in the review
# checkout; MODE "object" (a real compile) or "syntax" (-fsyntax-only).
compile() {
	local f=$1 mode=$2 cmd
	cmd=$(sed "s|-Wp,-MMD,$L/dep.d|-Wp,-MMD,$L/dep.$$.$BASHPID.d|" "$meta/cmd/$f")
	if [ "$mode" = syntax ]; then
		cmd=$(sed 's/ -c -o [^ ]* / -fsyntax-only /' <<<"$cmd")
	else
		cmd=$(sed "s| -c -o [^ ]* | -c -o $L/obj.$$.$BASHPID.o |" <<<"$cmd")
	fi
	(cd "$KSERIES_BUILD" && eval "$cmd") 2>&1
}

prepared=
kbuild_prepare() {
	[ -z "$prepared" ] || return 0
	review_configure "$B"
	kmake "$REVIEW_TREE" "$B" -s prepare >"$L/prepare.log" 2>&1 || {
		tail -n 20 "$L/prepare.log" >&2
		die "make prepare in the review checkout failed"
	}
	prepared=1
}

# check_at NAME COMMIT: the checks of one commit; a result line; cached
# when it passes.
check_at() {
	local name=$1 c=$2 key verdict undef files touched headers kdirs kobjs=() f h log n_obj=0 n_syn=0 n_kst rc=0 how= miss d t
	key=$cache/$(ktree_git rev-parse "$c^{tree}")-$key_env
	if verdict=$(cache_get "$key"); then
		result PASS "$name" "$verdict (cached: same tree, config, compiler and workbench)"
		return
	fi
	review_checkout "$c"
	files=$(commit_files "$c")
	touched=$(kernel_c <<<"$files" | built_c)
	headers=$(grep -E '\.h$' <<<"$files" || true)
	log=$L/${name//\//_}.log
	: >"$log"
	: >"$L/jobs"
	# A changed Makefile, Kbuild or Kconfig: kbuild builds the touched
	# files and the series' files whose objects the changed lines name.
	kdirs=$(grep -E '(^|/)(Makefile|Kbuild|Kconfig[^/]*)$' <<<"$files" | grep -vE '^(tools|Documentation)/' |
		xargs -r -n 1 dirname | sort -u)
	if [ -n "$kdirs" ]; then
		named=$(ktree_git diff-tree -p --no-commit-id "$c^" "$c" -- $(sed 's|$|/Makefile|' <<<"$kdirs") \
			$(sed 's|$|/Kbuild|' <<<"$kdirs") | grep '^[-+][^-+]' | grep -oE '[A-Za-z0-9_-]+\.o\b' | sort -u)
		for f in $built; do
			[ -f "$REVIEW_TREE/$f" ] || continue
			if grep -qxF "$f" <<<"$touched" || grep -qxF "$(basename "${f%.c}").o" <<<"$named"; then
				kobjs+=("$(obj_of "$f")")
			fi
		done
		[ ${#kobjs[@]} -gt 0 ] || for f in $built; do
			# A Kconfig-only change: the series' files of those directories.
			[ -f "$REVIEW_TREE/$f" ] && grep -qxF "$(dirname "$f")" <<<"$kdirs" && kobjs+=("$(obj_of "$f")")
		done
		kbuild_prepare
		review_configure "$B"
		if [ ${#kobjs[@]} -gt 0 ]; then
			kmake "$REVIEW_TREE" "$B" -k "${kobjs[@]}" >>"$log" 2>&1 || rc=1
			miss=$(missing_objs "$B" "${kobjs[@]}")
			[ -z "$miss" ] || { rc=1; printf 'kbuild did not produce: %s failed\n' "$miss" >>"$log"; }
		fi
		n_obj=${#kobjs[@]}
		how=" by kbuild (a Makefile/Kbuild/Kconfig changed: $(tr '\n' ' ' <<<"$kdirs" | xargs))"
	else
		for f in $touched; do
			[ -f "$REVIEW_TREE/$f" ] || continue
			printf '%s object\n' "$f"
			n_obj=$((n_obj + 1))
		done >"$L/jobs"
	fi
	# Dependents of the changed headers: syntax.
	if [ -n "$headers" ]; then
		for f in $built; do
			grep -qxF "$f" <<<"$touched" && continue
			[ -f "$REVIEW_TREE/$f" ] || continue
			if grep -qxF -f <(printf '%s\n' $headers) "$meta/deps/$f"; then
				printf '%s syntax\n' "$f" >>"$L/jobs"
				n_syn=$((n_syn + 1))
			fi
		done
	fi
	# Kselftest programs of the VM plan whose source the patch changes:
	# built at this commit by their directory's Makefile.
	n_kst=0
	while read -r f; do
		[ -n "$f" ] && [ -f "$REVIEW_TREE/$f" ] || continue
		d=${f#tools/testing/selftests/}
		d=${d%/*}
		t=$(basename "${f%.c}")
		vm_plan | awk -v d="$d" -v t="$t" '$1 == "files" && $2 == d { for (i = 3; i <= NF; i++) if ($i == t) f = 1 } END { exit !f }' ||
			continue
		rm -rf "$L/kst"
		mkdir -p "$L/kst"
		kselftest_make "$REVIEW_TREE" "$d" "$L/kst" "$t" >>"$log" 2>&1 || {
			rc=1
			printf 'kselftest %s/%s: build failed\n' "$d" "$t" >>"$log"
		}
		n_kst=$((n_kst + 1))
	done < <(grep -E '^tools/testing/selftests/.*\.c$' <<<"$files")
	# Two at a time (two cores); each job's output, with its file named.
	export -f compile
	export L KSERIES_BUILD meta
	xargs -r -P "$KSERIES_JOBS" -L 1 bash -c 'out=$(compile "$0" "$1") || { printf "%s (%s): failed\n%s\n" "$0" "$1" "$out"; exit 1; }; [ -z "$out" ] || printf "%s (%s):\n%s\n" "$0" "$1" "$out"' \
		<"$L/jobs" >>"$log" 2>&1 || rc=1
	undef=$(undefined_configs "$KSERIES_WORKTREE" "$c" | tr '\n' ' ')
	if [ -n "$undef" ]; then
		result FAIL "$name" "names ${undef}which no Kconfig defines at this commit (compiled with the tip's config, it would build)"
	elif [ $rc = 0 ] && [ $((n_obj + n_syn + n_kst)) -eq 0 ]; then
		# Nothing here compiles: say what the patch is, never a PASS.
		result SKIP "$name" "nothing to compile: the patch changes no C source the test kernel or the VM's kselftests build ($(grep -oE '[^/]+$' <<<"$files" | head -n 4 | tr '\n' ' ' | xargs))"
	elif [ $rc = 0 ]; then
		verdict=$(printf '%d .c files compiled%s, %d files including a changed header syntax-checked, %d kselftest programs built' \
			"$n_obj" "$how" "$n_syn" "$n_kst")
		result PASS "$name" "$verdict"
		cache_put "$key" <<<"$verdict"
	else
		result FAIL "$name" "does not build: $(grep -m3 -hE 'error:|Error [0-9]|failed$' "$log" | tr '\n' ' ')(log: $log)"
	fi
}

for i in "${!commits[@]}"; do
	check_at "bisect:${names[$i]}" "${commits[$i]}"
done

# Each posting alone on the base (but the first: that is the series so
# far): every .c file of the posting compiles there.
first=$(series_postings | head -n 1)
while read -r posting; do
	[ "$posting" != "$first" ] || continue
	alone=$(ktree_git rev-parse -q --verify "refs/kseries/alone/$posting") || {
		result FAIL "bisect:alone:$posting" "no refs/kseries/alone/$posting (the apply stage makes it)"
		continue
	}
	key=$cache/alone-$(ktree_git rev-parse "$alone^{tree}")-$key_env
	if verdict=$(cache_get "$key"); then
		result PASS "bisect:alone:$posting" "$verdict (cached: same tree, config, compiler and workbench)"
		continue
	fi
	review_checkout "$alone"
	series_files "$base" "$alone" | kernel_c | built_c | sed 's/$/ object/' >"$L/jobs"
	log=$L/alone-$posting.log
	undef=$(undefined_configs "$KSERIES_WORKTREE" "$alone" "$base" | tr '\n' ' ')
	if [ -n "$undef" ]; then
		result FAIL "bisect:alone:$posting" "names ${undef}which no Kconfig defines on the base with this posting alone"
	elif [ -s "$L/jobs" ] && xargs -r -P "$KSERIES_JOBS" -L 1 bash -c 'out=$(compile "$0" "$1") || { printf "%s: failed\n%s\n" "$0" "$out"; exit 1; }' \
		<"$L/jobs" >"$log" 2>&1; then
		verdict="$(wc -l <"$L/jobs") .c files of the posting compiled on the base without the other postings"
		result PASS "bisect:alone:$posting" "$verdict"
		cache_put "$key" <<<"$verdict"
	else
		result FAIL "bisect:alone:$posting" "does not build alone: $(grep -m3 -hE 'error:|failed$' "$log" | tr '\n' ' ')(log: $log)"
	fi
done < <(series_postings)
rm -f "$L"/obj.*.o "$L"/dep.*.d

[ -z "$unbuilt" ] || result SKIP bisect:unbuilt "not built by the test kernel's config, so not compiled: $unbuilt"
