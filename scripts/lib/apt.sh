# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# scripts/lib.sh, part apt: Debian apt with a private state.
# Sourced by scripts/lib.sh only.

# ----------------------------------------------------------- Debian apt
#
# Downloads from the machine's Debian archive with a private apt state in
# $KSERIES_DL: the system's apt configuration is not touched.
KSERIES_DL=$KSERIES_CACHE/dl

# The URI of the machine's Debian archive, from its apt sources (deb822
# or one-line format), skipping security and third-party archives.
debian_archive_uri() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk -v RS= '
			/(^|\n)Types:[^\n]*deb/ && /(^|\n)Suites:[^\n]*(buster|bullseye|bookworm|trixie|forky|sid|stable|testing|unstable)/ &&
			!/(^|\n)Suites:[^\n]*-security/ && /debian-archive-keyring|(^|\n)URIs:[^\n]*\/debian\/?(\n|$)/ {
				if (match($0, /(^|\n)URIs:[ \t]*[^ \t\n]+/)) {
					s = substr($0, RSTART, RLENGTH); sub(/^\n?URIs:[ \t]*/, "", s); print s; exit
				}
			}' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk '$1 == "deb" {
			i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			if ($(i + 1) !~ /-security/ && $(i + 1) ~ /^(buster|bullseye|bookworm|trixie|forky|sid|stable|testing|unstable)/) { print $i; exit }
		}' "$f"
	done
}

# apt with the private state in $KSERIES_DL: apt_private TYPES CMD ARGS...
# (TYPES "deb" or "deb-src").
apt_private() {
	local cmd=$2 dir=$KSERIES_DL/apt-${1}
	apt_private_sources "$1"
	shift 2
	"$cmd" -o Dir::Etc::SourceList="$dir/sources.list" \
		-o Dir::Etc::SourceParts="$dir/sources.list.d" \
		-o Dir::State::Lists="$dir/lists" \
		-o Dir::Cache="$dir/cache" \
		-o Debug::NoLocking=1 \
		${KSERIES_APT_SANDBOX:+-o APT::Sandbox::User="$KSERIES_APT_SANDBOX"} "$@"
}

# The private source list of TYPES, for the base's suite.
apt_private_sources() {
	local types=$1 uri dir=$KSERIES_DL/apt-${1} want
	uri=$(debian_archive_uri | head -n 1)
	[ -n "$uri" ] || die "no Debian archive found in the apt sources of this machine"
	want=$(printf 'Types: %s\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
		"$types" "$uri" "$BASE_SUITE" /usr/share/keyrings/debian-archive-keyring.gpg)
	# Written again when the base's suite or the machine's archive
	# changes; the lists of another source are dropped with the stamp.
	if [ "$(cat "$dir/sources.list.d/kseries.sources" 2>/dev/null)" != "$want" ]; then
		rm -rf "$dir"
		mkdir -p "$dir/sources.list.d" "$dir/lists/partial" "$dir/cache/archives/partial"
		: >"$dir/sources.list"
		printf '%s\n' "$want" >"$dir/sources.list.d/kseries.sources"
	fi
}
[ "$(id -u)" -ne 0 ] || KSERIES_APT_SANDBOX=root

# apt-get update of the private list, at most once an hour.
apt_private_update() {
	local stamp=$KSERIES_DL/apt-$1/updated
	apt_private_sources "$1"
	[ -n "$(find "$stamp" -mmin -60 2>/dev/null)" ] && return 0
	apt_private "$1" apt-get -qq update >&2 || die "apt-get update of $BASE_SUITE ($1) failed"
	touch "$stamp"
}
