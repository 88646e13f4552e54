#!/usr/bin/python3
"""A small, independent evaluator for the ONNX graphs Loom exports.

Debian's python3-onnx (1.12) has no reference evaluator and ONNX Runtime is
not packaged, so this script reads the model with onnx, checks it with
onnx.checker, and computes the graph in float32 with numpy (convolutions with
torch.nn.functional, which shares no code with the engine). It implements
exactly the operators docs/onnx.md lists; an unknown operator is an error.

    onnx_eval.py MODEL.onnx INPUT.npy OUTPUT.npy   # writes the graph's output
    onnx_eval.py --check MODEL.onnx                # checker only
Exit status 77 when python3-onnx is missing (meson counts it as a skip).
"""
import math
import sys

import numpy as np

try:
    import onnx
    from onnx import numpy_helper
except ImportError:
    print("python3-onnx is missing; skipping", file=sys.stderr)
    sys.exit(77)


def attrs_of(node):
    out = {}
    for a in node.attribute:
        out[a.name] = onnx.helper.get_attribute_value(a)
    return out


def conv(x, w, b, at, transposed):
    import torch
    import torch.nn.functional as F
    dims = w.ndim - 2
    pads = list(at.get("pads", [0] * 2 * dims))
    if pads[:dims] != pads[dims:]:
        raise ValueError("asymmetric pads are not used by the exporter")
    kw = dict(stride=tuple(at.get("strides", [1] * dims)), padding=tuple(pads[:dims]),
              dilation=tuple(at.get("dilations", [1] * dims)), groups=int(at.get("group", 1)))
    xt, wt = torch.from_numpy(np.array(x, dtype=np.float32)), torch.from_numpy(np.array(w, dtype=np.float32))
    bt = None if b is None else torch.from_numpy(np.array(b, dtype=np.float32))
    if transposed:
        fn = [F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][dims - 1]
        y = fn(xt, wt, bt, output_padding=tuple(at.get("output_padding", [0] * dims)), **kw)
    else:
        fn = [F.conv1d, F.conv2d, F.conv3d][dims - 1]
        y = fn(xt, wt, bt, **kw)
    return y.numpy()


def layer_norm(x, scale, bias, at):
    axis = at.get("axis", -1)
    eps = np.float32(at.get("epsilon", 1e-5))
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True, dtype=np.float64).astype(np.float32)
    d = x - mean
    var = (d * d).mean(axis=axes, keepdims=True, dtype=np.float64).astype(np.float32)
    return d / np.sqrt(var + eps) * scale + bias


def softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    e = np.exp(x - m)
    return e / e.sum(axis=axis, keepdims=True)


def sigmoid(v):
    return (1 / (1 + np.exp(-v.astype(np.float64)))).astype(np.float32)


def recurrent(op, ins, at):
    """RNN and LSTM as the ONNX operator documents them: one direction,
    layout 1 (X is [batch, seq, input]), zero initial state, gate order
    i, o, f, c, B = [Wb, Rb]; returns Y [batch, seq, 1, hidden]."""
    x, w, r = ins[0], ins[1][0], ins[2][0]
    if at.get("layout", 0) != 1 or at.get("direction", b"forward") not in (b"forward", "forward"):
        raise ValueError("only forward, batch-first recurrences are used by the exporter")
    hid = int(at["hidden_size"])
    g = w.shape[0] // hid
    b = ins[3][0] if len(ins) > 3 and ins[3] is not None else np.zeros(2 * g * hid, np.float32)
    bias = b[: g * hid] + b[g * hid:]
    h = np.zeros((x.shape[0], hid), np.float32)
    c = np.zeros_like(h)
    acts = [a.decode() if isinstance(a, bytes) else a for a in at.get("activations", [])]
    ys = []
    for t in range(x.shape[1]):
        z = x[:, t] @ w.T + h @ r.T + bias
        if op == "RNN":
            h = np.maximum(z, 0) if acts == ["Relu"] else np.tanh(z)
        else:
            i, o, f, cc = (z[:, k * hid:(k + 1) * hid] for k in range(4))
            c = sigmoid(f) * c + sigmoid(i) * np.tanh(cc)
            h = sigmoid(o) * np.tanh(c)
        ys.append(h.astype(np.float32))
    return np.stack(ys, axis=1)[:, :, None, :]


