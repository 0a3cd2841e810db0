#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the test VM's initramfs ($KSERIES_RUN/initramfs.cpio): busybox and
# bash from Debian, the modules of $KSERIES_BUILD, the kselftests named
# in the subsystem folders' kselftests files (built statically against
# the work tree's UAPI headers) and the plan made of their vm-tests files.
. "$(dirname "$0")/lib.sh"

root=$KSERIES_RUN/initramfs
kst=$KSERIES_BUILD/kselftest
kver=$(cat "$KSERIES_BUILD/include/config/kernel.release" 2>/dev/null) ||
	die "no kernel built in $KSERIES_BUILD"

# Kselftests: "<dir under tools/testing/selftests> <file>..." lines.  A
# file the dir's Makefile generates is built with it; other files (shell
# scripts) are copied.
build_kselftests() {
	local dir files f out
	rm -rf "$kst"
	while read -r dir files; do
		out=$kst/$dir
		mkdir -p "$out"
		for f in $files; do
			if [ -f "$KSERIES_TREE/tools/testing/selftests/$dir/$f" ]; then
				cp "$KSERIES_TREE/tools/testing/selftests/$dir/$f" "$out/$f"
			else
				make -s -C "$KSERIES_TREE/tools/testing/selftests/$dir" \
					OUTPUT="$out" CC="ccache gcc" \
					KHDR_INCLUDES="-isystem $KSERIES_BUILD/usr/include" \
					LDFLAGS=-static "$out/$f" ||
					die "building kselftest $dir/$f failed"
			fi
		done
	done < <(cat "$KSERIES_REPO"/*/kselftests 2>/dev/null | grep -v -E '^[[:space:]]*(#|$)')
}

build_kselftests

rm -rf "$root"
mkdir -p "$root"/{bin,sbin,etc/kseries,proc,sys,dev,tmp,root,kselftest,lib/modules}
cp /bin/busybox "$root/bin/busybox"
cp /bin/bash-static "$root/bin/bash"
install -m 0755 "$KSERIES_REPO/scripts/guest/init" "$root/init"
cp -a "$KSERIES_BUILD/modroot/lib/modules/$kver" "$root/lib/modules/"
cp -a "$kst/." "$root/kselftest/"
cat "$KSERIES_REPO"/*/vm-tests | grep -E '^(kunit|kselftest|run)[[:space:]]' >"$root/etc/kseries/plan"

(cd "$root" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --quiet --reproducible) >"$KSERIES_RUN/initramfs.cpio" ||
	die "cpio failed"
info "initramfs: $KSERIES_RUN/initramfs.cpio ($(du -h "$KSERIES_RUN/initramfs.cpio" | cut -f1)), plan:"
sed 's/^/  /' "$root/etc/kseries/plan"
