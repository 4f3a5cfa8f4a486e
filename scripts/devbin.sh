# Sourced by the scripts that run on the GPU machine (device-suite.sh, gpu-sanitize.sh,
# gpu-profile.sh), which set `repo` first: the staged binaries' archive unpacked once per
# machine, and the logs' folder.
#
#   unpack_devbin ARCHIVE DIR WITNESS   unpacks ARCHIVE into DIR unless DIR/WITNESS exists
#   devbin_open WITNESS                 sets out (the logs: $OUT, or ./device-out) and bin
#                                       (scripts/build-device.sh's binaries, unpacked), and
#                                       packs the logs when the script exits
unpack_devbin() {
    local archive="$1" dir="$2" witness="$3"
    [ -x "$dir/$witness" ] && return 0
    mkdir -p "$dir"
    # tar reads xz through xz(1); Python's lzma where that is missing.
    tar -xf "$archive" -C "$dir" 2>/dev/null ||
        python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
            "$archive" "$dir"
}

devbin_open() {
    out="${OUT:-$repo/device-out}"
    mkdir -p "$out"
    bin=/tmp/cuzk
    unpack_devbin "$repo/.devbin/bin.txz" "$bin" "$1"
    trap pack_logs EXIT
}

# The device tool brings back at most eight files from $OUT, so the logs go back as one
# archive (a call cut off by its time limit leaves them loose: the first eight come back).
pack_logs() {
    (cd "$out" && shopt -s nullglob && files=(*) && [ ${#files[@]} -gt 0 ] &&
        tar -cJf logs.txz --remove-files -- "${files[@]}")
}
