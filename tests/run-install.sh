#!/bin/sh
# Installation: `make install` into a temporary prefix, then use it as a user would - the
# installed binary from another directory (data found next to it, and through the prefix
# compiled in when the binary is copied elsewhere), a C program built against the installed
# header and library with pkg-config, the man page - and `list` failing when it finds no data.
# usage: sh tests/run-install.sh [BIN]   (BIN: the build's binary, for the "no data" case)
set -u
bin=${1:-build/kitsune}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL install: $*"; fail=$((fail + 1)); }
here=$(pwd)
unset KITSUNE_HOME
prefix=$tmp/prefix
if ! make --no-print-directory -s install PREFIX="$prefix" >"$tmp/log" 2>&1; then
    bad "make install failed: $(cat "$tmp/log")"
    echo "install: $pass passed, $fail failed"; exit 1
fi
for f in bin/kitsune share/kitsune/hw/a100.json share/kitsune/workloads/nerf.json \
    share/kitsune/workloads/models/llama3-8b.json share/kitsune/workloads/models/mixtral-8x7b.json \
    share/kitsune/workloads/blocks/mixtral-8x7b-layer.json \
    include/kitsune/kitsune.h include/kitsune/model/run.h lib/libkitsune.a \
    lib/pkgconfig/kitsune.pc share/man/man1/kitsune.1; do
    [ -s "$prefix/$f" ] && ok || bad "$f not installed"
done
# the installed binary, run from elsewhere: data next to it (../share/kitsune)
mkdir -p "$tmp/elsewhere"
cd "$tmp/elsewhere" || exit 1
"$prefix/bin/kitsune" list >"$tmp/list" 2>&1 && grep -q '^  a100 ' "$tmp/list" && grep -q '^  nerf ' "$tmp/list" &&
    ok || bad "installed list: $(cat "$tmp/list")"
"$prefix/bin/kitsune" compare --hw a100 --workload nerf --format csv >"$tmp/cmp.csv" 2>"$tmp/err" &&
    ok || bad "installed compare: $(cat "$tmp/err")"
# a copy of the installed binary finds the data through the prefix compiled into it
cp "$prefix/bin/kitsune" "$tmp/elsewhere/kitsune"
./kitsune predict --hw h100 --workload mgn >/dev/null 2>"$tmp/err" && ok || bad "copied binary: $(cat "$tmp/err")"
# a whole model whose repeated block lives in workloads/blocks/
./kitsune predict --hw h200 --workload mixtral-8x7b --exec bsp >/dev/null 2>"$tmp/err" && ok ||
    bad "installed mixtral-8x7b: $(cat "$tmp/err")"
# a C program against the installed header and library, through pkg-config
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
if cc $(pkg-config --cflags kitsune) "$here/tests/data/install/use-api.c" \
    $(pkg-config --libs kitsune) -o "$tmp/use-api" 2>"$tmp/err"; then
    ok
    "$tmp/use-api" "$prefix/share/kitsune/hw/a100.json" "$prefix/share/kitsune/workloads/nerf.json" \
        >"$tmp/api.out" 2>"$tmp/err" && ok || bad "use-api: $(cat "$tmp/err")"
    want=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)c[$i]=i;next} $c["exec"]=="bsp"||$c["exec"]=="kitsune"{print $c["exec"], $c["time_s"]}' "$tmp/cmp.csv")
    [ "$(cat "$tmp/api.out")" = "$want" ] && ok || bad "use-api prints '$(cat "$tmp/api.out")', compare '$want'"
else
    bad "cannot build against the installed library: $(cat "$tmp/err")"
fi
# the man page renders without warnings and has every command
if command -v groff >/dev/null 2>&1; then
    w=$(groff -man -Tutf8 -ww -z "$prefix/share/man/man1/kitsune.1" 2>&1)
    [ -z "$w" ] && ok || bad "man page: $w"
fi
for c in predict compare map sweep validate info list hw; do
    grep -q "^\.SH \"KITSUNE $(echo $c | tr a-z A-Z)\"" "$prefix/share/man/man1/kitsune.1" && ok || bad "man page lacks $c"
done
grep -q KITSUNE_HOME "$prefix/share/man/man1/kitsune.1" && ok || bad "man page lacks KITSUNE_HOME"
# no data anywhere: list fails (exit 2) and says where it looked
cp "$here/$bin" "$tmp/elsewhere/bare"
./bare list >/dev/null 2>"$tmp/err"
st=$?
[ "$st" = 2 ] && grep -q 'no hardware files in .*set KITSUNE_HOME' "$tmp/err" && ok ||
    bad "list without data: exit $st, $(cat "$tmp/err")"
mkdir -p "$tmp/onlyhw/hw"
cp "$here/hw/a100.json" "$tmp/onlyhw/hw/"
KITSUNE_HOME=$tmp/onlyhw ./bare list >/dev/null 2>"$tmp/err"
st=$?
[ "$st" = 2 ] && grep -q 'no workload files in' "$tmp/err" && ok || bad "list without workloads: exit $st"
cd "$here" || exit 1
echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
