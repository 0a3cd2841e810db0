#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The test VM, all of it: build the initramfs for the plan, boot the
# kernel of $KSERIES_BUILD in QEMU, and turn what came back into result
# lines (STATUS<TAB>NAME<TAB>DETAIL) on stdout.
#
#   run.sh               all of it
#   run.sh --initramfs   only $KSERIES_RUN/initramfs.cpio (what the LAVA
#                        job boots too: scripts/lava/artifacts.sh)
#
# The plan: the vm.plan of each part folder (lib: vm_plan), what the
# guest (scripts/vm/init) runs, in this order.  Every step has a timeout;
# the VM's own timeout is their sum plus the boot.
#   cmdline ARGS...                    kernel command line arguments
#   files DIR FILE...                  kselftest files the initramfs carries
#                                      (built by DIR's Makefile, or copied)
#   run NAME TIMEOUT CMD...            a setup step: fails if CMD fails
#   kunit NAME TIMEOUT MODULE [ARG...] load MODULE, report its KUnit suites
#   kselftest NAME TIMEOUT DIR CMD...  run CMD in /kselftest/DIR, report its
#                                      (K)TAP
#   exclude DIR PROG TEST REASON...    the kselftest harness program PROG of
#                                      DIR does not run TEST (-T TEST); each
#                                      is reported as a SKIP with REASON
#   lava NAME                          step NAME is the local LAVA job's too:
#                                      left out when KSERIES_LAVA_RUNS=1 (the
#                                      lava stage runs it), so that each
#                                      test runs once
# TIMEOUT is in seconds, or "settings": the timeout= of DIR's settings
# file (tools/testing/selftests/DIR/settings), else kselftest's default
# of 45 s, as tools/testing/selftests/kselftest/runner.sh does.
#
#   initramfs  Debian's busybox and bash, the modules of $KSERIES_BUILD,
#              the plan's kselftest files (built statically against the
#              tree's UAPI headers) laid out as an installed kselftest
#              tree (run_kselftest.sh, kselftest/, kselftest-list.txt),
#              /usr/bin/timeout (scripts/vm/timeout) and the plan itself,
#              timeouts resolved
#   boot       QEMU, TCG: KVM hangs after SeaBIOS on these machines.  The
#              kernel console goes to console.log, the results (second
#              serial port) to results.log, both in $KSERIES_RUN
#   results    scripts/vm/results.py: every KUnit case and kselftest case,
#              every plan step that failed, timed out or never ran, and
#              every kernel splat in the console log
#
# A guest that hangs costs minutes, not the whole budget: QEMU is stopped
# when the guest is late (see watch_guest), and a hung task or a soft
# lockup panics the guest, which ends QEMU (panic=-1, -no-reboot).
#
# Environment: KSERIES_VM_CPUS (2), KSERIES_VM_MEM (4G), KSERIES_VM_CMDLINE
# (more kernel arguments), KSERIES_VM_BOOT_TIMEOUT (seconds for the guest's
# plan to start, 120), KSERIES_VM_TIMEOUT (seconds for all of it; default:
# the boot's plus the plan's timeouts), KSERIES_VM_ACCEL (tcg; kvm where
# KVM works).
. "$(dirname "$0")/../lib.sh"

VM=$KSERIES_REPO/scripts/vm
root=$KSERIES_RUN/initramfs
kst=$KSERIES_BUILD/kselftest
kernel=$KSERIES_BUILD/arch/x86/boot/bzImage
mkdir -p "$KSERIES_RUN"

kver=$(cat "$KSERIES_BUILD/include/config/kernel.release" 2>/dev/null) || {
	result FAIL vm:initramfs "no kernel built in $KSERIES_BUILD"
	exit 1
}
[ -f "$kernel" ] || {
	result FAIL vm:initramfs "no $kernel"
	exit 1
}

# The plan's lines without comments.
plan_lines() { vm_plan | grep -v -E '^[[:space:]]*(#|$)'; }

