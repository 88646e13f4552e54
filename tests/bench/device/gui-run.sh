#!/bin/bash
# On the device machine (docs/grid-view.md, "On a machine with a GPU"):
#   call 1, carrying the folder of partA.tar.xz as A:  mkdir -p /tmp/g && tar -C /tmp/g -xJf A/partA.tar.xz
#   call 2, carrying .gl (the device tool's loader packages) and the folder
#   of partB.tar.xz and this script as B:                bash B/gui-run.sh B
# HIDES="-;LoomPlot;LoomPlot,LoomBoundaryView" runs bench-responsive once per
# entry with those widget types hidden instead of the usual set; WRAP is a
# command put before it (a profiler).
# GL goes through NVIDIA's GLX (__GLX_VENDOR_LIBRARY_NAME=nvidia), the X server
# is the carried Xvfb.
D=${1:?the folder holding partB.tar.xz}
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
G=/tmp/g
test -f $G/dri/swrast_dri.so || { echo 'part A is missing: the machine is a fresh one'; exit 3; }
tar -C $G -xJf "$D"/partB.tar.xz
cp $G/bin/xkbcomp /usr/bin/
mkdir -p /usr/share/X11 /usr/lib/x86_64-linux-gnu/dri
rm -rf /usr/share/X11/xkb
cp -r $G/share/xkb /usr/share/X11/xkb
cp $G/dri/swrast_dri.so /usr/lib/x86_64-linux-gnu/dri/
NV=$(dirname "$(find / -name 'libGLX_nvidia.so.0' -not -path '/proc/*' 2>/dev/null | head -1)")
nproc
nvidia-smi -L
export LD_LIBRARY_PATH=$G/lib:$NV LIBGL_DRIVERS_PATH=$G/dri XDG_RUNTIME_DIR=/tmp/xdg
mkdir -p /tmp/xdg && chmod 700 /tmp/xdg
pkill -f "Xvfb :99" 2>/dev/null; sleep 0.5
$G/bin/Xvfb :99 -screen 0 ${SCREEN:-1600x1000}x24 +extension GLX -nolisten tcp >/tmp/xvfb.log 2>&1 &
sleep 3
export DISPLAY=:99 FONTCONFIG_FILE=$G/share/fonts.conf GSETTINGS_SCHEMA_DIR=$G/schemas GSETTINGS_BACKEND=memory
export GTK_A11Y=none GDK_DEBUG=gl-glx __GLX_VENDOR_LIBRARY_NAME=${GLX_VENDOR:-nvidia}
cd $G/t/tests/bench
if [ -n "${HIDES:-}" ]; then
  # HIDES="A;B,C": one bench-responsive run per entry, each hiding those
  # widget types (BENCH_HIDE), to tell what each costs; "-" hides nothing.
  IFS=';' read -ra runs <<<"$HIDES"
  for h in "${runs[@]}"; do
    [ "$h" = - ] && h=
    echo "--- bench-responsive, heatmap ${BENCH_HEATMAP:-activation-rms}, hiding '${h}'"
    BENCH_HIDE=$h BENCH_SECONDS=${SECS:-12} timeout 150 ${WRAP:-} ./bench-responsive 2>&1 | grep -v -i "icon\|theme"
  done
  exit 0
fi
echo "--- bench-gridview, heatmap updates every frame"
BENCH_HEATMAP=1 timeout 100 ./bench-gridview 400 2>&1 | grep -v -i "icon\|theme"
for heatmap in activation-rms none; do
  echo "--- bench-responsive, heatmap $heatmap"
  BENCH_HEATMAP=$heatmap BENCH_SECONDS=${SECS:-12} timeout 150 ./bench-responsive 2>&1 | grep -v -i "icon\|theme"
done
