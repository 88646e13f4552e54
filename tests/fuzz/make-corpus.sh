#!/usr/bin/env bash
# Regenerates the seed corpora of the fuzz targets: tests/fuzz/make-corpus.sh PATH/TO/loom
# (the committed seeds were made with it; libFuzzer mutates from them).
set -euo pipefail
loom=$(realpath "$1")
cd "$(dirname "$0")/corpus"
mkdir -p json-model safetensors csv npy
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for e in xor spiral hop moe cnn; do
  "$loom" new --example "$e" --out "json-model/$e.loom.json" --force >/dev/null
  "$loom" convert "json-model/$e.loom.json" --to safetensors --out "safetensors/$e.safetensors" >/dev/null
done
for d in int4 ternary fp8-e4m3 uint2; do
  "$loom" convert json-model/xor.loom.json --to json --dtype "$d" --out "json-model/xor-$d.loom.json" >/dev/null
  "$loom" convert json-model/xor.loom.json --to safetensors --dtype "$d" --out "safetensors/xor-$d.safetensors" >/dev/null
done
printf 'x1,x2,label\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n' >csv/header.csv
printf '0.5;1e-3;2\n-1;3.25;0\n7;8;1\n' >csv/semicolon.csv
printf '"a","b, c",y\n1,"2",0\n3,4,1\n\n5,6,0\n' >csv/quoted.csv
printf '1\t2\t3\n4\t5\t6\n' >csv/tab.csv
printf 'x,y\n1,2\n3\n' >csv/ragged.csv
printf '1,2,0\n3,4,1\n' | gzip -9n >csv/gzip.csv.gz
/usr/bin/python3 - <<'PY'
import struct
def npy(name, descr, shape, payload, major=1):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else ""))
    hl = 4 if major > 1 else 2
    pad = (64 - (6 + 2 + hl + len(d) + 1) % 64) % 64
    d = d + " " * pad + "\n"
    head = b"\x93NUMPY" + bytes([major, 0]) + (struct.pack("<I", len(d)) if major > 1 else struct.pack("<H", len(d)))
    open("npy/" + name, "wb").write(head + d.encode("latin1") + payload)
npy("f4.npy", "<f4", [2, 3], struct.pack("<6f", 1, -2, 3.5, 0, 1e-3, 7))
npy("f8.npy", "<f8", [3], struct.pack("<3d", 1, 2, 3))
npy("i4.npy", "<i4", [2, 2], struct.pack("<4i", 1, -2, 3, 4))
npy("i8.npy", "<i8", [1, 1, 2], struct.pack("<2q", 5, -6))
npy("v2.npy", "<f4", [2], struct.pack("<2f", 1, 2), major=2)
npy("v3.npy", "<f4", [1], struct.pack("<f", 9), major=3)
npy("scalar.npy", "<f4", [], struct.pack("<f", 4))
PY
