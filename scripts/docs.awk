# docs.awk: one Markdown file with its example blocks re-run (scripts/docs.sh drives it).
# -v tmp=DIR (scratch) -v file=NAME (for messages). Writes the regenerated file to stdout; exits
# 2 when a docs-load block does not load.
function run(cmd, err,   f, c, line) {
    f = tmp "/cmd.sh"
    printf "%s\n", cmd > f
    close(f)
    c = "sh " f (err ? " 2>&1" : " 2>" tmp "/stderr")
    nout = 0
    while ((c | getline line) > 0)
        out[++nout] = line
    close(c)
}
function emit(   i) { for (i = 1; i <= nout; i++) print (out[i] == "" ? "" : indent out[i]) }
function load(kind,   f, c, line, msg) {
    f = tmp "/block.json"
    close(f)
    c = (kind == "hw" ? "build/kitsune predict --hw " f " --workload tests/data/tiny.json" \
                      : "build/kitsune info --workload " f) " >/dev/null 2>&1 || echo FAILED"
    msg = ""
    while ((c | getline line) > 0) msg = line
    close(c)
    if (msg == "FAILED") {
        printf "docs: %s:%d: the %s example does not load: ", file, start, kind > "/dev/stderr"
        system("sh -c '" (kind == "hw" ? "build/kitsune predict --hw " f " --workload tests/data/tiny.json" \
                                        : "build/kitsune info --workload " f) " 2>&1 >/dev/null' >&2")
        bad = 1
    }
}
BEGIN { fence = 0; ex = 0; gen = 0; pend = "" }
# a generated region: <!-- docs: COMMAND --> ... <!-- /docs -->
!fence && /^<!-- docs: .* -->$/ {
    print
    cmd = $0; sub(/^<!-- docs: /, "", cmd); sub(/ -->$/, "", cmd)
    indent = ""; run(cmd, 0); emit(); gen = 1; next
}
gen && /^<!-- \/docs -->$/ { gen = 0; print; next }
gen { next }
!fence && /^<!-- docs-load: (hw|workload) -->$/ { pend = $0; sub(/^<!-- docs-load: /, "", pend); sub(/ -->$/, "", pend); print; next }
/^ *```/ {
    if (!fence) {
        fence = 1; first = 1; start = NR; print
        indent = $0; sub(/```.*/, "", indent)   # a block inside a list item is indented
        if (pend != "") { loading = pend; pend = ""; printf "" > (tmp "/block.json") }
        next
    }
    fence = 0; ex = 0
    if (loading != "") { load(loading); loading = "" }
    print; next
}
fence && loading != "" {
    line = $0; sub(/[ \t]+\/\/.*$/, "", line)   # the comments of a document, not of JSON
    print line > (tmp "/block.json")
    print; next
}
# an example: "$ COMMAND" lines, each followed by its output (stdout and stderr)
fence && (first || ex) && substr($0, 1, length(indent) + 2) == indent "$ " {
    first = 0; ex = 1; print
    run(substr($0, length(indent) + 3), 1); emit(); next
}
fence && ex { next }
{ first = 0; print }
END {
    if (fence) { printf "docs: %s:%d: unclosed code block\n", file, start > "/dev/stderr"; bad = 1 }
    if (gen) { printf "docs: %s: <!-- docs: --> without <!-- /docs -->\n", file > "/dev/stderr"; bad = 1 }
    exit bad ? 2 : 0
}
