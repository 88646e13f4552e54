"""Reference vectors for the sequence layers: rnn, lstm, attention, swiglu.

Every case CASE writes CASE_params (layout per kind below), CASE_x [B, T, F],
CASE_y, CASE_dy (a random upstream gradient), CASE_dx and, per weight W (named
as in the engine), CASE_W and CASE_dW. References are computed in float64 from
the float32 inputs.

rnn/lstm CASE_params: [kind (0 rnn tanh, 1 rnn relu, 2 lstm), B, T, F, H, bias, given_state]
  nn.RNN / nn.LSTM (batch_first); with given_state CASE_h0, CASE_c0 [B, H] and
  their gradients CASE_dh0, CASE_dc0.
attention CASE_params: [3, B, T, d, heads, kv_heads, head_dim, causal, bias,
  rope (0 none, 1 half, 2 interleaved), rope_base, qk_norm, eps, has_mask]
  written out below (GQA, RoPE, masks, per-head RMSNorm); CASE_mask [B, T]
  (1 = padding) when has_mask.
swiglu CASE_params: [4, B, T, d, hidden, bias, act (0 silu, 1 relu2)]
"""
import numpy as np
import torch
import torch.nn.functional as F

RECURRENT_CASES = [
    # name, kind, B, T, F, H, bias, given_state
    ("rnn_tanh", 0, 2, 5, 3, 4, True, True),
    ("rnn_relu", 1, 3, 4, 5, 3, False, False),
    ("lstm_state", 2, 2, 6, 3, 5, True, True),
    ("lstm_odd", 2, 1, 7, 4, 7, False, False),
    ("lstm_one_step", 2, 3, 1, 2, 3, True, True),
]

ATTENTION_CASES = [
    # name, B, T, d, heads, kv, head_dim, causal, bias, rope, base, qk_norm, eps, mask
    ("att_gqa_rope", 2, 5, 12, 4, 2, 4, True, True, 1, 10000.0, True, 1e-6, False),
    ("att_interleaved", 1, 7, 10, 5, 1, 2, False, False, 2, 500.0, False, 1e-6, False),
    ("att_plain", 3, 3, 6, 2, 2, 3, True, True, 0, 10000.0, False, 1e-6, False),
    ("att_mask", 2, 4, 8, 2, 1, 4, False, False, 1, 100.0, True, 1e-5, True),
]

SWIGLU_CASES = [
    # name, B, T, d, hidden, bias, act
    ("swiglu_silu", 2, 3, 5, 7, False, 0),
    ("swiglu_bias", 1, 4, 6, 9, True, 0),
    ("swiglu_relu2", 3, 2, 4, 5, True, 1),
]


def recurrent(out_dir, save, name, kind, b, t, f, h, bias, given):
    x = torch.randn(b, t, f)
    if kind == 2:
        mod = torch.nn.LSTM(f, h, bias=bias, batch_first=True)
    else:
        mod = torch.nn.RNN(f, h, nonlinearity="tanh" if kind == 0 else "relu", bias=bias, batch_first=True)
    mod = mod.double()
    xd = x.double().requires_grad_()
    state = None
    if given:
        h0 = torch.randn(1, b, h) * 0.5
        c0 = torch.randn(1, b, h) * 0.5
        h0d, c0d = h0.double().requires_grad_(), c0.double().requires_grad_()
        state = (h0d, c0d) if kind == 2 else h0d
    y, _ = mod(xd, state)
    dy = torch.randn(y.shape)
    (y * dy.double()).sum().backward()
    save(out_dir / f"{name}_params.npy", np.array([kind, b, t, f, h, int(bias), int(given)], dtype=np.float32))
    save(out_dir / f"{name}_x.npy", x)
    save(out_dir / f"{name}_y.npy", y)
    save(out_dir / f"{name}_dy.npy", dy)
    save(out_dir / f"{name}_dx.npy", xd.grad)
    for pname, p in mod.named_parameters():
        save(out_dir / f"{name}_{pname}.npy", p.detach().float())
        save(out_dir / f"{name}_d{pname}.npy", p.grad)
    if given:
        save(out_dir / f"{name}_h0.npy", h0[0])
        save(out_dir / f"{name}_dh0.npy", h0d.grad[0])
        if kind == 2:
            save(out_dir / f"{name}_c0.npy", c0[0])
            save(out_dir / f"{name}_dc0.npy", c0d.grad[0])


def rope(v, base, mode):
    """v: [B, T, n_heads, hd]; rotate each pair by position·base^(-2j/hd)."""
    hd = v.shape[-1]
    half = hd // 2
    pos = torch.arange(v.shape[1], dtype=torch.float64)
    inv = base ** (-2.0 * torch.arange(half, dtype=torch.float64) / hd)
    ang = pos[:, None] * inv[None, :]  # [T, half]
    cos, sin = ang.cos()[None, :, None, :], ang.sin()[None, :, None, :]
    if mode == 1:
        x1, x2 = v[..., :half], v[..., half:]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
    x1, x2 = v[..., 0::2], v[..., 1::2]
    out = torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
    return out.flatten(-2)