# The timeout of a kselftest directory, as kselftest's runner reads it
# (timeout= of its settings file, else 45 s).
settings_timeout() {
	local t
	t=$(sed -n 's/^timeout=\(.*\)$/\1/p' "$KSERIES_WORKTREE/tools/testing/selftests/$1/settings" 2>/dev/null | tail -n 1)
	printf '%s\n' "${t:-45}"
}

# The plan the guest runs: "KIND NAME TIMEOUT ARGS...", timeouts in
# seconds, each a positive number (kselftest's timeout=0, "no limit",
# cannot bound a step of the VM).
resolve_plan() {
	local kind name t dir rest lava
	lava=$(plan_lines | awk '$1 == "lava" { print $2 }')
	plan_lines | while read -r kind name t rest; do
		if [ "${KSERIES_LAVA_RUNS:-0}" = 1 ] && [ "$kind" != lava ] && grep -qxF "$name" <<<"$lava"; then
			printf 'vm: step %s %s left out: the lava stage runs it\n' "$kind" "$name" >&2
			continue
		fi
		case $kind in
		cmdline | files | lava) continue ;;
		exclude)
			# Passed on (the guest ignores it) for results.py to report.
			printf '%s %s %s %s\n' "$kind" "$name" "$t" "$rest"
			continue
			;;
		run | kunit) ;;
		kselftest)
			dir=${rest%% *}
			[ "$t" != settings ] || t=$(settings_timeout "$dir")
			;;
		*) die "vm.plan: unknown step \"$kind\"" ;;
		esac
		[[ $t =~ ^[1-9][0-9]*$ ]] ||
			die "vm.plan: step $kind $name: timeout \"$t\" is not a number of seconds (\"settings\" only for kselftest steps; settings' timeout=0 cannot bound a VM step)"
		printf '%s %s %s %s\n' "$kind" "$name" "$t" "$rest"
	done
}

# Kselftest files: built by their directory's Makefile, or copied; laid
# out as the selftests' "install" target does: run_kselftest.sh, the
# runner's kselftest/, each directory's settings and config, and
# kselftest-list.txt (what run_tests would run, its emit_tests, for each
# directory the plan runs with run_kselftest.sh -c DIR).
build_kselftests() {
	local kind dir f list runner_dirs sel=$KSERIES_WORKTREE/tools/testing/selftests
	runner_dirs=$(plan_lines | awk '{ for (i = 1; i < NF - 1; i++) if ($i ~ /run_kselftest\.sh$/ && $(i + 1) == "-c") print $(i + 2) }')
	rm -rf "$kst"
	mkdir -p "$kst/kselftest"
	install -m 0755 "$sel/run_kselftest.sh" "$kst/"
	for f in module.sh runner.sh prefix.pl ktap_helpers.sh ksft.py; do
		[ ! -f "$sel/kselftest/$f" ] || install -m 0744 "$sel/kselftest/$f" "$kst/kselftest/"
	done
	plan_lines | while read -r kind dir files; do
		[ "$kind" = files ] || continue
		mkdir -p "$kst/$dir"
		for f in $files; do
			if [ -f "$sel/$dir/$f" ]; then
				cp "$sel/$dir/$f" "$kst/$dir/$f"
			else
				kselftest_make "$KSERIES_WORKTREE" "$dir" "$kst/$dir" "$f" LDFLAGS=-static ||
					die "building kselftest $dir/$f failed"
			fi
		done
		for f in settings config; do
			[ ! -f "$sel/$dir/$f" ] || cp "$sel/$dir/$f" "$kst/$dir/"
		done
		# A collection the plan runs with run_kselftest.sh: every program
		# its run_tests would run must be carried, or it would silently
		# run nowhere.
		grep -qxF -- "$dir" <<<"$runner_dirs" || continue
		list=$(make -s -C "$sel/$dir" emit_tests COLLECTION="$dir") || die "make emit_tests in $dir failed"
		while IFS=: read -r _ f; do
			[ -e "$kst/$dir/$f" ] || die "vm.plan: $dir runs through run_kselftest.sh, but its files do not carry $f"
			printf '%s:%s\n' "$dir" "$f"
		done <<<"$list" >>"$kst/kselftest-list.txt"
	done || return 1
	# Excluded tests: the program becomes PROG.real behind a wrapper that
	# passes the kselftest harness one -T TEST per exclusion.
	plan_lines | awk '$1 == "exclude" { x[$2 "/" $3] = x[$2 "/" $3] " -T " $4 } END { for (p in x) print p x[p] }' |
		while read -r prog args; do
			[ -x "$kst/$prog" ] || die "vm.plan: exclude: no kselftest program $prog in the plan's files"
			mv "$kst/$prog" "$kst/$prog.real"
			printf '#!/bin/sh\nexec "$0.real" %s "$@"\n' "$args" >"$kst/$prog"
			chmod 0755 "$kst/$prog"
		done
}

