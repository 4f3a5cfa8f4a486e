# Sourced by the scripts that run on the GPU machine (device-suite.sh, gpu-sanitize.sh,
# gpu-profile.sh): the staged binaries' archive unpacked once per machine.
#
#   unpack_devbin ARCHIVE DIR WITNESS   unpacks ARCHIVE into DIR unless DIR/WITNESS exists
unpack_devbin() {
    local archive="$1" dir="$2" witness="$3"
    [ -x "$dir/$witness" ] && return 0
    mkdir -p "$dir"
    # tar reads xz through xz(1); Python's lzma where that is missing.
    tar -xf "$archive" -C "$dir" 2>/dev/null ||
        python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
            "$archive" "$dir"
}