def run_node(op, ins, at):
    f32 = np.float32
    if op == "Identity": return ins[0]
    if op == "Reshape":
        shape = [int(s) for s in ins[1]]
        shape = [ins[0].shape[i] if s == 0 else s for i, s in enumerate(shape)]
        return ins[0].reshape(shape)
    if op == "Transpose": return np.transpose(ins[0], at.get("perm"))
    if op == "MatMul": return np.matmul(ins[0], ins[1]).astype(f32)
    if op == "Add": return ins[0] + ins[1]
    if op == "Sub": return ins[0] - ins[1]
    if op == "Mul": return ins[0] * ins[1]
    if op == "Div": return ins[0] / ins[1]
    if op == "Sqrt": return np.sqrt(ins[0])
    if op == "Relu": return np.maximum(ins[0], f32(0))
    if op == "LeakyRelu": return np.where(ins[0] > 0, ins[0], f32(at.get("alpha", 0.01)) * ins[0])
    if op == "Elu": return np.where(ins[0] > 0, ins[0], f32(at.get("alpha", 1.0)) * np.expm1(ins[0]))
    if op == "Sigmoid": return sigmoid(ins[0])
    if op in ("RNN", "LSTM"): return recurrent(op, ins, at)
    if op == "Tanh": return np.tanh(ins[0])
    if op == "Softplus": return np.log1p(np.exp(ins[0].astype(np.float64))).astype(f32)
    if op == "Erf": return np.vectorize(math.erf, otypes=[np.float64])(ins[0]).astype(f32)
    if op == "Greater": return ins[0] > ins[1]
    if op == "Where": return np.where(ins[0], ins[1], ins[2])
    if op == "Expand": return ins[0] * np.ones([int(d) for d in ins[1]], ins[0].dtype)
    if op == "Cast":
        to = {onnx.TensorProto.INT64: np.int64, onnx.TensorProto.FLOAT: f32}.get(at["to"])
        if to is None: raise ValueError("only casts to int64 and float are used")
        return ins[0].astype(to)
    if op == "Slice":
        if len(ins) > 4: raise ValueError("Slice steps are not used by the exporter")
        idx = [slice(None)] * ins[0].ndim
        for b, e, a in zip(ins[1], ins[2], ins[3]):
            idx[int(a)] = slice(int(b), int(e))
        return ins[0][tuple(idx)]
    if op == "LessOrEqual": return ins[0] <= ins[1]
    if op == "CumSum":
        if at.get("exclusive", 0) or at.get("reverse", 0): raise ValueError("only inclusive forward sums are used")
        return np.cumsum(ins[0], axis=int(ins[1]), dtype=np.float64).astype(ins[0].dtype)
    if op == "GatherElements": return np.take_along_axis(ins[0], ins[1], axis=at.get("axis", 0))
    if op == "ReduceMax":
        return ins[0].max(axis=tuple(at["axes"]), keepdims=bool(at.get("keepdims", 1)))
    if op == "Gather": return np.take(ins[0], ins[1], axis=at.get("axis", 0))
    if op == "Concat": return np.concatenate(ins, axis=at["axis"])
    if op == "Unsqueeze": return np.expand_dims(ins[0], tuple(int(a) for a in ins[1]))
    if op == "Softmax": return softmax(ins[0], at.get("axis", -1))
    if op == "ReduceMean":
        return ins[0].mean(axis=tuple(at["axes"]), keepdims=bool(at.get("keepdims", 1)), dtype=np.float64).astype(f32)
    if op == "ReduceSum":
        return ins[0].sum(axis=tuple(int(a) for a in ins[1]), keepdims=bool(at.get("keepdims", 1)))
    if op == "Pad":
        p = [int(v) for v in ins[1]]
        n = len(p) // 2
        return np.pad(ins[0], list(zip(p[:n], p[n:])))
    if op == "LayerNormalization": return layer_norm(ins[0], ins[1], ins[2], at)
    if op in ("Conv", "ConvTranspose"):
        return conv(ins[0], ins[1], ins[2] if len(ins) > 2 else None, at, op == "ConvTranspose")
    raise ValueError(f"operator {op} is not implemented by this evaluator")


def topk(x, k, at):
    if not at.get("largest", 1) or not at.get("sorted", 1): raise ValueError("only largest, sorted TopK is used")
    axis = at.get("axis", -1)
    idx = np.argsort(-x, axis=axis, kind="stable")
    idx = np.take(idx, np.arange(int(k[0])), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)


def evaluate(model, x):
    vals = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    vals[model.graph.input[0].name] = x.astype(np.float32)
    for node in model.graph.node:
        ins = [vals[n] if n else None for n in node.input]
        while ins and ins[-1] is None:
            ins.pop()
        if node.op_type == "TopK":
            vals[node.output[0]], vals[node.output[1]] = topk(ins[0], ins[1], attrs_of(node))
            continue
        out = run_node(node.op_type, ins, attrs_of(node))
        if isinstance(out, np.ndarray) and out.dtype == np.float64:
            out = out.astype(np.float32)
        vals[node.output[0]] = out
    return vals[model.graph.output[0].name]


def main(argv):
    if len(argv) == 3 and argv[1] == "--check":
        onnx.checker.check_model(onnx.load(argv[2]), full_check=True)
        return 0
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    model = onnx.load(argv[1])
    onnx.checker.check_model(model, full_check=True)
    y = evaluate(model, np.load(argv[2]))
    np.save(argv[3], np.ascontiguousarray(y, dtype=np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
