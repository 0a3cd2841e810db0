#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage mail: the postings as the lists would receive them, proved to
# apply (scripts/send.sh --check: b4 prep/send under a test identity, the
# refusal of the placeholder identity, git am and b4 am of each posting's
# mails alone on a fresh base, and of all of them in order).
. "$(dirname "$0")/../lib.sh"

exec bash "$KSERIES_REPO/scripts/send.sh" --check
