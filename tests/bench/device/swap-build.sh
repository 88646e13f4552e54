#!/bin/bash
# The WRAP of gui-run.sh for comparing builds on the device machine: puts a
# build's bench-responsive, libloom.so.0 and compiled schemas in place of
# the bundle's before each run. $NEWDIR holds bench-responsive.SUFFIX for
# each build, libloom.so.0 (or libloom.so.0.SUFFIX per build, where the
# engines differ) and gschemas.compiled. $VARIANTS="A B" takes
# the suffixes round robin, one per run (HIDES="-;-;-;-" runs four: A B A B,
# builds alternated in one call, as the machine's load drifts); $VARIANT
# names a single one. PERF=N records the run with perf (from
# $NEWDIR/../perf.tgz, a bench-responsive.debug beside the others) and
# prints the main thread's N heaviest symbols.
#
#   WRAP="bash $PWD/tests/bench/device/swap-build.sh" VARIANTS=".old .new" \
#     NEWDIR=$PWD/DIR HIDES="-;-;-;-" bash tests/bench/device/gui-run.sh B
set -u
N=${NEWDIR:?the folder of the builds}
if [ -n "${VARIANTS:-}" ]; then
  count=/tmp/swap-build.count
  i=$(cat $count 2>/dev/null || echo 0)
  echo $((i + 1)) >$count
  read -ra all <<<"$VARIANTS"
  v=${all[$((i % ${#all[@]}))]}
else
  v=${VARIANT:-}
fi
echo "=== variant $v"
cp "$N"/bench-responsive"$v" "$1"
# A build whose engine differs brings its own libloom.so.0SUFFIX.
if [ -f "$N"/libloom.so.0"$v" ]; then
  cp "$N"/libloom.so.0"$v" /tmp/g/t/engine/libloom.so.0
else
  cp "$N"/libloom.so.0 /tmp/g/t/engine/libloom.so.0
fi
[ -f "$N"/gschemas.compiled ] && cp "$N"/gschemas.compiled /tmp/g/schemas/
if [ -z "${PERF:-}" ]; then
  exec "$@"
fi
mkdir -p /tmp/pf && tar -C /tmp/pf -xzf "$N"/../perf.tgz && rm -f /tmp/pf/lib/libloom.so.0
export LD_LIBRARY_PATH=/tmp/pf/lib:${LD_LIBRARY_PATH:-}
cp "$N"/bench-responsive.debug "$1" 2>/dev/null
/tmp/pf/bin/perf record -F 300 --call-graph dwarf,8192 -o /tmp/perf.data "$@" 2>&1 |
  grep -E "frames per|stall|paint|CPU in|worker /|perf record"
/tmp/pf/bin/perf report -i /tmp/perf.data --comm bench-responsiv -g none --children --sort sym 2>/dev/null |
  grep -v "^#" | grep -v "^$" | head -"$PERF"
