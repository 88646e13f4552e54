#!/usr/bin/python3
"""Makes the committed state-dict import fixtures in tests/io/state-dict/.

A torch nn.Sequential(Linear(4, 8), ReLU(), Linear(8, 3)) with a fixed seed,
its state dict written as safetensors (by hand, per the format's spec: an
8-byte little-endian header length, the JSON header padded with spaces to 8
bytes, the raw little-endian data) in F32, F64, F16 and BF16, the same
weights under other names ("fc1.weight", ...) with the mapping that places
them, a fixed input and torch's outputs. For F16 and BF16 the expected output
is computed with the weights rounded to that dtype (in float32 arithmetic),
which is what an import must reproduce.

Run: /usr/bin/python3 tests/io/make_state_dict.py  (torch 1.13, numpy)
"""
import json
import os
import struct

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "state-dict")
ST_DTYPE = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16", torch.bfloat16: "BF16"}


def raw_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: its bits are the high half of float32
        bits = t.to(torch.float32).numpy().view(np.uint32) >> 16
        return bits.astype("<u2").tobytes()
    return t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        data = raw_bytes(t)
        header[name] = {"dtype": ST_DTYPE[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(12)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    x = torch.randn(5, 4)
    np.save(os.path.join(OUT, "input.npy"), x.numpy().astype("<f4"))
    sd = model.state_dict()
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        name = ST_DTYPE[dtype].lower()
        write_safetensors(os.path.join(OUT, "mlp-%s.safetensors" % name), {k: v.to(dtype) for k, v in sd.items()})
        rounded = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
        rounded.load_state_dict({k: v.to(dtype).to(torch.float32) for k, v in sd.items()})
        with torch.no_grad():
            y = rounded(x)
        np.save(os.path.join(OUT, "expected-%s.npy" % name), y.numpy().astype("<f4"))
    # The same weights named as a module with attributes, and their mapping.
    renamed = {"fc1.weight": sd["0.weight"], "fc1.bias": sd["0.bias"], "fc2.weight": sd["2.weight"],
               "fc2.bias": sd["2.bias"]}
    write_safetensors(os.path.join(OUT, "mlp-named.safetensors"), renamed)
    mapping = {
        "fc1.weight": {"at": [0, 0, 0, 0], "weight": "weight"},
        "fc1.bias": {"at": [0, 0, 0, 0], "weight": "bias"},
        "fc2.weight": {"at": [0, 0, 2, 0], "weight": "weight"},
        "fc2.bias": {"at": [0, 0, 2, 0], "weight": "bias"},
    }
    with open(os.path.join(OUT, "mlp-named.map.json"), "w", encoding="utf-8") as f:
        json.dump(mapping, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
