#!/usr/bin/env python3
"""Checks an exported ONNX model in ONNX Runtime against `loom forward`.

    tools/onnx-parity.py MODEL.onnx X.npy EXPECTED.npy [--rtol 1e-5]

X is the batch given to `loom forward MODEL --input X.npy --output
EXPECTED.npy` (so a single sample without its batch dimension gets one
added). Prints the runtime's version, the providers, the shapes and the
largest error relative to the output's scale (as tests/io/test-onnx.py
measures it); exits 1 when it exceeds --rtol. ONNX Runtime is not a Debian
package: run this where it is installed (the device machine), e.g. for every
example:

    for e in $(loom new --list | awk '/^[a-z]/{print $1}'); do
      loom new --example $e --out $e.json && loom convert $e.json --to onnx --out $e.onnx || continue
      python3 -c "import numpy as n, json; m=json.load(open('$e.json')); \\
        n.save('$e.x.npy', n.random.default_rng(1).standard_normal([4]+m['input_shape']).astype('f4'))"
      loom forward $e.json --input $e.x.npy --output $e.y.npy && tools/onnx-parity.py $e.onnx $e.x.npy $e.y.npy
    done
"""
import argparse
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("x")
    ap.add_argument("expected")
    ap.add_argument("--rtol", type=float, default=1e-5)
    a = ap.parse_args()
    try:
        import onnxruntime as ort
    except ImportError:
        print("onnxruntime is not installed (pip install onnxruntime, or run this on the device machine)",
              file=sys.stderr)
        return 77
    sess = ort.InferenceSession(a.model, providers=ort.get_available_providers())
    inp = sess.get_inputs()[0]
    x = np.load(a.x).astype(np.float32)
    rank = len(inp.shape)
    if x.ndim == rank - 1:
        x = x[None]
    ref = np.load(a.expected).astype(np.float64)
    (got,) = sess.run(None, {inp.name: x})
    got = got.reshape(ref.shape) if got.size == ref.size and got.shape[0] == 1 and ref.ndim == got.ndim - 1 else got
    if got.shape != ref.shape:
        print(f"{a.model}: shape {got.shape} from ONNX Runtime, {ref.shape} expected", file=sys.stderr)
        return 1
    scale = max(float(np.abs(ref).max()), 1e-30)
    err = float(np.abs(ref - got).max()) / scale
    ok = bool(np.isfinite(got).all()) and err <= a.rtol
    print(f"{a.model}: onnxruntime {ort.__version__} ({sess.get_providers()[0]}), output {list(got.shape)}, "
          f"max |ort - loom| / max |loom| = {err:.2e} (limit {a.rtol:.0e}) {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
