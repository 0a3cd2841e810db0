#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the kernel tree as it is and run the test VM on it: the part of
# scripts/test.sh after "apply".  Result lines (STATUS<TAB>NAME<TAB>DETAIL)
# go to stdout, logs to $KSERIES_RUN.
#
# To test a tree of your own without touching the series work tree:
#   KSERIES_TREE=~/src/linux KSERIES_BUILD=/tmp/b KSERIES_RUN=/tmp/r \
#       bash scripts/check-tree.sh
. "$(dirname "$0")/lib.sh"

mkdir -p "$KSERIES_RUN"
result() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}"; }

stage_begin build
if ! with_build_lock bash "$KSERIES_REPO/scripts/build-kernel.sh" >"$KSERIES_RUN/build.log" 2>&1; then
	grep -E -B2 -A8 'error:|Error [0-9]|^make.*\*\*\*' "$KSERIES_RUN/build.log" | tail -n 60 >&2
	result FAIL build "kernel build failed, see $KSERIES_RUN/build.log"
	exit 1
fi
result PASS build "bzImage and modules"
stage_end

stage_begin initramfs
if ! bash "$KSERIES_REPO/scripts/mkinitramfs.sh" >"$KSERIES_RUN/initramfs.log" 2>&1; then
	tail -n 30 "$KSERIES_RUN/initramfs.log" >&2
	result FAIL vm:initramfs "building the initramfs failed, see $KSERIES_RUN/initramfs.log"
	exit 1
fi
stage_end

stage_begin vm
with_build_lock bash "$KSERIES_REPO/scripts/run-vm.sh" >&2
stage_end

stage_begin vm-results
python3 "$KSERIES_REPO/scripts/vm-results.py" "$KSERIES_TREE" \
	"$KSERIES_RUN/initramfs/etc/kseries/plan" "$KSERIES_RUN/results.log" \
	"$KSERIES_RUN/console.log" || result FAIL vm:results "parsing the VM logs failed"
stage_end
