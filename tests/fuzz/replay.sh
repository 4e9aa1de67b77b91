#!/bin/sh
# Replay the fuzz corpus through each harness (tests/fuzz/corpus/NAME/*): every input must run
# without a crash, a sanitizer report or a broken invariant.
# usage: sh tests/fuzz/replay.sh DIR NAME...    (DIR holds replay_NAME)
set -u
dir=$1; shift
KITSUNE_HOME=$(pwd); export KITSUNE_HOME
pass=0; fail=0
for name in "$@"; do
    if out=$("$dir/replay_$name" "tests/fuzz/corpus/$name" 2>&1); then
        pass=$((pass + 1)); echo "fuzz corpus $name: $out"
    else
        fail=$((fail + 1)); echo "FAIL fuzz corpus $name:"; echo "$out" | tail -20
    fi
done
echo "fuzz replay: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
