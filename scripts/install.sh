#!/bin/sh
# install.sh DESTDIR PREFIX BIN LIB CC CJSON_CFLAGS: what `make install` installs -
#   PREFIX/bin/kitsune
#   PREFIX/share/kitsune/hw/*.json, workloads/*.json, workloads/models/*.json, workloads/blocks/*.json (the data the binary finds)
#   PREFIX/include/kitsune/kitsune.h and the headers it includes (same layout as src/)
#   PREFIX/lib/libkitsune.a, PREFIX/lib/pkgconfig/kitsune.pc
#   PREFIX/share/man/man1/kitsune.1                       (from the --help texts: scripts/man.sh)
set -eu
destdir=$1 prefix=$2 bin=$3 lib=$4 cc=$5 cjson_cflags=$6
here=$(dirname "$0")
root=$here/..
case $prefix in /*) ;; *) echo "install: PREFIX must be an absolute path, got '$prefix'" >&2; exit 2 ;; esac
d=$destdir$prefix
version=$(sed -n 's/^#define KT_VERSION "\(.*\)"/\1/p' "$root/src/cli/cli.h")
mkdir -p "$d/bin" "$d/share/kitsune/hw" "$d/share/kitsune/workloads" "$d/include/kitsune" \
    "$d/lib/pkgconfig" "$d/share/man/man1"
install -m 755 "$bin" "$d/bin/kitsune"
install -m 644 "$root"/hw/*.json "$d/share/kitsune/hw/"
install -m 644 "$root"/workloads/*.json "$d/share/kitsune/workloads/"
mkdir -p "$d/share/kitsune/workloads/models"
install -m 644 "$root"/workloads/models/*.json "$d/share/kitsune/workloads/models/"
mkdir -p "$d/share/kitsune/workloads/blocks"
install -m 644 "$root"/workloads/blocks/*.json "$d/share/kitsune/workloads/blocks/"
install -m 644 "$lib" "$d/lib/libkitsune.a"
# the public header and every project header it includes, found by the compiler (-MM lists only
# non-system headers)
# shellcheck disable=SC2086
"$cc" $cjson_cflags -MM "$root/src/kitsune.h" | tr ' \\' '\n\n' | grep '\.h$' | while read -r h; do
    rel=${h#"$root"/src/}
    mkdir -p "$d/include/kitsune/$(dirname "$rel")"
    install -m 644 "$h" "$d/include/kitsune/$rel"
done
cat >"$d/lib/pkgconfig/kitsune.pc" <<PC
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include
datadir=\${prefix}/share/kitsune

Name: kitsune
Description: analytical GPU model of bulk-synchronous, vertical-fusion and spatial-pipeline execution
Version: $version
Requires: libcjson
Cflags: -I\${includedir}
Libs: -L\${libdir} -lkitsune -lglpk -lm -lpthread
PC
sh "$here/man.sh" "$bin" >"$d/share/man/man1/kitsune.1"
echo "install: kitsune $version in $d (bin, share/kitsune, include/kitsune, lib, share/man)"
