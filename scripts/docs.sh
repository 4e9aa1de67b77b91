#!/bin/sh
# docs.sh --check|--update [FILE...]: the examples in the documentation are real output.
# In README.md and docs/*.md (default), run from the repository root with KITSUNE_HOME there:
#   - a fenced block whose first line is "$ COMMAND" is an example: the lines after it are
#     COMMAND's output (stdout and stderr); another "$ " line starts the next command;
#   - <!-- docs: COMMAND --> ... <!-- /docs --> is a generated region: COMMAND's stdout
#     (the results table, geomeans);
#   - <!-- docs-load: hw --> or <!-- docs-load: workload --> before a fenced block: the block
#     (without its // comments) must load as a GPU or a workload.
# --update (make docs) rewrites the files with the current output; --check (make check) prints
# the difference and exits 1 when a file is out of date, 2 when an example does not load.
# After a model change: make docs, review the diff, commit.
set -u
mode=${1:-}
case $mode in --check | --update) shift ;; *) echo "usage: sh scripts/docs.sh --check|--update [FILE...]" >&2; exit 2 ;; esac
[ $# -eq 0 ] && set -- README.md docs/*.md
[ -x build/kitsune ] || { echo "docs: build/kitsune missing (make first)" >&2; exit 2; }
KITSUNE_HOME=$(pwd); export KITSUNE_HOME
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0 stale=0
for f in "$@"; do
    awk -v tmp="$tmp" -v file="$f" -f scripts/docs.awk "$f" >"$tmp/new" || status=2
    if ! cmp -s "$f" "$tmp/new"; then
        if [ "$mode" = --update ]; then
            cp "$tmp/new" "$f"
            echo "docs: updated $f"
        else
            echo "docs: $f is out of date (run make docs, review the diff, commit):"
            diff -u "$f" "$tmp/new" | head -40
            stale=1
        fi
    fi
done
[ $status -ne 0 ] && exit $status
[ $stale -ne 0 ] && exit 1
[ "$mode" = --check ] && echo "docs: the examples in $# files match the real output"
exit 0
