# Shared by tools/run and tools/test: install what is missing, configure, build.
# Sourced, not executed.

LOOM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Debian 12 packages the build, the tests and the workbench need.
LOOM_PACKAGES=(
  gcc pkg-config meson ninja-build gettext python3
  libglib2.0-dev libgtk-4-dev libadwaita-1-dev libjson-glib-dev libepoxy-dev
  libopenblas-dev zlib1g-dev
  desktop-file-utils appstream
  xvfb xauth libgl1-mesa-dri libxtst-dev fonts-dejavu-core
  clang-14 libclang-rt-14-dev
  libvulkan-dev glslc mesa-vulkan-drivers
  python3-onnx python3-torch
)

# The options of the main build directory, _build, for both scripts: with
# options of their own, running one after the other reconfigured _build and
# rebuilt all of it each time. No debug information: -g made the compiles
# about 1.6 times longer, and a failing test reports through its own
# messages (the sanitized build of tools/test keeps it for its reports).
LOOM_MAIN_BUILD_OPTIONS=(-Dwerror=true -Doptimization=2 -Ddebug=false)

loom_say() { printf '\033[1m==> [%4d s] %s\033[0m\n' "$SECONDS" "$*"; }

loom_install_missing() {
  local missing=()
  local p
  for p in "${LOOM_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$p")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  loom_say "Installing missing packages: ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then
      sudo=(sudo)
    else
      echo "Missing packages (${missing[*]}) and no sudo: install them as root, then run this again." >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q || true
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# loom_build DIR [meson options...]: configure once, then build incrementally.
loom_build() {
  local dir=$1
  shift
  if [ ! -f "$LOOM_ROOT/$dir/build.ninja" ]; then
    loom_say "Configuring $dir"
    meson setup "$LOOM_ROOT/$dir" "$LOOM_ROOT" "$@"
  elif [ "$(cat "$LOOM_ROOT/$dir/.loom-options" 2>/dev/null)" != "$*" ]; then
    # The options apply even when the other script configured the directory
    # first (tools/run builds without -Dwerror); unchanged options cost nothing.
    loom_say "Reconfiguring $dir: $*"
    meson configure "$LOOM_ROOT/$dir" "$@" >/dev/null
  fi
  printf '%s' "$*" >"$LOOM_ROOT/$dir/.loom-options"
  loom_say "Building $dir"
  ninja -C "$LOOM_ROOT/$dir"
}
