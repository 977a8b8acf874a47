# shellcheck shell=bash
# Host setup shared by tests/run and tests/demo: Debian packages, then the
# meson build directories. Sourced from the repository root.

# rsync: test-filter-rsync holds the --exclude/--include rules to rsync's own.
# python3-prometheus-client: test-prometheus-parse reads the metrics text with its parser.
# munge: test-lander decodes real credentials through a munged of its own.
HOST_PACKAGES=(meson ninja-build pkg-config gcc libibverbs-dev librdmacm-dev libsystemd-dev
        libevent-dev libinih-dev libxxhash-dev liburing-dev libsodium-dev libunistring-dev scdoc
        libfuse3-dev qemu-system-x86 qemu-utils mmdebstrap e2fsprogs python3 xxhash
        dpkg-dev debhelper systemd lintian zsh rsync python3-prometheus-client libmunge-dev munge)
# tests/run's fuzz step only: clang with libFuzzer's runtime (libclang-rt),
# and llvm-symbolizer (llvm) for the stacks in a crash report.
FUZZ_PACKAGES=(clang libclang-rt-dev llvm)

# host_say TEXT: a step of the run, with the seconds since it began.
host_say() { printf '==> [%4d s] %s\n' "$SECONDS" "$*" >&2; }

# host_install PACKAGE...: install whichever are missing (needs root then).
host_install() {
        local missing=() p
        for p in "$@"; do
                dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null \
                        | grep -q '^install ok installed$' || missing+=("$p")
        done
        ((${#missing[@]})) || return 0
        if [[ $(id -u) != 0 ]]; then
                host_say "missing packages: ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}"
                return 1
        fi
        host_say "installing ${missing[*]}"
        if ! compgen -G '/var/lib/apt/lists/*_Packages' >/dev/null; then
                apt-get update -q || return 1
        fi
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" && return 0
        # Stale lists: refresh once and retry.
        apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

host_packages() { host_install "${HOST_PACKAGES[@]}"; }
host_fuzz_packages() { host_install "${FUZZ_PACKAGES[@]}"; }

# host_configure DIR [meson options...]: set up DIR, or apply the options to
# an existing one.
host_configure() {
        local dir=$1
        shift
        if [[ -f $dir/build.ninja ]]; then
                meson configure "$dir" "$@" >/dev/null
        else
                host_say "meson setup $dir $*"
                meson setup "$dir" "$@"
        fi
}

# The tree installed into the testbed guest: a system prefix, as a package would.
host_build_main() {
        host_configure build --prefix=/usr --sysconfdir=/etc --localstatedir=/var -Dwerror=true &&
                meson compile -C build
}

# The unit tests' tree: ASan+UBSan. Its rdmaxferd and xferctl also run in the
# testbed guest (scenario 80-sanitizers), whose image has no libasan: gcc
# links the sanitizer runtimes into each program instead.
host_build_asan() {
        host_configure build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dwerror=true \
                "-Dc_link_args=-static-libasan -static-libubsan" &&
                meson compile -C build-asan
}

# The libFuzzer harnesses (tests/fuzz) with ASan+UBSan, and only what they
# need: the 'fuzz' alias builds the harnesses, their seeder and common/.
host_build_fuzz() {
        CC=clang host_configure build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
                -Dwerror=true &&
                ninja -C build-fuzz fuzz
}
