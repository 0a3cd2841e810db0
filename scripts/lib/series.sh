# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# scripts/lib.sh, part series: the series: its postings and patch files.
# Sourced by scripts/lib.sh only.

# ---------------------------------------------------------------- series
#
# series lists the postings in the order they apply, each a "[name]"
# line followed by its patch files (patches/name/NNNN-*.patch, next to
# the posting's 0000-cover-letter.patch).

# "posting<TAB>file" for every patch, in order.
series_entries() {
	awk '/^[[:space:]]*(#|$)/ { next }
		/^\[[a-z0-9-]+\]$/ { p = substr($0, 2, length($0) - 2); next }
		{ if (p == "") { print "series: patch before any [posting] line: " $0 > "/dev/stderr"; exit 1 }
		  printf "%s\t%s\n", p, $1 }' "$KSERIES_SERIES"
}

# The patch files, relative to patches/, in order.
series_patches() {
	series_entries | awk -F'\t' '{ print $1 "/" $2 }'
}

# The postings, in order.
series_postings() {
	series_entries | cut -f1 | awk '!seen[$0]++'
}

# The patch files of one posting, relative to patches/.
posting_patches() {
	series_entries | awk -F'\t' -v p="$1" '$1 == p { print $1 "/" $2 }'
}

cover_letter() {
	printf '%s\n' "$KSERIES_PATCHES/$1/0000-cover-letter.patch"
}

# Postings as scripts/postings.conf defines them: "name<TAB>prefix<TAB>
# regex" lines, in posting order.  A commit goes to the first posting
# whose regex matches the start of its subject.
postings_conf() {
	sed -n -E 's/^([a-z0-9-]+)[[:space:]]+\[([^]]+)\][[:space:]]+(.*[^[:space:]])[[:space:]]*$/\1\t\2\t\3/p' \
		"$KSERIES_POSTINGS_CONF"
}

# The posting of a subject line, or nothing (status 1).
posting_of_subject() {
	local subject=$1 name prefix re
	while IFS=$'\t' read -r name prefix re; do
		if grep -qE "^($re)" <<<"$subject"; then
			printf '%s\n' "$name"
			return 0
		fi
	done < <(postings_conf)
	return 1
}

# The subject prefix of a posting ("PATCH", "PATCH RFT").
posting_prefix() {
	postings_conf | awk -F'\t' -v p="$1" '$1 == p { print $2 }'
}
