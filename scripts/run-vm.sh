#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot the built kernel with the initramfs in QEMU (TCG: no KVM here) and
# wait for the plan to finish.  The kernel console goes to
# $KSERIES_RUN/console.log, the results to $KSERIES_RUN/results.log.  A
# hard timeout (KSERIES_VM_TIMEOUT seconds) ends a hung VM.
. "$(dirname "$0")/lib.sh"

timeout_s=${KSERIES_VM_TIMEOUT:-2400}
kernel=$KSERIES_BUILD/arch/x86/boot/bzImage
[ -f "$kernel" ] || die "no $kernel"
[ -f "$KSERIES_RUN/initramfs.cpio" ] || die "no initramfs (run scripts/mkinitramfs.sh)"

# Kernel command line: the base, then the "cmdline" lines of the
# subsystem folders' vm-tests files.
cmdline="console=ttyS0,115200 panic=-1 loglevel=7 printk.time=1"
cmdline+=" $(cat "$KSERIES_REPO"/*/vm-tests | sed -n 's/^cmdline[[:space:]]\+//p' | tr '\n' ' ')"
cmdline+=" ${KSERIES_VM_CMDLINE:-}"

rm -f "$KSERIES_RUN/console.log" "$KSERIES_RUN/results.log"
info "vm: $kernel"
info "vm: cmdline: $cmdline"
timeout -k 10 "$timeout_s" qemu-system-x86_64 \
	-machine q35 -accel tcg,thread=multi -cpu max -smp "${KSERIES_VM_CPUS:-2}" \
	-m "${KSERIES_VM_MEM:-4G}" -nodefaults -display none -no-reboot \
	-kernel "$kernel" -initrd "$KSERIES_RUN/initramfs.cpio" -append "$cmdline" \
	-serial "file:$KSERIES_RUN/console.log" -serial "file:$KSERIES_RUN/results.log"
rc=$?
if [ $rc = 124 ] || [ $rc = 137 ]; then
	warn "vm: killed after ${timeout_s}s"
fi
info "vm: qemu exit status $rc"
exit $rc
