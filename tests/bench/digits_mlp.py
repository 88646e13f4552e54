#!/usr/bin/python3
"""Makes the 64-H-10 ReLU MLP on the digits that docs/training.md times.

Usage: python3 tests/bench/digits_mlp.py CNN_JSON H OUT [adam|sgd|rmsprop]

CNN_JSON is the digits CNN example (loom new --example cnn --out cnn.json),
whose training settings (the digits, batch 32, 20 % held out) the MLP keeps;
its layers become dense 64 -> H, relu, dense H -> 10 with uniform weights
(seed 1, bound 1/sqrt(fan-in)) and zero biases. The optimizer stays the
example's Adam (lr 0.01) or becomes SGD (lr 0.01, momentum 0.9) or RMSprop
(lr 0.001). Then, for example:

    loom train OUT --epochs 100 --threads 1
"""
import base64
import json
import random
import struct
import sys


def weights(name, rows, cols, bound, rng):
    values = [rng.uniform(-bound, bound) for _ in range(rows * cols)]
    return {"name": name, "rows": rows, "cols": cols, "dtype": "float32", "scale_mode": "per_row",
            "data": base64.b64encode(struct.pack("<%df" % (rows * cols), *values)).decode()}


def dense(n_in, n_out, rng):
    return {"type": "dense", "dtype": "float32", "params": {"in_features": n_in, "out_features": n_out, "bias": True},
            "in_shape": [n_in],
            "weights": [weights("weight", n_out, n_in, n_in ** -0.5, rng), weights("bias", 1, n_out, 0.0, rng)]}


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    model = json.load(open(sys.argv[1]))
    hidden, out = int(sys.argv[2]), sys.argv[3]
    rng = random.Random(1)
    model["input_shape"] = [64]
    model["grid"] = {"depth": 1, "rows": 1, "cols": 3, "layers_per_cell": 1}
    relu = {"type": "relu", "dtype": "float32", "params": {}, "in_shape": [hidden], "weights": []}
    model["slots"] = [{"at": [0, 0, 0, 0], "enabled": True, "layer": dense(64, hidden, rng)},
                      {"at": [0, 0, 1, 0], "enabled": True, "layer": relu},
                      {"at": [0, 0, 2, 0], "enabled": True, "layer": dense(hidden, 10, rng)}]
    model["links"] = []
    optimizers = {"sgd": {"name": "sgd", "lr": 0.01, "momentum": 0.9}, "rmsprop": {"name": "rmsprop", "lr": 0.001}}
    if len(sys.argv) == 5 and sys.argv[4] != "adam":
        model["training"]["settings"]["optimizer"] = optimizers[sys.argv[4]]
    json.dump(model, open(out, "w"))


if __name__ == "__main__":
    main()
