#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What the local LAVA job (labs/lava/jobs/qemu-x86_64-kfd-kselftest.yaml)
# deploys, from the test kernel of $KSERIES_BUILD, into directory OUT:
#
#   bzImage              the kernel
#   rootfs.cpio          the test VM's own initramfs (scripts/vm/run.sh
#                        --initramfs: busybox, bash, the modules, the
#                        installed kselftest tree at /kselftest, PID 1
#                        scripts/vm/init, which gives LAVA a root shell
#                        when booted with kseries.shell); uncompressed, as
#                        the test kernel has no RD_* option
#   kselftest-list.txt   the programs run_kselftest.sh runs there
#   kver                 the kernel release
#
#   artifacts.sh OUT
. "$(dirname "$0")/../lib.sh"

out=${1:?usage: artifacts.sh OUT}
kernel=$KSERIES_BUILD/arch/x86/boot/bzImage
kver=$(cat "$KSERIES_BUILD/include/config/kernel.release" 2>/dev/null) ||
	die "no kernel built in $KSERIES_BUILD"
[ -f "$kernel" ] || die "no $kernel"

rm -rf "$out"
mkdir -p "$out/vm"
cp "$kernel" "$out/bzImage"
printf '%s\n' "$kver" >"$out/kver"
KSERIES_RUN=$out/vm bash "$KSERIES_REPO/scripts/vm/run.sh" --initramfs ||
	die "the test VM's initramfs: $(tail -n 3 "$out/vm/initramfs.log" 2>/dev/null)"
mv "$out/vm/initramfs.cpio" "$out/rootfs.cpio"
cp "$out/vm/initramfs/kselftest/kselftest-list.txt" "$out/"
rm -rf "$out/vm"
