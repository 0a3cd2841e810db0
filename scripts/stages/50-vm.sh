#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage vm: one boot of the test VM running the plan (*/vm.plan); every
# KUnit case and kselftest case is a result, and so is every kernel splat
# (scripts/vm/run.sh).  The steps the local LAVA job runs are left to the
# lava stage when it runs them (KSERIES_LAVA_RUNS, scripts/test.sh).
#   vm:results:runner      kselftest's runner output of broken programs
#                          gets the LAVA test definition's verdicts
# Then the VM's watchdog on a guest that hangs:
#   vm:watchdog:hung-boot  the same kernel and initramfs, whose init never
#                          starts (rdinit is busybox sleeping): QEMU is
#                          stopped at the boot timeout and the run fails
#                          saying why
. "$(dirname "$0")/../lib.sh"

bash "$KSERIES_REPO/scripts/vm/run.sh" || exit

# The verdicts on run_kselftest.sh's output, on outputs of each kind a
# broken program gives: the VM judges them as the LAVA job does.
if msg=$(python3 "$KSERIES_REPO/scripts/vm/results.py" --self-test "$KSERIES_WORKTREE" 2>&1); then
	result PASS vm:results:runner "$msg"
else
	result FAIL vm:results:runner "$(tr '\n' ';' <<<"$msg" | cut -c1-300)"
fi

# The watchdog's verdict depends on the kernel, the busybox the guest
# starts instead of init, and the workbench only (the rest of the
# initramfs is never run, and is rebuilt with new dates each time):
# cached on them, so that a second unchanged run skips the minute.
key=$KSERIES_CACHE/results/vm-hung-boot/$( {
	sha256sum "$KSERIES_BUILD/arch/x86/boot/bzImage" /bin/busybox | cut -d' ' -f1
	workbench_hash
} | sha256sum | cut -c1-16)
if verdict=$(cache_get "$key"); then
	printf '%s (cached: same kernel, busybox and workbench)\n' "$verdict"
	exit 0
fi

hung=$KSERIES_RUN/vm-hung-boot
rm -rf "$hung"
mkdir -p "$hung"
boot_s=60
start=$SECONDS
from=$KSERIES_RUN
KSERIES_RUN=$hung KSERIES_VM_INITRAMFS_FROM=$from KSERIES_VM_BOOT_TIMEOUT=$boot_s KSERIES_VM_TIMEOUT=$((boot_s + 60)) \
	KSERIES_VM_CMDLINE="rdinit=/bin/busybox -- sleep 100000" \
	bash "$KSERIES_REPO/scripts/vm/run.sh" >"$hung/results" 2>"$hung/run.log"
took=$((SECONDS - start))
why=$(awk -F'\t' '$2 == "vm:boot" { print $3 }' "$hung/results")
if [[ $why == "QEMU stopped: no KSERIES-BOOT"* ]] && [ "$took" -le $((boot_s + 60)) ]; then
	line=$(result PASS vm:watchdog:hung-boot "a guest whose init never starts ended after ${took}s: ${why:0:160}")
	printf '%s\n' "$line"
	cache_put "$key" <<<"$line"
else
	result FAIL vm:watchdog:hung-boot "a guest whose init never starts ended after ${took}s (boot timeout ${boot_s}s), vm:boot said: ${why:-nothing}; see $hung"
fi
