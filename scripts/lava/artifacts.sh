#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What the local LAVA job (labs/lava/jobs/qemu-x86_64-kfd-kselftest.yaml)
# deploys, from the test kernel of $KSERIES_BUILD, into directory OUT:
#
#   bzImage            the kernel
#   rootfs.cpio        the ramdisk: Debian's busybox and bash, PID 1
#                      labs/lava/ramdisk/init (a root shell on the console)
#                      and /usr/bin/timeout (labs/lava/ramdisk/timeout);
#                      uncompressed, as the test kernel has no RD_* option
#   modules.tar.gz     lib/modules/KVER of the build (LAVA adds it to the
#                      ramdisk: an "overlay" of the ramdisk image)
#   kselftest.tar.gz   an installed kselftest tree of the KFD collection,
#                      with the paths of the tarball that
#                      "make kselftest-gen_tar TARGETS=drivers/gpu/amdkfd"
#                      writes (kselftest-packages/kselftest.tar.gz: the
#                      selftests' "install" tree, relative to ./):
#                      run_kselftest.sh, kselftest/ (runner.sh ...),
#                      kselftest-list.txt and drivers/gpu/amdkfd/ (the
#                      programs, config, settings).  Not made by that
#                      target: the programs are static, built like the
#                      VM's against the tree's UAPI headers, and there is
#                      no VERSION file.  LAVA adds it at /opt/kselftest
#   kver               the kernel release
#
#   artifacts.sh OUT
. "$(dirname "$0")/../lib.sh"

out=${1:?usage: artifacts.sh OUT}
collection=drivers/gpu/amdkfd
sel=$KSERIES_WORKTREE/tools/testing/selftests
kernel=$KSERIES_BUILD/arch/x86/boot/bzImage

kver=$(cat "$KSERIES_BUILD/include/config/kernel.release" 2>/dev/null) ||
	die "no kernel built in $KSERIES_BUILD"
[ -f "$kernel" ] || die "no $kernel"
[ -d "$KSERIES_BUILD/modroot/lib/modules/$kver" ] || die "no modules installed in $KSERIES_BUILD/modroot"
[ -d "$sel/$collection" ] || die "no $sel/$collection"

rm -rf "$out"
mkdir -p "$out"
cp "$kernel" "$out/bzImage"
printf '%s\n' "$kver" >"$out/kver"

# Reproducible archives: fixed order, owner and dates.
archive() { # DIR FILE
	tar -C "$1" --sort=name --owner=0 --group=0 --numeric-owner \
		--mtime="@${SOURCE_DATE_EPOCH:-0}" -czf "$2" .
}

# The ramdisk.
root=$out/rootfs
mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,root,opt,lib/modules,usr/bin,usr/sbin}
cp /bin/busybox "$root/bin/busybox"
cp /bin/bash-static "$root/bin/bash"
install -m 0755 "$KSERIES_REPO/labs/lava/ramdisk/init" "$root/init"
# Where kselftest's runner looks for timeout (busybox's, through a wrapper:
# labs/lava/ramdisk/timeout); without it no program has a timeout.
install -m 0755 "$KSERIES_REPO/labs/lava/ramdisk/timeout" "$root/usr/bin/timeout"
(cd "$root" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --quiet --reproducible) >"$out/rootfs.cpio" ||
	die "cpio of the ramdisk failed"
rm -rf "$root"

# The modules.
mods=$out/modules
mkdir -p "$mods/lib/modules"
cp -a "$KSERIES_BUILD/modroot/lib/modules/$kver" "$mods/lib/modules/"
rm -f "$mods/lib/modules/$kver/build" "$mods/lib/modules/$kver/source"
archive "$mods" "$out/modules.tar.gz" || die "tar of the modules failed"
rm -rf "$mods"

# The kselftest tree, laid out as the selftests' "install" target does
# (gen_tar archives that tree).
kst=$out/kselftest
mkdir -p "$kst/kselftest" "$kst/$collection"
for f in module.sh runner.sh prefix.pl ktap_helpers.sh ksft.py; do
	[ -f "$sel/kselftest/$f" ] && install -m 0744 "$sel/kselftest/$f" "$kst/kselftest/"
done
install -m 0744 "$sel/run_kselftest.sh" "$kst/"
# The programs of the collection (its Makefile's emit_tests: the list
# run_kselftest.sh reads), each built as the VM builds them.
make -s -C "$sel/$collection" emit_tests COLLECTION="$collection" >"$kst/kselftest-list.txt" ||
	die "make emit_tests in $collection failed"
[ -s "$kst/kselftest-list.txt" ] || die "$collection lists no test"
while IFS=: read -r _ prog; do
	kselftest_make "$KSERIES_WORKTREE" "$collection" "$kst/$collection" "$prog" LDFLAGS=-static ||
		die "building kselftest $collection/$prog failed"
done <"$kst/kselftest-list.txt"
for f in settings config; do
	[ -f "$sel/$collection/$f" ] && cp "$sel/$collection/$f" "$kst/$collection/"
done
archive "$kst" "$out/kselftest.tar.gz" || die "tar of the kselftests failed"
rm -rf "$kst"
