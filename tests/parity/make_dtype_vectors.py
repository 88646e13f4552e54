"""Reference vectors for the float16 and bfloat16 conversions.

Run with Debian's python3-torch: /usr/bin/python3 tests/parity/make_dtype_vectors.py
Writes tests/parity/vectors/dtype/float16_bfloat16.txt, read by
tests/engine/test-dtype-vectors.c. One line per float32 input:

    <float32 bits> <torch float16 bits> <torch bfloat16 bits>

all in hex. The inputs are chosen to hit what matters: specials, the range
limits of both formats, exact ties between neighbouring codes (which must go
to the even code) and one float32 ulp either side of them, subnormals, and
random float32 values spread over the exponents of both formats. torch's
CPU conversions round to nearest, ties to even (c10::Half, c10::BFloat16).
For NaN inputs only NaN-ness is compared (torch drops the sign of a bfloat16
NaN), so the file holds one NaN.
"""
import os

import numpy as np
import torch

rng = np.random.default_rng(20240611)


def f32_bits(x):
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


inputs = []
# Specials and limits.
for x in [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 65504.0, -65504.0, 65519.99, 65520.0, -65520.0,
          65536.0, 2.0 ** -24, 2.0 ** -25, 1.5 * 2.0 ** -25, 3 * 2.0 ** -25, 2.0 ** -14, 2.0 ** -14 - 2.0 ** -24,
          2.0 ** -26, 1e-45, -1e-45, 1e-40, 1.17549435e-38, 3.4028234e38, -3.4028234e38, 0.1, 1.0 / 3.0]:
    inputs.append(f32_bits(x))
# bfloat16 limits: max (0x7f7f), the tie above it (-> inf), just below the tie.
for b in [0x7F7F0000, 0x7F7F8000, 0x7F7F7FFF, 0xFF7F8000, 0x00008000, 0x00018000, 0x00010000]:
    inputs.append(b)
# Exact float16 ties: the midpoint of two neighbouring finite codes, +-1 ulp.
half_codes = rng.integers(0, 0x7BFF, size=150, dtype=np.uint16)
for c in half_codes:
    lo = np.array([c], dtype=np.uint16).view(np.float16).astype(np.float64)[0]
    hi = np.array([c + 1], dtype=np.uint16).view(np.float16).astype(np.float64)[0]
    mid = f32_bits((lo + hi) / 2)
    sign = 0x80000000 if rng.integers(0, 2) else 0
    inputs += [mid | sign, (mid + 1) | sign, (mid - 1) | sign]
# Exact bfloat16 ties (low half 0x8000) and +-1 ulp.
for hi16 in rng.integers(0, 0x7F7F, size=100, dtype=np.uint32):
    b = int(hi16) << 16 | 0x8000
    inputs += [b, b + 1, b - 1]
# Random float32 over the float16 exponent range and beyond, and over everything.
for _ in range(500):
    e = int(rng.integers(127 - 30, 127 + 18))
    inputs.append(int(rng.integers(0, 2)) << 31 | e << 23 | int(rng.integers(0, 1 << 23)))
for _ in range(200):
    e = int(rng.integers(0, 255))  # no inf/NaN exponent
    inputs.append(int(rng.integers(0, 2)) << 31 | e << 23 | int(rng.integers(0, 1 << 23)))

bits = np.array(inputs, dtype=np.uint32)
x = torch.from_numpy(bits.view(np.float32).copy())
h = x.to(torch.float16).view(torch.int16).numpy().view(np.uint16)
b = x.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors", "dtype", "float16_bfloat16.txt")
os.makedirs(os.path.dirname(out), exist_ok=True)
with open(out, "w") as f:
    f.write(f"# float32 float16 bfloat16 (bits, hex); torch {torch.__version__}; tests/parity/make_dtype_vectors.py\n")
    for i in range(len(bits)):
        f.write(f"{int(bits[i]):08x} {int(h[i]):04x} {int(b[i]):04x}\n")
print(f"{out}: {len(bits)} vectors")
