#!/bin/sh
# fuzz.sh PKG TARGET: fuzz TARGET in the package PKG for $FUZZTIME (default
# 30s), and fail, before fuzzing, when PKG has no fuzz target named TARGET:
# `go test -fuzz` with a pattern that matches nothing prints "no fuzz tests
# to fuzz" and passes. `make fuzz` runs one line of it for each target.
#
#   scripts/fuzz.sh ./devices/ FuzzParseBuild
set -eu
[ $# -eq 2 ] || { echo "usage: $0 PKG TARGET" >&2; exit 2; }
pkg=$1
target=$2
go=${GO:-go}
case $target in Fuzz*) ;; *) echo "$0: $target is not a fuzz target's name (FuzzXxx)" >&2; exit 2 ;; esac
listed=$("$go" test -list "^$target\$" "$pkg")
if ! printf '%s\n' "$listed" | grep -qx "$target"; then
	echo "$0: $pkg has no fuzz target $target (go test -list found none): fix the package or the name in the Makefile" >&2
	exit 1
fi
exec "$go" test -run '^$' -fuzz "^$target\$" -fuzztime "${FUZZTIME:-30s}" "$pkg"
