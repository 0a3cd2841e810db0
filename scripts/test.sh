#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run every test of the series: the stages in scripts/stages/, in order.
# Each stage is a script that prints result lines
#   STATUS<TAB>NAME<TAB>DETAIL     (STATUS: PASS, FAIL or SKIP)
# on stdout and its log on stderr ($KSERIES_RUN/logs/STAGE.log).  The run
# ends with
#   N passed, N failed, N skipped
# and fails if any case failed.  A stage fails as a whole, naming itself,
# when it reports nothing, prints a line that is not a result, exits with
# an error without reporting a failure, or skips without a reason.  When
# one of the stages the others build on (setup, apply, build) fails, the
# rest are not run and fail as "not run".
#
#   test.sh                    every stage
#   test.sh STAGE...           only these (e.g. "lint vm"): for iterating;
#                              CI runs them all
#
# The run tests patches/ and scripts/ as they are in this checkout, never
# the developer's kernel work tree: it applies the series in a disposable
# tree of its own, $KSERIES_CACHE/ci/{linux,build,run,review}, replaced
# when the base moves, and ignores the variables that would change what
# it tests (KSERIES_IMPORT_FROM, KSERIES_FORCE, KSERIES_EXTRA_CONFIG,
# KSERIES_VM_CMDLINE, KSERIES_VM_TIMEOUT, KSERIES_VM_BOOT_TIMEOUT,
# KSERIES_VM_CPUS, KSERIES_VM_MEM, KSERIES_UPSTREAM_TARBALL,
# KSERIES_GIT_NAME, KSERIES_GIT_EMAIL).
# ccache (and the apply step, which touches only files that change) make
# a second run incremental.
ci_root=${KSERIES_CACHE:-$HOME/.cache/kseries}/ci
export KSERIES_WORKTREE=$ci_root/linux
export KSERIES_BUILD=$ci_root/build
export KSERIES_RUN=$ci_root/run
export KSERIES_REVIEW=$ci_root/review
export KSERIES_DISPOSABLE=1
# What the stages run with bounded (QEMU, lava-run) stops when this script
# is gone, even by SIGKILL (scripts/lib/build.sh: bounded).
export KSERIES_TOP_PID=$$
# What would make this run test something else than the checkout's patches/.
unset KSERIES_IMPORT_FROM KSERIES_FORCE KSERIES_EXTRA_CONFIG KSERIES_VM_CMDLINE KSERIES_VM_TIMEOUT KSERIES_VM_INITRAMFS_FROM \
	KSERIES_VM_BOOT_TIMEOUT KSERIES_VM_CPUS KSERIES_VM_MEM KSERIES_UPSTREAM_TARBALL \
	KSERIES_GIT_NAME KSERIES_GIT_EMAIL
. "$(dirname "$0")/lib.sh"

# The machine's one build slot, for the whole run (scripts/lib/build.sh:
# hold_build_lock); a build started meanwhile waits for it.
hold_build_lock
check_free_space

