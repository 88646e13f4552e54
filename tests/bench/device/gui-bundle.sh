#!/bin/bash
# Packs the GUI benchmarks (bench-gridview, bench-responsive), their shared
# libraries, Xvfb, xkbcomp and Mesa's llvmpipe into two archives for a
# machine with a GPU but without a desktop stack (the device machine of
# docs/grid-view.md, "On a machine with a GPU"). Two archives, because one
# call to that machine carries at most 64 MiB: part A (LLVM, z3, ICU, the
# Mesa driver) goes first and stays in /tmp while the machine is warm, part B
# (everything else) and gui-run.sh with the second call.
#
#   meson setup BUILD -Dblas=disabled -Dvulkan=disabled && \
#     ninja -C BUILD tests/bench/bench-gridview tests/bench/bench-responsive data/gschemas.compiled
#   tests/bench/device/gui-bundle.sh BUILD OUTDIR
set -euo pipefail
B=$(realpath "$1")
OUT=$(realpath -m "$2")
R=$(mktemp -d)
trap 'rm -rf "$R"' EXIT
mkdir -p "$R"/t/tests/bench "$R"/t/engine "$R"/lib "$R"/dri "$R"/bin "$R"/share/fonts "$R"/schemas "$OUT"
cp "$B"/tests/bench/bench-responsive "$B"/tests/bench/bench-gridview "$R"/t/tests/bench/
cp -L "$B"/engine/libloom.so.0 "$R"/t/engine/
strip "$R"/t/tests/bench/* "$R"/t/engine/libloom.so.0
cp /usr/bin/Xvfb /usr/bin/xkbcomp "$R"/bin/
cp /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so "$R"/dri/
cp "$B"/data/gschemas.compiled "$R"/schemas/
# Every library the programs, Xvfb and the driver load, but the C library's
# own (the machine's are newer and must stay in charge).
for f in "$R"/t/tests/bench/* /usr/bin/Xvfb /usr/bin/xkbcomp "$R"/dri/swrast_dri.so \
         /usr/lib/x86_64-linux-gnu/libGLX_mesa.so.0 /usr/lib/x86_64-linux-gnu/libEGL_mesa.so.0; do
  LD_LIBRARY_PATH="$R"/t/engine ldd "$f" | awk '{print $3}' | grep '^/' || true
  case $f in *libG*) echo "$f" ;; esac
done | sort -u | grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux-x86-64|libstdc\+\+|libgcc_s)\.so' |
  grep -v "$R" | while read -r l; do cp -L "$l" "$R"/lib/; done
cp -r /usr/share/X11/xkb "$R"/share/xkb
cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf "$R"/share/fonts/
cat >"$R"/share/fonts.conf <<'X'
<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir>/tmp/g/share/fonts</dir><cachedir>/tmp/g/fc-cache</cachedir></fontconfig>
X
(cd "$R" && tar -cf - lib/libLLVM* lib/libz3* lib/libicu* dri | xz -7 -T2 >"$OUT"/partA.tar.xz)
(cd "$R" && tar -cf - --exclude='lib/libLLVM*' --exclude='lib/libz3*' --exclude='lib/libicu*' --exclude=dri . |
  xz -7 -T2 >"$OUT"/partB.tar.xz)
ls -la "$OUT"
