#!/usr/bin/python3
"""An independent safetensors writer and reader for the tests (standard library only).

Debian has no python3-safetensors, so this follows the format's specification
(https://github.com/huggingface/safetensors, "Format") and the layout the
reference library writes: tensors ordered by element size (largest first),
then by name; the header padded with spaces to a multiple of 8 bytes;
__metadata__ first.

  write MODEL.loom.json OUT.safetensors
      writes the network of a Loom JSON model file as docs/safetensors.md
      describes: the model JSON without "data"/"scales" in
      __metadata__.loom_model, one tensor per weight and one per scale list.
  check FILE.safetensors MODEL.loom.json
      reads a file written by loom, checks every rule of the format (header
      length, offsets tiling the data, sizes agreeing with dtype and shape) and
      that each tensor holds exactly the bytes of the JSON model's weights.
Exit status 0 when fine; a message and status 1 otherwise.
"""
import base64
import json
import struct
import sys

SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2, "F16": 2,
         "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "F64": 8, "I64": 8, "U64": 8}
FLOATS = {"float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16",
          "fp8-e4m3": "F8_E4M3", "fp8-e5m2": "F8_E5M2"}
BITS = {"fp4": 4, "int4": 4, "int2": 2, "uint4": 4, "uint2": 2, "ternary": 2, "binary": 1}


def st_dtype(loom_dtype):
    """The safetensors dtype of a Loom dtype's packed codes, and whether its
    second dimension is bytes (packed below a byte) or values."""
    if loom_dtype in FLOATS:
        return FLOATS[loom_dtype], False
    if loom_dtype in BITS:
        return "U8", True
    bits = int(loom_dtype.lstrip("uint"))
    return ("U" if loom_dtype.startswith("u") else "I") + str(bits), False


def weights_of(model):
    """(tensor name, dtype, shape, bytes) for every weight and scale list."""
    out = []
    for slot in model["slots"]:
        layer = slot["layer"]
        prefix = "slot.%d.%d.%d.%d." % tuple(slot["at"])
        for w in layer.get("weights", []):
            dt, packed = st_dtype(w["dtype"])
            data = base64.b64decode(w["data"])
            cols = len(data) // w["rows"] if packed else w["cols"]
            out.append((prefix + w["name"], dt, [w["rows"], cols], data))
            if "scales" in w:
                s = base64.b64decode(w["scales"])
                out.append((prefix + w["name"] + ".scales", "F32", [len(s) // 4], s))
    return out


def strip_data(model):
    for slot in model["slots"]:
        for w in slot["layer"].get("weights", []):
            w.pop("data", None)
            w.pop("scales", None)
    return model


def write(model_path, out_path):
    with open(model_path, encoding="utf-8") as f:
        model = json.load(f)
    tensors = weights_of(model)
    tensors.sort(key=lambda t: (-SIZES[t[1]], t[0]))
    header = {"__metadata__": {"loom_model": json.dumps(strip_data(model))}}
    offset = 0
    for name, dt, shape, data in tensors:
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(out_path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, _, data in tensors:
            f.write(data)


def fail(msg):
    print("safetensors_reference: " + msg, file=sys.stderr)
    sys.exit(1)


def check(st_path, model_path):
    with open(st_path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    if n > len(blob) - 8:
        fail("header length beyond the file")
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    meta = header.pop("__metadata__", {})
    if not all(isinstance(v, str) for v in meta.values()):
        fail("__metadata__ values must be strings")
    ranges = []
    for name, t in header.items():
        b, e = t["data_offsets"]
        count = 1
        for d in t["shape"]:
            count *= d
        if e - b != count * SIZES[t["dtype"]]:
            fail("%s: size does not match dtype and shape" % name)
        ranges.append((b, e, name))
    ranges.sort()
    at = 0
    for b, e, name in ranges:
        if b != at:
            fail("%s: offsets do not tile the data" % name)
        at = e
    if at != len(data):
        fail("the tensors do not cover the data")
    with open(model_path, encoding="utf-8") as f:
        model = json.load(f)
    want = weights_of(model)
    if len(want) != len(header):
        fail("%d tensors, the model has %d" % (len(header), len(want)))
    for name, dt, shape, payload in want:
        t = header.get(name)
        if t is None:
            fail("no tensor " + name)
        if t["dtype"] != dt or t["shape"] != shape:
            fail("%s: %s %s, expected %s %s" % (name, t["dtype"], t["shape"], dt, shape))
        b, e = t["data_offsets"]
        if data[b:e] != payload:
            fail("%s: the bytes differ from the JSON model's" % name)
    embedded = json.loads(meta["loom_model"])
    if embedded != strip_data(model):
        fail("__metadata__.loom_model differs from the JSON model without weight data")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("write", "check"):
        fail("usage: safetensors_reference.py write|check A B")
    (write if sys.argv[1] == "write" else check)(sys.argv[2], sys.argv[3])