STAGES=$KSERIES_REPO/scripts/stages
REQUIRED="setup apply build"
mkdir -p "$KSERIES_RUN/logs"
RESULTS=$KSERIES_RUN/results.tsv
export KSERIES_TIMES=$KSERIES_RUN/times
: >"$RESULTS"
: >"$KSERIES_TIMES"
rm -f "$KSERIES_RUN"/logs/*.log "$KSERIES_RUN"/logs/*.results
T0=$(date +%s)

# Stage names: the file names without the NN- order prefix.
stage_name() { basename "$1" .sh | sed 's/^[0-9]*-//'; }

want=("$@")
selected() {
	[ ${#want[@]} -eq 0 ] && return 0
	local w
	for w in "${want[@]}"; do [ "$w" != "$1" ] || return 0; done
	return 1
}

# Decided once for the run: whether the lava stage boots the local LAVA
# job (lib: lava_runs).  The vm stage then leaves that job's step to it,
# and the lava stage fails if it cannot run it after all.
KSERIES_LAVA_RUNS=0
! selected lava || ! lava_runs || KSERIES_LAVA_RUNS=1
export KSERIES_LAVA_RUNS

summary() {
	local pass fail skip
	pass=$(grep -c '^PASS' "$RESULTS")
	fail=$(grep -c '^FAIL' "$RESULTS")
	skip=$(grep -c '^SKIP' "$RESULTS")
	echo
	echo "== stage times"
	cat "$KSERIES_TIMES"
	printf '%-28s %8ss\n' total "$(($(date +%s) - T0))"
	echo
	echo "== test cases ($RESULTS, logs in $KSERIES_RUN/logs)"
	awk -F'\t' '$1 == "FAIL" { printf "FAIL %s%s\n", $2, ($3 != "" ? "  (" $3 ")" : "") }
		$1 == "SKIP" { n[$3]++ }
		END { for (r in n) printf "SKIP %d case(s): %s\n", n[r], r }' "$RESULTS" | sort
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
}

# Each stage's time limit in seconds, well above a cold run's on two
# cores: a stage that hangs is killed (scripts/lib/build.sh: bounded), named,
# and the run goes on.
stage_limit() {
	case $1 in
	workbench) echo 300 ;;
	apply | lint | docs | mail) echo 900 ;;
	build | vm) echo 3600 ;;
	*) echo 2700 ;;
	esac
}

# Run one stage and check what it reported.  Returns 1 if it failed.
run_stage() {
	local script=$1 name out log rc bad n
	name=$(stage_name "$script")
	out=$KSERIES_RUN/logs/$name.results
	log=$KSERIES_RUN/logs/$name.log
	stage_begin "$name"
	# The stage keeps the slot's fd (what it leaves behind when this
	# script is SIGKILLed keeps the slot) and gets 30 s to stop what it
	# runs itself (its own bounded gives its programs 10).
	BOUNDED_KEEP_LOCK=1 BOUNDED_GRACE=30 bounded "$(stage_limit "$name")" bash "$script" >"$out" 2>"$log"
	rc=$?
	stage_end
	if [ $rc = 124 ]; then
		result FAIL "$name:stage" "killed: $BOUNDED_WHY (its time limit, scripts/test.sh)" >>"$RESULTS"
	fi
	# Lines that are not results, skips without a reason.
	bad=$(grep -v -E $'^(PASS|FAIL|SKIP)\t[^\t]+\t' "$out" | head -n 3 | tr '\n' ' ')
	awk -F'\t' '$1 == "SKIP" && $3 == "" { $1 = "FAIL"; $3 = "skipped without a reason"; print; next }
		/^(PASS|FAIL|SKIP)\t[^\t]+\t/ { print }' OFS='\t' "$out" >>"$RESULTS"
	n=$(grep -c -E $'^(PASS|FAIL|SKIP)\t' "$out")
	[ -z "$bad" ] || result FAIL "$name:stage" "printed lines that are not results: $bad" >>"$RESULTS"
	[ "$n" -gt 0 ] || result FAIL "$name:stage" "reported no result (status $rc), see $log" >>"$RESULTS"
	# Status 1: the stage reported its failures and stopped.  Any other
	# (scripts/lib.sh: die exits 2): it stopped on an error, and cases it
	# did not reach have no result.
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && { [ $rc -ne 1 ] || ! grep -q '^FAIL' "$out"; }; then
		result FAIL "$name:stage" "stopped with status $rc ($(grep -m1 '^error: ' "$log" | cut -c1-160)), its results may be incomplete, see $log" >>"$RESULTS"
	fi
	if [ $rc -ne 0 ] || grep -q '^FAIL' "$out" || [ -n "$bad" ] || [ "$n" -eq 0 ]; then
		printf -- '--- %s failed; the end of %s:\n' "$name" "$log" >&2
		tail -n 25 "$log" >&2
		return 1
	fi
	return 0
}

stopped= failed=
for script in "$STAGES"/[0-9]*.sh; do
	name=$(stage_name "$script")
	selected "$name" || continue
	if [ -n "$stopped" ]; then
		result FAIL "$name:stage" "not run: stage $stopped failed" >>"$RESULTS"
		continue
	fi
	if ! run_stage "$script"; then
		failed=1
		grep -qw "$name" <<<"$REQUIRED" && stopped=$name
	fi
	# A disk that filled up may have lost result lines (FAILs too): the
	# run fails whatever the counts say.
	if [ "$(free_mb)" -lt 200 ]; then
		printf 'error: the disk of %s is full after stage %s: results may be lost\n' "$KSERIES_CACHE" "$name" >&2
		failed=1
	fi
done

# The status is also this shell's own record, not only the results file.
summary && [ -z "$failed" ]
