"""Reference vectors for layernorm, rmsnorm and embedding.

Each case CASE writes CASE_params, CASE_x, CASE_y, CASE_dy (a random upstream
gradient), CASE_dx and, where the layer has them, CASE_weight/CASE_bias with
their gradients CASE_dweight/CASE_dbias. The reference is computed in float64
from the float32 inputs.

Norm CASE_params: [kind (0 layernorm, 1 rmsnorm), over_all, affine, eps, batch, rank, d0, d1, d2]
where over_all=1 normalizes over the whole sample, 0 over its last dimension.
Embedding CASE_params: [2, num_embeddings, embedding_dim, batch, tokens].
"""
import numpy as np
import torch
import torch.nn.functional as F

NORM_CASES = [
    # name, kind, over_all, affine, eps, batch, sample shape
    ("ln_last", "layernorm", False, True, 1e-5, 3, (5, 7)),
    ("ln_last_noaffine", "layernorm", False, False, 1e-5, 2, (9,)),
    ("ln_all", "layernorm", True, True, 1e-3, 2, (3, 4, 5)),
    ("ln_last_3d", "layernorm", False, True, 1e-6, 2, (2, 3, 13)),
    ("rms_last", "rmsnorm", False, True, 1e-6, 3, (4, 11)),
    ("rms_last_noaffine", "rmsnorm", False, False, 1e-5, 2, (6,)),
    ("rms_all", "rmsnorm", True, True, 1e-2, 2, (3, 5)),
]

EMBEDDING_CASES = [
    # name, num_embeddings, embedding_dim, batch, tokens
    ("emb_small", 7, 5, 3, 6),
    ("emb_repeat", 4, 9, 2, 11),
]


def rmsnorm(x, weight, eps, dims):
    """RMSNorm written out: x / sqrt(mean(x^2) + eps) * w."""
    y = x / torch.sqrt((x * x).mean(dim=dims, keepdim=True) + eps)
    return y * weight if weight is not None else y


def generate(out_dir, save):
    for name, kind, over_all, affine, eps, batch, shape in NORM_CASES:
        eps = float(np.float32(eps))  # the C side reads eps back as float32
        x = torch.randn(batch, *shape) * 2.0 + 0.5
        norm_shape = tuple(shape) if over_all else (shape[-1],)
        w = torch.randn(norm_shape) if affine else None
        b = torch.randn(norm_shape) if affine and kind == "layernorm" else None
        xd = x.double().requires_grad_()
        wd = w.double().requires_grad_() if w is not None else None
        bd = b.double().requires_grad_() if b is not None else None
        if kind == "layernorm":
            y = F.layer_norm(xd, norm_shape, wd, bd, eps)
        else:
            dims = tuple(range(1, 1 + len(shape))) if over_all else (-1,)
            y = rmsnorm(xd, wd, eps, dims)
        dy = torch.randn(y.shape)
        (y * dy.double()).sum().backward()

        dims3 = list(shape) + [0] * (3 - len(shape))
        params = [0 if kind == "layernorm" else 1, int(over_all), int(affine), eps, batch, len(shape)] + dims3
        save(out_dir / f"{name}_params.npy", np.array(params, dtype=np.float32))
        save(out_dir / f"{name}_x.npy", x)
        save(out_dir / f"{name}_y.npy", y)
        save(out_dir / f"{name}_dy.npy", dy)
        save(out_dir / f"{name}_dx.npy", xd.grad)
        if w is not None:
            save(out_dir / f"{name}_weight.npy", w)
            save(out_dir / f"{name}_dweight.npy", wd.grad)
        if b is not None:
            save(out_dir / f"{name}_bias.npy", b)
            save(out_dir / f"{name}_dbias.npy", bd.grad)

    for name, num, dim, batch, tokens in EMBEDDING_CASES:
        idx = torch.randint(0, num, (batch, tokens))
        w = torch.randn(num, dim)
        wd = w.double().requires_grad_()
        y = F.embedding(idx, wd)
        dy = torch.randn(y.shape)
        (y * dy.double()).sum().backward()
        save(out_dir / f"{name}_params.npy", np.array([2, num, dim, batch, tokens], dtype=np.float32))
        save(out_dir / f"{name}_x.npy", idx.float())
        save(out_dir / f"{name}_weight.npy", w)
        save(out_dir / f"{name}_y.npy", y)
        save(out_dir / f"{name}_dy.npy", dy)
        save(out_dir / f"{name}_dweight.npy", wd.grad)
