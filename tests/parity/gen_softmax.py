"""Reference vectors for the softmax family and k-means.

Each case CASE writes CASE_x (batch × sample shape), CASE_y, CASE_dy (a random
upstream gradient) and CASE_dx (the input gradient of sum(y * dy)), plus
CASE_params (float32, meaning per layer type, below) and, where the type has
them, CASE_mask, CASE_groups, CASE_centres and CASE_dcentres. References are
computed in float64 from the float32 inputs; backward is PyTorch autograd.

CASE_params (absent where empty):
    softmax, sparsemax, entmax15:  []
    softmax_temperature:           [temperature]
    grid_softmax:                  [rows, cols]
    masked_softmax:                []            (CASE_mask: 1 keeps, 0 masks)
    hierarchical_softmax:          []            (CASE_groups: leaves per group, two levels;
                                                  or CASE_levels: children per node for each level)
    kmeans:                        [n_clusters, temperature, output (0 probabilities, 1 features)]

sparsemax and entmax-1.5 are written out here (exact sort-based algorithms of
Martins & Astudillo 2016 and Peters et al. 2019), with the support found
without gradient and the threshold recomputed differentiably from it, so
autograd yields their exact Jacobians.
"""
import numpy as np
import torch


def sparsemax(z):
    zs, _ = torch.sort(z, dim=-1, descending=True)
    rho = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype)
    cs = zs.cumsum(-1)
    with torch.no_grad():
        k = (1 + rho * zs > cs).sum(-1, keepdim=True)
    tau = (cs.gather(-1, k - 1) - 1) / k.to(z.dtype)
    return torch.clamp(z - tau, min=0)


def entmax15(z):
    x = z / 2
    x = x - x.max(-1, keepdim=True).values
    xs, _ = torch.sort(x, dim=-1, descending=True)
    rho = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype)
    cs, cs2 = xs.cumsum(-1), (xs * xs).cumsum(-1)
    with torch.no_grad():
        mean, mean_sq = cs / rho, cs2 / rho
        delta = (1 - rho * (mean_sq - mean**2)) / rho
        tau = mean - torch.sqrt(torch.clamp(delta, min=0))
        k = (tau <= xs).sum(-1, keepdim=True)
    kf = k.to(z.dtype)
    mean_k, mean_sq_k = cs.gather(-1, k - 1) / kf, cs2.gather(-1, k - 1) / kf
    tau_star = mean_k - torch.sqrt((1 - kf * (mean_sq_k - mean_k**2)) / kf)
    return torch.clamp(x - tau_star, min=0) ** 2


def hierarchical(x, groups):
    g = len(groups)
    p = torch.softmax(x[..., :g], dim=-1)
    parts, start = [], g
    for i, s in enumerate(groups):
        parts.append(p[..., i : i + 1] * torch.softmax(x[..., start : start + s], dim=-1))
        start += s
    return torch.cat(parts, dim=-1)


def hierarchical_levels(x, levels):
    """A softmax tree with levels[d] children per node at depth d. The row holds
    one logit per node below the root, level by level (breadth first); a leaf's
    probability is the product of the softmaxes along its path."""
    rows = x.shape[:-1]
    path = torch.ones(*rows, 1, dtype=x.dtype)  # P of the nodes of the current level
    start, width = 0, 1
    for b in levels:
        logits = x[..., start : start + width * b].reshape(*rows, width, b)
        q = torch.softmax(logits, dim=-1)
        path = (path.unsqueeze(-1) * q).reshape(*rows, width * b)
        start, width = start + width * b, width * b
    assert start == x.shape[-1]
    return path


def kmeans(x, c, temperature, features):
    d = ((x.unsqueeze(-2) - c) ** 2).sum(-1)
    p = torch.softmax(-d / temperature, dim=-1)
    return p @ c if features else p


def with_ties(x):
    """Equal logits inside rows: sparsemax/entmax must handle tied sorts."""
    flat = x.reshape(-1, x.shape[-1])
    if flat.shape[-1] >= 3:
        flat[0, 1] = flat[0, 0]
        flat[-1, -1] = flat[-1, 0] = flat[-1, 1]
    return x


