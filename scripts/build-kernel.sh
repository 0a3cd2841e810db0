#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Configure and build the work tree out of tree (O=$KSERIES_BUILD):
# bzImage, modules, modules installed into $KSERIES_BUILD/modroot and the
# UAPI headers into $KSERIES_BUILD/usr (for the selftests).
#
#   build-kernel.sh            configure and build
#   build-kernel.sh --config   configure only
#
# The configuration is allnoconfig plus these fragments, merged in this
# order by the tree's scripts/kconfig/merge_config.sh (a later fragment
# overrides an earlier one, which merge_config reports):
#   the tree's own fragments       the config of each kselftest directory
#                                  the VM plan runs (DIR/config) and every
#                                  .kunitconfig the series adds or changes
#   */kseries.config               what the part folders add to those
#   scripts/vm/kernel.config       what the test VM boots with: lockdep,
#                                  KASAN, KUnit, ...; last, so that no
#                                  fragment turns them off
#   $KSERIES_EXTRA_CONFIG          a fragment of your own, if set
# Every requested value must be in the resulting .config: one that
# Kconfig did not take (a missing dependency) fails the build, naming it.
. "$(dirname "$0")/lib.sh"

config_only=0
[ "${1:-}" != --config ] || config_only=1

# The fragments, in merge order (paths).
config_fragments() {
	local dir f
	for dir in $(vm_plan | awk '$1 == "files" { print $2 }'); do
		f=$KSERIES_WORKTREE/tools/testing/selftests/$dir/config
		[ ! -f "$f" ] || printf '%s\n' "$f"
	done
	ktree_git diff --name-only --diff-filter=AM "$KSERIES_BASE_TAG" HEAD -- '*.kunitconfig' '*/.kunitconfig' |
		sort -u | sed "s|^|$KSERIES_WORKTREE/|"
	ls "$KSERIES_REPO"/*/kseries.config
	printf '%s\n' "$KSERIES_REPO/scripts/vm/kernel.config"
	[ -z "${KSERIES_EXTRA_CONFIG:-}" ] || printf '%s\n' "$KSERIES_EXTRA_CONFIG"
}

configure() {
	local merged=$KSERIES_BUILD/kseries.merged bad=0 line sym val frags
	build_dir_for_base "$KSERIES_BUILD"
	mapfile -t frags < <(config_fragments)
	printf 'config fragments:\n' >&2
	printf '  %s\n' "${frags[@]}" >&2
	# merge_config.sh -m: only merge (it reports overrides), into O=/.config.
	rm -f "$KSERIES_BUILD/.config"
	(cd "$KSERIES_WORKTREE" && ARCH=x86_64 bash scripts/kconfig/merge_config.sh -m \
		-O "$KSERIES_BUILD" "${frags[@]}") >"$KSERIES_BUILD/merge_config.log" 2>&1 || {
		cat "$KSERIES_BUILD/merge_config.log" >&2
		die "merge_config.sh failed"
	}
	grep '^Value of' -A2 "$KSERIES_BUILD/merge_config.log" | grep -v '^--' | sed 's/^/  /' >&2
	mv "$KSERIES_BUILD/.config" "$merged"
	kmake "$KSERIES_WORKTREE" "$KSERIES_BUILD" -s KCONFIG_ALLCONFIG="$merged" allnoconfig >/dev/null ||
		die "make allnoconfig failed"
	while read -r line; do
		case $line in
		CONFIG_*=n | "# CONFIG_"*" is not set")
			sym=${line#\# } sym=${sym%%[ =]*}
			! grep -q "^$sym=" "$KSERIES_BUILD/.config" || {
				warn "requested $sym off, got: $(grep "^$sym=" "$KSERIES_BUILD/.config")"
				bad=1
			}
			;;
		CONFIG_*=*)
			sym=${line%%=*} val=${line#*=}
			grep -qxF "$sym=$val" "$KSERIES_BUILD/.config" || {
				warn "requested $sym=$val, got: $(grep -E "^(# )?$sym[= ]" "$KSERIES_BUILD/.config" || echo 'absent')"
				bad=1
			}
			;;
		esac
	done <"$merged"
	[ $bad = 0 ] || die "the requested configuration does not hold (missing dependencies?): see the warnings above"
}

configure
[ $config_only = 0 ] || exit 0
kmake "$KSERIES_WORKTREE" "$KSERIES_BUILD" bzImage modules || die "kernel build failed"
rm -rf "$KSERIES_BUILD/modroot"
kmake "$KSERIES_WORKTREE" "$KSERIES_BUILD" -s INSTALL_MOD_PATH="$KSERIES_BUILD/modroot" \
	INSTALL_MOD_STRIP=1 modules_install >/dev/null || die "modules_install failed"
kmake "$KSERIES_WORKTREE" "$KSERIES_BUILD" -s INSTALL_HDR_PATH="$KSERIES_BUILD/usr" \
	headers_install >/dev/null || die "headers_install failed"
