#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install what the workbench needs from the machine's Debian archive.
# Only missing packages are installed; nothing is done when all are there.
. "$(dirname "$0")/lib.sh"

pkgs=(
	# fetching and unpacking the base
	apt dpkg xz-utils git ca-certificates
	# building the kernel
	gcc make flex bison bc libelf-dev libssl-dev dwarves kmod cpio
	perl python3 python3-ply python3-git rsync ccache
	# static analysis and review
	sparse coccinelle b4 git-email libmailtools-perl python3-docutils
	# the clang build of the objects the series touches (the 0-day robot
	# builds with clang too; this kernel needs LLVM 17 or newer)
	clang-19 lld-19 llvm-19
	# the test VM
	qemu-system-x86 busybox-static bash-static util-linux
	# the LAVA stage: LAVA's dispatcher (lava-run) and its schemas
	# (lava-schema.py); lava-server's device-type templates are only
	# downloaded (scripts/lava/templates.sh)
	lava-dispatcher lava-common python3-jinja2 python3-yaml
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	info "installing: ${missing[*]}"
	sudo=
	# Without a terminal (test.sh's stages), sudo cannot ask for a
	# password: -n, so that it says so instead of failing obscurely.
	if [ "$(id -u)" -ne 0 ]; then
		sudo=sudo
		[ -t 0 ] || sudo="sudo -n"
	fi
	$sudo apt-get update -qq || die "apt-get update failed (not root: sudo must work without a password, or run scripts/deps.sh once in a terminal as root)"
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" || die "apt-get install failed"
fi

# The device-type templates of lava-server, of the dispatcher's version
# (the .deb and its contents cached in $KSERIES_DL).
bash "$KSERIES_REPO/scripts/lava/templates.sh" >/dev/null ||
	die "lava-server's device-type templates: scripts/lava/templates.sh failed"
