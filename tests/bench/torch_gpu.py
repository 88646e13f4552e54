#!/usr/bin/python3
"""The PyTorch CUDA side of bench-gpu (docs/gpu.md), on the same GPU in the
same run.

Usage: python3 tests/bench/torch_gpu.py RUNS SIZE

Prints one line per figure, medians over RUNS runs:
  forward16_eager_us   16 × Linear(256, 256) at batch 1, eager, no_grad:
                       input copied to the GPU, forward, output copied back
                       (what loom_gpu_net_forward does)
  forward16_graph_us   the same forward replayed as a CUDA graph (copies too)
  forward1_eager_us    one layer, eager
  train_step_us        784-256-10 ReLU MLP, batch 64, Adam, cross-entropy: a
                       batch gathered on the GPU, forward, loss read back,
                       backward, step (what loom_trainer_step does)
  cnn_step_us          the digits CNN example (conv 1→4 3×3 pad 1, ReLU, conv
                       4→8 3×3 stride 2 pad 1, ReLU, Linear 128→10), batch 32,
                       Adam, on 1024 8×8 images
  matmul_tflops        float32 SIZE³ product, TF32 off
"""
import statistics
import sys
import time

import torch


def timed(fn, runs, reps):
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) / reps)
    return statistics.median(out)


def main():
    runs, size = int(sys.argv[1]), int(sys.argv[2])
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    print("torch", torch.__version__, torch.cuda.get_device_name(0))

    def stack(n):
        return torch.nn.Sequential(*[torch.nn.Linear(256, 256) for _ in range(n)]).to(dev).eval()

    x_host = torch.arange(256, dtype=torch.float32).remainder(7).mul(0.1).reshape(1, 256).pin_memory()
    y_host = torch.empty(1, 256).pin_memory()
    for n, name in ((16, "forward16_eager_us"), (1, "forward1_eager_us")):
        net = stack(n)

        def fwd():
            with torch.no_grad():
                y_host.copy_(net(x_host.to(dev, non_blocking=True)), non_blocking=True)
            torch.cuda.synchronize()

        print(name, f"{timed(fwd, runs, 200) * 1e6:.1f}")

    net = stack(16)
    x_dev = torch.empty(1, 256, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(3):
            net(x_dev)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g), torch.no_grad():
        y_dev = net(x_dev)

    def graph():
        x_dev.copy_(x_host, non_blocking=True)
        g.replay()
        y_host.copy_(y_dev, non_blocking=True)
        torch.cuda.synchronize()

    print("forward16_graph_us", f"{timed(graph, runs, 200) * 1e6:.1f}")

    torch.manual_seed(3)
    mlp = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    cnn = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, 1, 1), torch.nn.ReLU(), torch.nn.Conv2d(4, 8, 3, 2, 1),
                              torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(128, 10))
    for name, model, shape, batch in (("train_step_us", mlp, (784,), 64), ("cnn_step_us", cnn, (1, 8, 8), 32)):
        model = model.to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        feat = 1
        for d in shape:
            feat *= d
        centres = torch.rand(10, feat, device=dev) * 2 - 1
        labels = torch.randint(0, 10, (1024,), device=dev)
        data = (centres[labels] + 0.5 * torch.randn(1024, feat, device=dev)).reshape(1024, *shape)
        state = {"perm": torch.randperm(1024, device=dev), "pos": 0}

        def step():
            if state["pos"] >= 1024:
                state["perm"], state["pos"] = torch.randperm(1024, device=dev), 0
            idx = state["perm"][state["pos"]:state["pos"] + batch]
            state["pos"] += batch
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(data[idx]), labels[idx])
            loss.item()
            loss.backward()
            opt.step()

        print(name, f"{timed(step, runs, 100) * 1e6:.1f}")

    a = torch.rand(size, size, device=dev)
    b = torch.rand(size, size, device=dev)
    t = timed(lambda: torch.mm(a, b.t()), min(runs, 5), 3)
    print("matmul_tflops", f"{2 * size ** 3 / t * 1e-12:.2f}")


if __name__ == "__main__":
    main()
