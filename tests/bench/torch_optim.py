#!/usr/bin/python3
"""The PyTorch side of bench-optim: torch.optim's Adam, SGD (momentum 0.9)
and RMSprop on the same four states.

Usage: /usr/bin/python3 tests/bench/torch_optim.py THREADS RUNS [cpu]

Prints "torch VERSION", then "optim O state S SECONDS" for each optimizer O
(0 Adam, 1 SGD, 2 RMSprop) and state S (0 ordinary, 1 stuck, 2 stuck 20%,
3 tiny 20%): the median over RUNS runs of the time a step takes, a run
repeating steps for at least 0.1 s.
"""
import statistics
import sys
import time

import torch

N_PARAMS = 262144
RUN_SECONDS = 0.1


def run(o, state, make, runs, clock, gen, idx):
    """Times optimizer o (made by make) in state (the module's docstring)."""
    p = torch.nn.Parameter((torch.rand(N_PARAMS, generator=gen) - 0.5) * 2e-4)
    opt = make([p])
    p.grad = (torch.rand(N_PARAMS, generator=gen) - 0.5) * 2e-3
    opt.step()  # moments of an ordinary first step
    special = torch.ones(N_PARAMS, dtype=torch.bool) if state == 1 else (idx % 5 == 0)
    g = (torch.rand(N_PARAMS, generator=gen) - 0.5) * 2e-3
    if state == 3:
        g = torch.where(special, (torch.rand(N_PARAMS, generator=gen) - 0.5) * 2e-20, g)
    elif state > 0:
        g = torch.where(special, torch.zeros(N_PARAMS), g)
        st = opt.state[p]
        if o == 0:
            st["exp_avg"][special] = 4 * 2.0 ** -149
            st["exp_avg_sq"][special] = 400 * 2.0 ** -149
        elif o == 1:
            st["momentum_buffer"][special] = 4 * 2.0 ** -149
        else:
            st["square_avg"][special] = 40 * 2.0 ** -149
    p.grad = g
    times = []
    for _ in range(runs):
        steps, t0 = 0, clock()
        while True:
            opt.step()
            steps += 1
            t1 = clock()
            if t1 - t0 >= RUN_SECONDS:
                break
        times.append((t1 - t0) / steps)
    print("optim", o, "state", state, statistics.median(times))


def main():
    threads, runs = int(sys.argv[1]), int(sys.argv[2])
    clock = time.thread_time if len(sys.argv) > 3 and sys.argv[3] == "cpu" else time.perf_counter
    torch.set_num_threads(threads)
    print("torch", torch.__version__)
    gen = torch.Generator().manual_seed(1)
    idx = torch.arange(N_PARAMS)
    for o, make in enumerate([lambda ps: torch.optim.Adam(ps, lr=1e-3),
                              lambda ps: torch.optim.SGD(ps, lr=1e-2, momentum=0.9),
                              lambda ps: torch.optim.RMSprop(ps, lr=1e-3)]):
        for state in range(4):
            run(o, state, make, runs, clock, gen, idx)


if __name__ == "__main__":
    main()