def head_rmsnorm(v, w, eps):
    return v / torch.sqrt((v * v).mean(dim=-1, keepdim=True) + eps) * w


def attention(out_dir, save, name, b, t, d, nh, kv, hd, causal, bias, rope_mode, base, qk_norm, eps, has_mask):
    eps = float(np.float32(eps))
    x = torch.randn(b, t, d)
    shapes = {"q_proj.weight": (nh * hd, d), "k_proj.weight": (kv * hd, d), "v_proj.weight": (kv * hd, d),
              "o_proj.weight": (d, nh * hd)}
    if bias:
        shapes.update({"q_proj.bias": (nh * hd,), "k_proj.bias": (kv * hd,), "v_proj.bias": (kv * hd,),
                       "o_proj.bias": (d,)})
    if qk_norm:
        shapes.update({"q_norm.weight": (hd,), "k_norm.weight": (hd,)})
    ws = {}
    for k, s in shapes.items():
        ws[k] = (torch.rand(s) * 1.5 + 0.25) if "norm" in k else torch.randn(s) / np.sqrt(s[-1])
    wd = {k: v.double().requires_grad_() for k, v in ws.items()}
    mask = (torch.rand(b, t) < 0.3) if has_mask else None
    if has_mask:
        mask[:, 0] = False  # every query row keeps a visible key
    xd = x.double().requires_grad_()

    def lin(v, k):
        return F.linear(v, wd[k + ".weight"], wd.get(k + ".bias"))

    q = lin(xd, "q_proj").view(b, t, nh, hd)
    k_ = lin(xd, "k_proj").view(b, t, kv, hd)
    v = lin(xd, "v_proj").view(b, t, kv, hd)
    if qk_norm:
        q = head_rmsnorm(q, wd["q_norm.weight"], eps)
        k_ = head_rmsnorm(k_, wd["k_norm.weight"], eps)
    if rope_mode:
        q, k_ = rope(q, base, rope_mode), rope(k_, base, rope_mode)
    group = nh // kv
    k_ = k_.repeat_interleave(group, dim=2)
    v = v.repeat_interleave(group, dim=2)
    s = torch.einsum("bihd,bjhd->bhij", q, k_) / np.sqrt(hd)
    if causal:
        s = s.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
    if has_mask:
        s = s.masked_fill(mask[:, None, None, :], float("-inf"))
    p = torch.softmax(s, dim=-1)
    o = torch.einsum("bhij,bjhd->bihd", p, v).reshape(b, t, nh * hd)
    y = lin(o, "o_proj")
    dy = torch.randn(y.shape)
    (y * dy.double()).sum().backward()
    params = [3, b, t, d, nh, kv, hd, int(causal), int(bias), rope_mode, base, int(qk_norm), eps, int(has_mask)]
    save(out_dir / f"{name}_params.npy", np.array(params, dtype=np.float32))
    save(out_dir / f"{name}_x.npy", x)
    save(out_dir / f"{name}_y.npy", y)
    save(out_dir / f"{name}_dy.npy", dy)
    save(out_dir / f"{name}_dx.npy", xd.grad)
    if has_mask:
        save(out_dir / f"{name}_mask.npy", mask.float())
    for k in shapes:
        save(out_dir / f"{name}_{k}.npy", ws[k])
        save(out_dir / f"{name}_d{k}.npy", wd[k].grad)


def swiglu(out_dir, save, name, b, t, d, hidden, bias, act):
    x = torch.randn(b, t, d)
    shapes = {"gate_proj.weight": (hidden, d), "up_proj.weight": (hidden, d), "down_proj.weight": (d, hidden)}
    if bias:
        shapes.update({"gate_proj.bias": (hidden,), "up_proj.bias": (hidden,), "down_proj.bias": (d,)})
    ws = {k: torch.randn(s) / np.sqrt(s[-1]) * 2.0 for k, s in shapes.items()}
    wd = {k: v.double().requires_grad_() for k, v in ws.items()}
    xd = x.double().requires_grad_()

    def lin(v, k):
        return F.linear(v, wd[k + ".weight"], wd.get(k + ".bias"))

    g = lin(xd, "gate_proj")
    a = F.silu(g) if act == 0 else torch.relu(g) ** 2
    y = lin(a * lin(xd, "up_proj"), "down_proj")
    dy = torch.randn(y.shape)
    (y * dy.double()).sum().backward()
    save(out_dir / f"{name}_params.npy", np.array([4, b, t, d, hidden, int(bias), act], dtype=np.float32))
    save(out_dir / f"{name}_x.npy", x)
    save(out_dir / f"{name}_y.npy", y)
    save(out_dir / f"{name}_dy.npy", dy)
    save(out_dir / f"{name}_dx.npy", xd.grad)
    for k in shapes:
        save(out_dir / f"{name}_{k}.npy", ws[k])
        save(out_dir / f"{name}_d{k}.npy", wd[k].grad)


def generate(out_dir, save):
    for case in RECURRENT_CASES:
        recurrent(out_dir, save, *case)
    for case in ATTENTION_CASES:
        attention(out_dir, save, *case)
    for case in SWIGLU_CASES:
        swiglu(out_dir, save, *case)
