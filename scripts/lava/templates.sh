#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# LAVA's device-type templates (device-types/*.jinja2) of the lava-server
# package of the same version as the installed lava-dispatcher, without
# installing lava-server: its .deb is downloaded from the machine's Debian
# archive (apt-get download) into $KSERIES_DL and unpacked beside it.
# Prints the device-types directory.
#
#   templates.sh            download if missing, print the directory
. "$(dirname "$0")/../lib.sh"

ver=$(dpkg-query -W -f='${Version}' lava-dispatcher 2>/dev/null)
[ -n "$ver" ] || die "lava-dispatcher is not installed (scripts/deps.sh installs it)"
# The .deb file name has no epoch.
deb=$KSERIES_DL/lava-server_${ver#*:}_all.deb
dir=$KSERIES_DL/lava-server-${ver#*:}
types=$dir/usr/share/lava-server/device-types

if [ ! -f "$types/qemu.jinja2" ]; then
	mkdir -p "$KSERIES_DL"
	if [ ! -f "$deb" ]; then
		(cd "$KSERIES_DL" && apt-get download ${KSERIES_APT_SANDBOX:+-o APT::Sandbox::User="$KSERIES_APT_SANDBOX"} \
			"lava-server=$ver") >&2 ||
			die "apt-get download lava-server=$ver failed (the archive must have the dispatcher's version)"
	fi
	rm -rf "$dir.tmp"
	dpkg-deb -x "$deb" "$dir.tmp" || die "dpkg-deb -x $deb failed"
	[ -f "$dir.tmp/usr/share/lava-server/device-types/qemu.jinja2" ] ||
		die "$deb has no device-types/qemu.jinja2"
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
fi
printf '%s\n' "$types"
