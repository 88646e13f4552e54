#!/usr/bin/python3
"""The PyTorch side of bench-train: the same training loops as the C bench.

Usage: /usr/bin/python3 tests/bench/torch_train.py THREADS RUNS [cpu]

Prints a first line "torch VERSION", then one line per workload,
"NAME STEPS_PER_SECOND", the median over RUNS runs. Each run repeats training
steps until it has taken at least 0.2 s. A step is what loom_trainer_step
does: take the next mini-batch of a per-epoch shuffle, zero the gradients,
forward, loss (its value read back, as the trainer reports it), backward,
optimizer step.

  playground  2-8-8-1 MLP (tanh), batch 10, BCE on logits, SGD (lr 0.03,
              momentum 0.9), 200 xor points
  mlp784      784-256-10 MLP (relu), batch 64, cross-entropy, Adam (lr 1e-3),
              1024 samples of 10 Gaussian clusters
  cnn         the digits CNN example (conv 1->4 3x3 pad 1, relu, conv 4->8 3x3
              stride 2 pad 1, relu, flatten, linear 128->10), batch 32,
              cross-entropy, Adam (lr 1e-3), 1024 1x8x8 images of 10 Gaussian
              clusters
"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F

RUN_SECONDS = 0.2
clock = time.perf_counter  # time.thread_time with "cpu": the thread's CPU time


class Loop:
    def __init__(self, model, x, y, batch, loss_fn, opt):
        self.model, self.x, self.y, self.batch, self.loss_fn, self.opt = model, x, y, batch, loss_fn, opt
        self.perm = torch.randperm(len(x))
        self.pos = 0

    def step(self):
        if self.pos >= len(self.x):  # a new epoch, a new order
            self.perm = torch.randperm(len(self.x))
            self.pos = 0
        idx = self.perm[self.pos:self.pos + self.batch]
        self.pos += self.batch
        xb, yb = self.x[idx], self.y[idx]
        self.opt.zero_grad()
        loss = self.loss_fn(self.model(xb), yb)
        loss.backward()
        self.opt.step()
        return loss.item()


def steps_per_second(loop, runs):
    for _ in range(5):  # warm-up: allocations, optimizer state
        loop.step()
    rates = []
    for _ in range(runs):
        steps = 0
        start = clock()
        while True:
            loop.step()
            steps += 1
            elapsed = clock() - start
            if elapsed >= RUN_SECONDS:
                break
        rates.append(steps / elapsed)
    return statistics.median(rates)


def playground():
    x = torch.rand(200, 2) * 2 - 1
    y = ((x[:, 0] > 0) ^ (x[:, 1] > 0)).float().unsqueeze(1)
    model = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 8), torch.nn.Tanh(),
                                torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9)
    return Loop(model, x, y, 10, F.binary_cross_entropy_with_logits, opt)


def mlp784():
    centres = torch.rand(10, 784) * 2 - 1
    labels = torch.arange(1024) % 10
    x = centres[labels] + 0.3 * torch.randn(1024, 784)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return Loop(model, x, labels, 64, F.cross_entropy, opt)


def cnn():
    centres = torch.rand(10, 64) * 2 - 1
    labels = torch.arange(1024) % 10
    x = (centres[labels] + 0.3 * torch.randn(1024, 64)).reshape(1024, 1, 8, 8)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv2d(4, 8, 3, stride=2, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(128, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return Loop(model, x, labels, 32, F.cross_entropy, opt)


def main(argv):
    global clock
    threads, runs = int(argv[1]), int(argv[2])
    if len(argv) > 3 and argv[3] == "cpu":
        clock = time.thread_time
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}", flush=True)
    print(f"playground {steps_per_second(playground(), runs):.3f}", flush=True)
    print(f"mlp784 {steps_per_second(mlp784(), runs):.3f}", flush=True)
    print(f"cnn {steps_per_second(cnn(), runs):.3f}", flush=True)


if __name__ == "__main__":
    main(sys.argv)
