#!/usr/bin/python3
"""Writes the PyTorch reference vectors the C tests read.

Run with Debian's python3-torch:  /usr/bin/python3 tests/parity/make_vectors.py [FAMILY...]

Each gen_FAMILY.py beside this file defines generate(out_dir, save) and writes
its cases under vectors/FAMILY/. Vectors are committed; CI never needs torch.
Everything is seeded, so a re-run reproduces the same files.
"""
import importlib
import os
import pathlib
import sys

import numpy as np
import torch

HERE = pathlib.Path(__file__).resolve().parent


def save(path, array):
    """Saves a tensor/array as little-endian float32, C order."""
    if isinstance(array, torch.Tensor):
        array = array.detach().cpu().numpy()
    array = np.ascontiguousarray(np.asarray(array, dtype="<f4"))
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, array)


def main(argv):
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    wanted = set(argv[1:])
    families = sorted(p.stem[4:] for p in HERE.glob("gen_*.py"))
    sys.path.insert(0, str(HERE))
    for family in families:
        if wanted and family not in wanted:
            continue
        torch.manual_seed(0)
        module = importlib.import_module("gen_" + family)
        out = HERE / "vectors" / family
        out.mkdir(parents=True, exist_ok=True)
        module.generate(out, save)
        print(f"{family}: {len(list(out.glob('*.npy')))} files in {os.path.relpath(out)}")


if __name__ == "__main__":
    main(sys.argv)
