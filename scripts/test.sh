#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run every test of the series: lint, apply, build, then one boot of the
# test VM that runs the KUnit suites and kselftests of the plan.  Every
# test case is a line in $KSERIES_RUN/results.tsv; the run ends with
#   N passed, N failed, N skipped
# and fails if any case failed.
#
# Environment: KERNEL_TREE=/path (see fetch-base.sh), KSERIES_CACHE,
# KSERIES_VM_TIMEOUT (seconds, default 2400).
#
# The run tests patches/ as committed, never the developer's work tree: it
# applies the series in a tree of its own, $KSERIES_CACHE/ci/{linux,build,run}
# (set KSERIES_TREE, KSERIES_BUILD, KSERIES_RUN to override), rebuilt from
# patches/ on every run.  ccache makes the build incremental anyway.
ci_root=${KSERIES_CACHE:-$HOME/.cache/kseries}/ci
export KSERIES_TREE=${KSERIES_TREE:-$ci_root/linux}
export KSERIES_BUILD=${KSERIES_BUILD:-$ci_root/build}
export KSERIES_RUN=${KSERIES_RUN:-$ci_root/run}
. "$(dirname "$0")/lib.sh"

mkdir -p "$KSERIES_RUN"
RESULTS=$KSERIES_RUN/results.tsv
export KSERIES_TIMES=$KSERIES_RUN/times
: >"$RESULTS"
: >"$KSERIES_TIMES"
T0=$(date +%s)

result() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}" >>"$RESULTS"; }

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
	echo "== test cases ($RESULTS)"
	awk -F'\t' '$1 == "FAIL" { printf "FAIL %s%s\n", $2, ($3 != "" ? "  (" $3 ")" : "") }
		$1 == "SKIP" { n[$3]++ }
		END { for (r in n) printf "SKIP %d case(s): %s\n", n[r], (r != "" ? r : "no reason given") }' "$RESULTS" | sort
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
}

# A stage that fails ends the run: what it would have tested is failed.
abort() {
	result FAIL "$1" "$2"
	summary
	exit 1
}

stage_begin deps
bash "$KSERIES_REPO/scripts/deps.sh" || abort setup:deps "installing packages failed"
stage_end

stage_begin fetch-base
bash "$KSERIES_REPO/scripts/fetch-base.sh" || abort setup:fetch-base "no base tree"
stage_end

stage_begin lint
bash "$KSERIES_REPO/scripts/lint-series.sh" >>"$RESULTS"
stage_end

stage_begin apply
if out=$(KSERIES_FORCE=1 bash "$KSERIES_REPO/scripts/apply.sh" 2>&1); then
	series_patches | sed 's/^/PASS\tapply:/' >>"$RESULTS"
	printf '%s\n' "$out" | tail -n 1
else
	printf '%s\n' "$out" >&2
	abort apply "$(grep -m1 '^error:' <<<"$out")"
fi
stage_end

stage_begin export-check
if bash "$KSERIES_REPO/scripts/export.sh" --check; then
	result PASS lint:export "patches/ is what export.sh writes"
else
	result FAIL lint:export "patches/ is not what export.sh writes from the applied series"
fi
stage_end

# Build, boot, run the VM plan.
if ! bash "$KSERIES_REPO/scripts/check-tree.sh" >>"$RESULTS"; then
	summary
	exit 1
fi

# What reviewers check: each patch builds, no new W=1/sparse/kernel-doc/
# coccinelle findings, docs, MAINTAINERS, the mails and their git am/b4 am.
if [ "${KSERIES_REVIEW_CHECKS:-1}" = 1 ]; then
	with_build_lock bash "$KSERIES_REPO/scripts/review.sh" >>"$RESULTS" ||
		result FAIL review "review.sh failed to run"
	stage_begin review-docs
	bash "$KSERIES_REPO/scripts/check-docs.sh" >>"$RESULTS" || result FAIL review:docs "check-docs.sh failed to run"
	bash "$KSERIES_REPO/scripts/check-maintainers.sh" >>"$RESULTS" ||
		result FAIL review:maintainers "check-maintainers.sh failed to run"
	stage_end
	stage_begin review-mbox
	bash "$KSERIES_REPO/scripts/mbox.sh" --check >>"$RESULTS" || result FAIL review:mbox "mbox.sh failed to run"
	stage_end
fi

summary
