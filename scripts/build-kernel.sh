#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Configure and build the work tree out of tree (O=$KSERIES_BUILD):
# bzImage, modules, modules installed into $KSERIES_BUILD/modroot and the
# UAPI headers into $KSERIES_BUILD/usr (for the selftests).
#
# The configuration is allnoconfig plus the fragments kept in the repo:
# scripts/config/base.config, the subsystem folders' kseries.config and
# scripts/config/debug.config.  A requested option that Kconfig did not
# take (a missing dependency) is an error.
. "$(dirname "$0")/lib.sh"

KMAKE=(make -C "$KSERIES_TREE" O="$KSERIES_BUILD" ARCH=x86_64
	CC="ccache gcc" HOSTCC="ccache gcc" -j"$KSERIES_JOBS"
	KBUILD_BUILD_USER=kseries KBUILD_BUILD_HOST=kseries)

config_fragments() {
	printf '%s\n' "$KSERIES_REPO/scripts/config/base.config"
	ls "$KSERIES_REPO"/*/kseries.config
	printf '%s\n' "$KSERIES_REPO/scripts/config/debug.config"
	[ -z "${KSERIES_EXTRA_CONFIG:-}" ] || printf '%s\n' "$KSERIES_EXTRA_CONFIG"
}

configure() {
	local frag=$KSERIES_BUILD/kseries.fragment bad=0 line sym val
	mkdir -p "$KSERIES_BUILD"
	config_fragments | xargs cat >"$frag.new"
	mv "$frag.new" "$frag"
	"${KMAKE[@]}" -s KCONFIG_ALLCONFIG="$frag" allnoconfig >/dev/null ||
		die "make allnoconfig failed"
	while read -r line; do
		case $line in
		CONFIG_*=*)
			sym=${line%%=*} val=${line#*=}
			grep -qxF "$sym=$val" "$KSERIES_BUILD/.config" || {
				warn "requested $sym=$val, got: $(grep -E "^(# )?$sym[= ]" "$KSERIES_BUILD/.config" || echo 'absent')"
				bad=1
			}
			;;
		"# CONFIG_"*" is not set")
			sym=${line#\# } sym=${sym%% *}
			! grep -q "^$sym=" "$KSERIES_BUILD/.config" || {
				warn "requested $sym off, got: $(grep "^$sym=" "$KSERIES_BUILD/.config")"
				bad=1
			}
			;;
		esac
	done <"$frag"
	[ $bad = 0 ] || die "the config fragments do not hold (missing dependencies?)"
}

configure
"${KMAKE[@]}" bzImage modules || die "kernel build failed"
rm -rf "$KSERIES_BUILD/modroot"
"${KMAKE[@]}" -s INSTALL_MOD_PATH="$KSERIES_BUILD/modroot" INSTALL_MOD_STRIP=1 \
	modules_install >/dev/null || die "modules_install failed"
"${KMAKE[@]}" -s INSTALL_HDR_PATH="$KSERIES_BUILD/usr" headers_install >/dev/null ||
	die "headers_install failed"
