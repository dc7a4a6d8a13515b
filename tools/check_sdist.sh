#!/usr/bin/env bash
# The sdist carries every tracked file a build or a test could need: all of
# them but the CI configuration (.ci/, .github/) and .gitignore. A wheel built
# from it sees only what it carries; checking the list costs nothing, where
# compiling it again would cost a full build (CI builds the wheel from the
# checkout, reusing the objects its install compiled).
#
#   tools/check_sdist.sh SDIST
set -euo pipefail
[[ $# == 1 && -f $1 && $1 == *.tar.gz ]] || { echo "usage: $0 SDIST.tar.gz" >&2; exit 2; }
sdist=$(realpath "$1")
cd "$(dirname "$0")/.."
missing=$(comm -23 <(git ls-files | grep -vE '^(\.ci/|\.github/|\.gitignore$)' | sort) \
                   <(tar tzf "$sdist" | sed 's#^[^/]*/##' | grep -v '/$' | sort))
if [[ -n $missing ]]; then
    echo "tracked files missing from $(basename "$sdist") (MANIFEST.in):" >&2
    echo "$missing" >&2
    exit 1
fi
echo "== $(basename "$sdist"): all $(git ls-files | grep -cvE '^(\.ci/|\.github/|\.gitignore$)') tracked files but .ci/, .github/ and .gitignore"
