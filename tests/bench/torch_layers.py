#!/usr/bin/python3
"""The PyTorch side of bench-layers: times the same operations as the C bench.

Usage: /usr/bin/python3 tests/bench/torch_layers.py THREADS RUNS [cpu]

Prints one line per case and pass, "CASE PASS MILLISECONDS" (the median over
RUNS runs of the time per call), and a first line "torch VERSION". Each run
repeats the call until it has taken at least 50 ms. Forward runs with autograd
recording (as a training step does); backward computes the input and
parameter gradients (accumulating into .grad, like the engine) on a retained
graph, so it is timed alone. With "cpu", times are the thread's CPU time
(time.thread_time; with one thread torch computes on the calling thread).
"""
import statistics
import sys
import time

import torch

clock = time.perf_counter


def timed(fn, runs):
    fn()  # warm-up (allocations, lazy initialisation)
    times = []
    for _ in range(runs):
        calls = 0
        start = clock()
        while True:
            fn()
            calls += 1
            elapsed = clock() - start
            if elapsed >= 0.05:
                break
        times.append(elapsed / calls * 1e3)
    return statistics.median(times)


def bench(name, module, x, runs):
    x = x.clone().requires_grad_()
    y = module(x)
    dy = torch.randn_like(y)
    print(f"{name} forward {timed(lambda: module(x), runs):.6f}", flush=True)

    # The graph is kept, so backward alone can be repeated on one forward.
    print(f"{name} backward {timed(lambda: y.backward(dy, retain_graph=True), runs):.6f}", flush=True)


def main(argv):
    global clock
    threads, runs = int(argv[1]), int(argv[2])
    if len(argv) > 3 and argv[3] == "cpu":
        clock = time.thread_time
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}", flush=True)
    bench("dense", torch.nn.Linear(1024, 1024), torch.randn(64, 1024), runs)
    bench("conv2d", torch.nn.Conv2d(32, 64, 3, padding=1), torch.randn(8, 32, 64, 64), runs)
    mlp = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 8), torch.nn.Tanh(),
                              torch.nn.Linear(8, 1))
    bench("mlp", mlp, torch.randn(10, 2), runs)


if __name__ == "__main__":
    main(sys.argv)
