"""Reference vectors for the activations.

Each case CASE writes CASE_x (3 × 29: random values plus fixed points around
0, the softplus threshold and the tails), CASE_y, CASE_dy (a random upstream
gradient) and CASE_dx. The reference is computed in float64 from the float32
inputs.
"""
import torch
import torch.nn.functional as F

CASES = [
    # name, function of a float64 tensor
    ("relu", lambda x: F.relu(x)),
    ("leaky_relu_default", lambda x: F.leaky_relu(x, 0.01)),
    ("leaky_relu_0_2", lambda x: F.leaky_relu(x, 0.2)),
    ("elu_default", lambda x: F.elu(x, 1.0)),
    ("elu_0_5", lambda x: F.elu(x, 0.5)),
    ("gelu_none", lambda x: F.gelu(x, approximate="none")),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh")),
    ("silu", lambda x: F.silu(x)),
    ("sigmoid", lambda x: torch.sigmoid(x)),
    ("tanh", lambda x: torch.tanh(x)),
    ("softplus_default", lambda x: F.softplus(x, beta=1.0, threshold=20.0)),
    ("softplus_b2_t3", lambda x: F.softplus(x, beta=2.0, threshold=3.0)),
    ("relu2", lambda x: F.relu(x) ** 2),
]

FIXED = [-30.0, -8.0, -1.5, -0.3, 0.25, 0.7, 1.49, 1.51, 2.5, 8.0, 19.5, 21.0, 30.0]


def generate(out_dir, save):
    x = torch.randn(3, 29) * 2.0
    x[0, : len(FIXED)] = torch.tensor(FIXED)
    dy = torch.randn(3, 29)
    for name, fn in CASES:
        xd = x.double().requires_grad_()
        y = fn(xd)
        y.backward(dy.double())
        save(out_dir / f"{name}_x.npy", x)
        save(out_dir / f"{name}_y.npy", y)
        save(out_dir / f"{name}_dy.npy", dy)
        save(out_dir / f"{name}_dx.npy", xd.grad)