make_initramfs() {
	build_kselftests || return 1
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,etc/kseries,proc,sys,dev,tmp,root,kselftest,lib/modules,usr/bin,usr/sbin}
	cp /bin/busybox "$root/bin/busybox"
	cp /bin/bash-static "$root/bin/bash"
	install -m 0755 "$VM/init" "$root/init"
	install -m 0755 "$VM/timeout" "$root/usr/bin/timeout"
	cp -a "$KSERIES_BUILD/modroot/lib/modules/$kver" "$root/lib/modules/"
	cp -a "$kst/." "$root/kselftest/"
	resolve_plan >"$root/etc/kseries/plan" || return 1
	(cd "$root" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc --quiet --reproducible) >"$KSERIES_RUN/initramfs.cpio"
}

# KSERIES_VM_INITRAMFS_FROM=RUN boots the initramfs an earlier run built
# in RUN (scripts/stages/50-vm.sh's watchdog check), with its plan.
if [ -n "${KSERIES_VM_INITRAMFS_FROM:-}" ]; then
	root=$KSERIES_VM_INITRAMFS_FROM/initramfs
	initramfs=$KSERIES_VM_INITRAMFS_FROM/initramfs.cpio
	[ -f "$initramfs" ] || die "no initramfs in $KSERIES_VM_INITRAMFS_FROM"
else
	initramfs=$KSERIES_RUN/initramfs.cpio
	stage_begin vm-initramfs
	if ! make_initramfs >"$KSERIES_RUN/initramfs.log" 2>&1; then
		tail -n 30 "$KSERIES_RUN/initramfs.log" >&2
		result FAIL vm:initramfs "building the initramfs failed, see $KSERIES_RUN/initramfs.log"
		exit 1
	fi
	stage_end
fi
[ "${1:-}" != --initramfs ] || exit 0

# The VM's budget: the boot plus every step's timeout and the 10 s the
# guest gives a killed step to die.
steps=$(awk '$1 != "exclude" { s += $3 + 10 } END { print s + 0 }' "$root/etc/kseries/plan")
boot_s=${KSERIES_VM_BOOT_TIMEOUT:-120}
timeout_s=${KSERIES_VM_TIMEOUT:-$((boot_s + steps))}