CASES = [
    # name, type, batch, sample shape, params
    ("softmax_2x7", "softmax", 3, (2, 7), []),
    ("softmax_n1", "softmax", 2, (1,), []),
    ("softmax_3d", "softmax", 2, (2, 3, 5), []),
    ("temperature_sharp", "softmax_temperature", 3, (5,), [0.37]),
    ("temperature_flat", "softmax_temperature", 2, (3, 4), [2.5]),
    ("grid_3x5", "grid_softmax", 2, (15,), [3, 5]),
    ("grid_2x3_of_3x2", "grid_softmax", 3, (3, 2), [2, 3]),
    ("masked_row", "masked_softmax", 2, (4, 6), []),
    ("masked_elem", "masked_softmax", 3, (3, 5), []),
    ("hier_3_1_4", "hierarchical_softmax", 2, (2, 11), [[3, 1, 4]]),
    ("hier_2_2", "hierarchical_softmax", 3, (6,), [[2, 2]]),
    ("sparsemax_9", "sparsemax", 4, (9,), []),
    ("sparsemax_3d", "sparsemax", 2, (2, 3, 7), []),
    ("sparsemax_n1", "sparsemax", 3, (1,), []),
    ("entmax15_9", "entmax15", 4, (9,), []),
    ("entmax15_3d", "entmax15", 2, (2, 3, 7), []),
    ("entmax15_n1", "entmax15", 3, (1,), []),
    ("kmeans_prob", "kmeans", 2, (5, 3), [4, 0.8, 0]),
    ("kmeans_feat", "kmeans", 4, (5,), [3, 1.7, 1]),
    # Appended last, so the draws of the cases above stay as committed.
    ("hier_levels_2_3_2", "hierarchical_softmax", 3, (2, 20), [None, [2, 3, 2]]),
    ("hier_levels_3_1_2_2", "hierarchical_softmax", 2, (24,), [None, [3, 1, 2, 2]]),
]


def generate(out_dir, save):
    for name, kind, batch, shape, params in CASES:
        x = torch.randn(batch, *shape) * 2.0
        if kind in ("sparsemax", "entmax15"):
            x = with_ties(x)
        xd = x.double().requires_grad_()
        extra = {}
        if kind == "softmax":
            y = torch.softmax(xd, dim=-1)
        elif kind == "softmax_temperature":
            t = float(np.float32(params[0]))
            y = torch.softmax(xd / t, dim=-1)
        elif kind == "grid_softmax":
            rows, cols = params
            y = torch.softmax(xd.reshape(batch, rows, cols), dim=-1).reshape(x.shape)
        elif kind == "masked_softmax":
            if name == "masked_row":
                mask = torch.tensor([1, 0, 1, 1, 0, 1], dtype=torch.float32)
            else:
                mask = (torch.rand(shape) > 0.4).float()
                mask[0] = torch.tensor([0, 0, 1, 0, 0], dtype=torch.float32)  # one kept entry
                mask[1] = 1.0  # nothing masked
            assert bool((mask.reshape(-1, shape[-1]).sum(-1) > 0).all())
            y = torch.softmax(xd.masked_fill(mask == 0, float("-inf")), dim=-1)
            extra["mask"] = mask
        elif kind == "hierarchical_softmax" and params[0] is None:
            levels = params[1]
            y = hierarchical_levels(xd, levels)
            extra["levels"] = np.array(levels, dtype=np.float32)
            params = []
        elif kind == "hierarchical_softmax":
            groups = params[0]
            y = hierarchical(xd, groups)
            extra["groups"] = np.array(groups, dtype=np.float32)
            params = []
        elif kind == "sparsemax":
            y = sparsemax(xd)
        elif kind == "entmax15":
            y = entmax15(xd)
        elif kind == "kmeans":
            k, t, mode = params
            t = float(np.float32(t))
            c = torch.randn(k, shape[-1])
            cd = c.double().requires_grad_()
            y = kmeans(xd, cd, t, mode == 1)
        else:
            raise ValueError(kind)
        dy = torch.randn(y.shape)
        (y * dy.double()).sum().backward()
        if params:
            save(out_dir / f"{name}_params.npy", np.array(params, dtype=np.float32))
        save(out_dir / f"{name}_x.npy", x)
        save(out_dir / f"{name}_y.npy", y)
        save(out_dir / f"{name}_dy.npy", dy)
        save(out_dir / f"{name}_dx.npy", xd.grad)
        if kind == "kmeans":
            save(out_dir / f"{name}_centres.npy", c)
            save(out_dir / f"{name}_dcentres.npy", cd.grad)
        for key, value in extra.items():
            save(out_dir / f"{name}_{key}.npy", value)
