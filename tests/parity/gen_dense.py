"""Reference vectors for dense (nn.Linear).

Each case CASE writes CASE_x (batch × in), CASE_weight (out × in), CASE_bias
(absent without bias), CASE_y, CASE_dy (a random upstream gradient), CASE_dx,
CASE_dweight and CASE_dbias. Inputs are float32; the reference is computed in
float64 from exactly those values.
"""
import torch
import torch.nn.functional as F

CASES = [
    # name, batch, in_features, out_features, bias
    ("b3_5x7_bias", 3, 5, 7, True),
    ("b1_1x1_nobias", 1, 1, 1, False),
    ("b4_13x6_nobias", 4, 13, 6, False),
    ("b2_17x33_bias", 2, 17, 33, True),
    ("b5_64x3_bias", 5, 64, 3, True),
]


def generate(out_dir, save):
    for name, batch, n_in, n_out, bias in CASES:
        x = torch.randn(batch, n_in)
        w = torch.empty(n_out, n_in).uniform_(-1, 1) / n_in ** 0.5
        b = torch.empty(n_out).uniform_(-1, 1) if bias else None
        dy = torch.randn(batch, n_out)
        xd = x.double().requires_grad_()
        wd = w.double().requires_grad_()
        bd = b.double().requires_grad_() if bias else None
        y = F.linear(xd, wd, bd)
        y.backward(dy.double())
        save(out_dir / f"{name}_x.npy", x)
        save(out_dir / f"{name}_weight.npy", w)
        if bias:
            save(out_dir / f"{name}_bias.npy", b)
            save(out_dir / f"{name}_dbias.npy", bd.grad)
        save(out_dir / f"{name}_y.npy", y)
        save(out_dir / f"{name}_dy.npy", dy)
        save(out_dir / f"{name}_dx.npy", xd.grad)
        save(out_dir / f"{name}_dweight.npy", wd.grad)
