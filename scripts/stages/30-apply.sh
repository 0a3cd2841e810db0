#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage apply: the series as git applies it.
#   apply:series          every posting, in order, on the base (the tree the
#                         later stages test; scripts/apply.sh)
#   apply:alone:<posting> each posting alone on the base
#   apply:export          patches/ and series are exactly what
#                         scripts/export.sh writes from the applied tree
#   apply:upstream:*      scripts/check-upstream.sh: the series applies to
#                         pristine upstream v7.3.4 as it does to the Debian
#                         base (or a SKIP saying why it cannot be checked)
. "$(dirname "$0")/../lib.sh"

if ! bash "$KSERIES_REPO/scripts/apply.sh" --check; then
	result FAIL apply:series "scripts/apply.sh failed (the patch and the paths it conflicts on are in the log)"
	exit 1
fi
if out=$(bash "$KSERIES_REPO/scripts/export.sh" --check 2>&1); then
	result PASS apply:export "$out"
else
	printf '%s\n' "$out" >&2
	result FAIL apply:export "patches/ is not what scripts/export.sh writes from the applied series: $(tail -n 1 <<<"$out")"
fi
bash "$KSERIES_REPO/scripts/check-upstream.sh"
