#!/usr/bin/python3
"""ONNX export, end to end through the CLI (TAP).

For every built-in example and every network onnx-nets writes: `loom
convert --to onnx`, onnx.checker (full check, with shape inference), the
graph computed by tests/io/onnx_eval.py (numpy/torch, independent of the
engine), compared with `loom forward` on the same random batch. Networks
the exporter cannot express must fail with an error naming the layer type
and slot (or the systolic execution), leaving an existing file as it
was. Exit 77 (skip) without python3-onnx.

    test-onnx.py LOOM ONNX_NETS EVAL_SCRIPT
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import onnx  # noqa: F401
except ImportError:
    print("1..0 # SKIP python3-onnx is missing")
    sys.exit(77)

RTOL = 1e-5
# Networks the exporter refuses, and what the error must say.
REFUSED = {
    "feedback": ["systolic"],
    "refused": ["gumbel_softmax", "(0,0,1,0)"],
}


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def sample_input(model_path, rng, batch):
    """A batch for the model's input shape; token indices for an embedding first layer."""
    with open(model_path) as f:
        m = json.load(f)
    shape = m["input_shape"]
    first = min(m["slots"], key=lambda s: s["at"])["layer"]
    if first["type"] == "embedding":
        return rng.integers(0, first["params"]["num_embeddings"], size=[batch] + shape).astype(np.float32)
    return rng.standard_normal([batch] + shape).astype(np.float32)


def main(argv):
    loom, nets_exe, evaluator = argv[1:4]
    # The evaluator runs in this process (one torch import for all models).
    sys.path.insert(0, os.path.dirname(os.path.abspath(evaluator)))
    global onnx_eval
    import onnx_eval
    tmp = tempfile.mkdtemp(prefix="loom-onnx-")
    names = [l.split()[0] for l in run([loom, "new", "--list"]).stdout.splitlines() if l and not l[0].isspace()]
    models = []
    for name in names:
        path = os.path.join(tmp, name + ".json")
        r = run([loom, "new", "--example", name, "--out", path])
        models.append((name, path, r.returncode == 0 and None or r.stderr))
    r = run([nets_exe, tmp])
    if r.returncode != 0:
        print("Bail out! onnx-nets: " + r.stderr.strip())
        return 1
    models += [(n, os.path.join(tmp, n + ".json"), None) for n in r.stdout.split()]

    print(f"1..{len(models)}")
    failed = 0
    rng = np.random.default_rng(12)
    for i, (name, path, new_err) in enumerate(models, 1):
        def result(ok, msg):
            nonlocal failed
            failed += 0 if ok else 1
            print(f"{'ok' if ok else 'not ok'} {i} {name}: {msg}")
        if new_err:
            result(False, "loom new failed: " + new_err.strip())
            continue
        out = os.path.join(tmp, name + ".onnx")
        if name in REFUSED:
            # A refused export leaves the file it would have replaced as it was.
            with open(out, "wb") as f:
                f.write(b"old content")
        r = run([loom, "convert", path, "--to", "onnx", "--out", out])
        if name in REFUSED:
            want = REFUSED[name]
            with open(out, "rb") as f:
                kept = f.read() == b"old content"
            ok = r.returncode != 0 and all(w in r.stderr for w in want) and kept
            result(ok, "refused: " + r.stderr.strip() + ("" if kept else " (and the old file was replaced)"))
            continue
        if r.returncode != 0:
            result(False, "export failed: " + r.stderr.strip())
            continue
        x = sample_input(path, rng, 3)
        xp, yp = (os.path.join(tmp, f"{name}.{s}.npy") for s in ("x", "y"))
        np.save(xp, x)
        r = run([loom, "forward", path, "--input", xp, "--output", yp])
        if r.returncode != 0:
            result(False, "loom forward failed: " + r.stderr.strip())
            continue
        try:
            model = onnx.load(out)
            onnx.checker.check_model(model, full_check=True)
            got = onnx_eval.evaluate(model, x)
        except Exception as e:  # the checker's and the evaluator's errors alike
            result(False, f"checker or evaluator failed: {type(e).__name__}: {e}")
            continue
        ref = np.load(yp)
        if ref.shape != got.shape:
            result(False, f"shape {got.shape} from ONNX, {ref.shape} from loom forward")
            continue
        # Relative to the output's scale: values near 0 of an output of size
        # 1 are compared with 1e-5, not with their own tiny magnitude.
        scale = max(float(np.abs(ref).max()), 1e-30)
        err = float(np.abs(ref.astype(np.float64) - got).max()) / scale
        result(bool(np.isfinite(got).all()) and err <= RTOL,
               f"{os.path.getsize(out)} bytes, max |onnx - loom| / max |loom| = {err:.2e} (limit {RTOL:.0e})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
