#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage mail: the postings as the lists would receive them, proved to
# apply (scripts/send.sh --check: b4 prep/send under a test identity, the
# refusal of the placeholder identity, git am and b4 am of each posting's
# mails alone on a fresh base, and of all of them in order).  The verdict
# is cached by the patches, the base, the workbench and b4's version.
. "$(dirname "$0")/../lib.sh"

cache=$KSERIES_CACHE/results/mail
mkdir -p "$cache"
key=$cache/$( {
	printf '%s\n' "$BASE_COMMIT"
	cat "$KSERIES_SERIES"
	find "$KSERIES_PATCHES" -name '*.patch' | LC_ALL=C sort | xargs cat
	workbench_hash
	b4 --version
} | sha256sum | cut -c1-16)
if verdict=$(cache_get "$key"); then
	sed 's/$/ (cached: same patches, base, workbench and b4)/' <<<"$verdict"
	exit 0
fi
# In memory: a file on a full disk could lose the FAIL lines.
out=$(bash "$KSERIES_REPO/scripts/send.sh" --check)
rc=$?
printf '%s\n' "$out"
if [ $rc = 0 ] && grep -q '^PASS' <<<"$out" && ! grep -q '^FAIL' <<<"$out"; then
	cache_put "$key" <<<"$out"
fi
exit $rc
