#!/usr/bin/python3
"""The PyTorch side of bench-sequence: times the same operations as the C bench.

Usage: /usr/bin/python3 tests/bench/torch_sequence.py THREADS RUNS

Prints "torch VERSION", then "CASE PASS MILLISECONDS" per case and pass (the
median over RUNS runs of the time per call; each run repeats the call for at
least 50 ms). Forward records autograd (as a training step does); backward
computes input and parameter gradients on a retained graph, timed alone.
"""
import statistics
import sys
import time

import torch


def timed(fn, runs):
    fn()
    times = []
    for _ in range(runs):
        calls = 0
        start = time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= 0.05:
                break
        times.append(elapsed / calls * 1e3)
    return statistics.median(times)


def bench(name, forward, x, runs):
    x = x.clone().requires_grad_()
    y = forward(x)
    dy = torch.randn_like(y)
    print(f"{name} forward {timed(lambda: forward(x), runs):.6f}", flush=True)
    print(f"{name} backward {timed(lambda: y.backward(dy, retain_graph=True), runs):.6f}", flush=True)


def main(argv):
    threads, runs = int(argv[1]), int(argv[2])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}", flush=True)
    lstm = torch.nn.LSTM(256, 256, batch_first=True)
    bench("lstm", lambda x: lstm(x)[0], torch.randn(1, 128, 256), runs)
    mha = torch.nn.MultiheadAttention(256, 8, bias=True, batch_first=True)
    mask = torch.ones(128, 128, dtype=torch.bool).triu(1)
    bench("attention", lambda x: mha(x, x, x, attn_mask=mask, need_weights=False)[0], torch.randn(1, 128, 256), runs)


if __name__ == "__main__":
    main(sys.argv)
