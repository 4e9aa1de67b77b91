#!/bin/sh
# man.sh [BIN]: the kitsune(1) man page on stdout, made from the --help texts (`kitsune --help`
# and `kitsune CMD --help` for every command), so the two never disagree.
set -eu
bin=${1:-build/kitsune}
version=$("$bin" --version | sed 's/^kitsune //')
# troff: escape backslashes; a line starting with . or ' would be a request
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
cat <<EOF2
.TH KITSUNE 1 "" "kitsune $version" "User Commands"
.SH NAME
kitsune \- predict deep-learning workloads on GPUs under bulk-synchronous, vertical-fusion and
Kitsune spatial-pipeline execution
.SH SYNOPSIS
.B kitsune
.I command
[\fIoptions\fR]
.SH DESCRIPTION
.nf
EOF2
"$bin" --help | esc
echo ".fi"
for cmd in $("$bin" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p'); do
    echo ".SH \"KITSUNE $(echo "$cmd" | tr a-z A-Z)\""
    echo ".nf"
    "$bin" "$cmd" --help | esc
    echo ".fi"
done
cat <<EOF2
.SH ENVIRONMENT
.TP
.B KITSUNE_HOME
The directory that holds \fBhw/\fR and \fBworkloads/\fR. Without it, kitsune looks next to its
binary (\fI../share/kitsune\fR when installed), then in the install prefix it was built for,
then in the current directory.
.SH FILES
.TP
.I PREFIX/share/kitsune/hw/*.json
GPU descriptions (docs/formats.md in the source tree).
.TP
.I PREFIX/share/kitsune/workloads/*.json
Workload graphs.
.SH EXIT STATUS
0 success; 1 internal failure; 2 bad input (one line on stderr names the file, the JSON path
and the reason); 3 validate's --max-error exceeded.
EOF2