# The watchdog, called by bounded every second with the seconds elapsed:
# stop QEMU (status 0, BOUNDED_WHY saying why) when the guest's result
# port shows no KSERIES-BOOT within the boot timeout, a step still running
# 70 s after its timeout (the guest kills a step at its timeout and gives
# it 10 s to die: the guest itself is stuck), or nothing new for 120 s
# between steps.
watch_mark=-
watch_since=0
watch_guest() {
	local mark limit
	mark=$(grep -aE '^KSERIES-(BOOT|BEGIN|END|DONE|ABORT)' "$KSERIES_RUN/results.log" 2>/dev/null | tail -n 1 | tr -d '\r')
	[ "$mark" = "$watch_mark" ] || { watch_mark=$mark watch_since=$1; }
	case $mark in
	"")
		limit=$boot_s
		BOUNDED_WHY="no KSERIES-BOOT from the guest's init ${boot_s}s after QEMU started (KSERIES_VM_BOOT_TIMEOUT)"
		;;
	"KSERIES-BEGIN "*)
		limit=$(awk -v s="${mark#KSERIES-BEGIN }" '$1 " " $2 == s { print $3 + 70; exit }' "$root/etc/kseries/plan")
		BOUNDED_WHY="step ${mark#KSERIES-BEGIN } still running ${limit:-120}s after it began (its timeout + 70 s): the guest is stuck"
		;;
	*)
		limit=120
		BOUNDED_WHY="nothing from the guest for 120s after \"$mark\""
		;;
	esac
	[ $(($1 - watch_since)) -ge "${limit:-120}" ]
}

# hung_task_panic, softlockup_panic: a task stuck in the kernel or a CPU
# that does not schedule fails the run anyway (results.py); the panic ends
# it at once, with the splat on the console.
cmdline="console=ttyS0,115200 panic=-1 hung_task_panic=1 softlockup_panic=1 loglevel=7 printk.time=1"
cmdline+=" $(plan_lines | sed -n 's/^cmdline[[:space:]]\+//p' | tr '\n' ' ')"
cmdline+=" ${KSERIES_VM_CMDLINE:-}"

stage_begin vm-boot
rm -f "$KSERIES_RUN/console.log" "$KSERIES_RUN/results.log"
printf 'vm: %s\nvm: cmdline: %s\nvm: timeout: %ss (boot %ss, plan steps %ss)\n' \
	"$kernel" "$cmdline" "$timeout_s" "$boot_s" "$steps" >&2
# -cpu max without la57: with 5-level paging, KASAN's shadow bounds
# depend on X86_FEATURE_LA57, which identify_cpu() clears and sets again
# while interrupts are on, so an interrupt in that window reports a
# false "wild-memory-access in rcu_is_watching" (base v7.3.4, seen here
# once in many boots).  The series does not touch x86 paging.
# The VM holds the build slot; QEMU is killed with this script (Ctrl-C,
# a closed terminal, SIGKILL), never left running (scripts/lib/build.sh: bounded).
# KSERIES_VM_ACCEL=kvm where KVM works: KVM if it opens, else TCG.
case ${KSERIES_VM_ACCEL:-tcg} in
tcg) accel="-accel tcg,thread=multi" ;;
kvm) accel="-accel kvm -accel tcg,thread=multi" ;;
*) die "KSERIES_VM_ACCEL: tcg or kvm, not \"$KSERIES_VM_ACCEL\"" ;;
esac
hold_build_lock
# shellcheck disable=SC2086 # $accel: several words
BOUNDED_WATCH=watch_guest bounded "$timeout_s" qemu-system-x86_64 \
	-machine q35 $accel -cpu max,la57=off -smp "${KSERIES_VM_CPUS:-2}" \
	-m "${KSERIES_VM_MEM:-4G}" -nodefaults -display none -no-reboot \
	-kernel "$kernel" -initrd "$initramfs" -append "$cmdline" \
	-serial "file:$KSERIES_RUN/console.log" -serial "file:$KSERIES_RUN/results.log"
rc=$?
stage_end
case $rc in
0) ;;
124) result FAIL vm:boot "QEMU killed after ${timeout_s}s (the plan's steps and the boot)" ;;
125) result FAIL vm:boot "QEMU stopped: $BOUNDED_WHY; the console ends: $(grep -a . "$KSERIES_RUN/console.log" | tail -n 1 | cut -c1-200)" ;;
*) result FAIL vm:boot "QEMU exited with status $rc" ;;
esac

python3 "$VM/results.py" "$KSERIES_WORKTREE" "$root/etc/kseries/plan" \
	"$KSERIES_RUN/results.log" "$KSERIES_RUN/console.log" ||
	result FAIL vm:results "scripts/vm/results.py crashed (status $?)"
