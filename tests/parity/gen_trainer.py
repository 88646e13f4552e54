"""Reference vectors for the trainer: a small network trained through the real
trainer path (loom_trainer_step) against torch.optim + lr_scheduler.

The network is dense 3→5, tanh, dense 5→2 (torch.nn.Linear layout: weight
out × in, bias out). The data are 11 fixed samples visited in file order in
batches of 4 (4, 4, 3: the last batch of each epoch is partial, so the mean
reduction over a short batch is covered too), 20 steps ≈ 6.7 epochs.

Files:
  x                 11 × 3 inputs
  labels            11 class indices (stored as floats) for cross-entropy
  targets           11 × 2 targets for mse
  init_w1, init_b1, init_w2, init_b2   the starting weights
  optcfg_OPT        [kind, lr, momentum, dampening, nesterov, weight_decay,
                     beta1, beta2, eps, amsgrad, alpha, centered, maximize,
                     max_norm] as in gen_train.py (max_norm: the trainer's
                     clip_norm, torch's clip_grad_norm_ before every step)
  sched_NAME_config [kind, base_lr, step_size, gamma, t_0, t_mult, eta_min,
                     warmup_steps, warmup_start_factor]; base_lr is the
                     optimizer's lr (stored as 1 here, scaled by optcfg's lr)
  CASE_params       w1, b1, w2, b2 after 20 steps, concatenated (float32 run)
  CASE_losses       the 20 batch losses before each update
CASE is LOSS__OPT__SCHED with LOSS "ce" or "mse".

Each case is also run in float64; the script prints the largest float32 vs
float64 difference so the 1e-5 tolerance can be judged against torch's own
rounding.
"""
import torch
import torch.nn.functional as F

from gen_train import SCHEDULES, make_optimizer, make_scheduler, opt_config, OPT_FIELDS

STEPS = 20
BATCH = 4
N_SAMPLES = 11
N_IN, N_HIDDEN, N_OUT = 3, 5, 2

OPTIMIZERS = {
    "sgd": dict(kind=0, lr=0.1),
    "sgd_nesterov_wd": dict(kind=0, lr=0.05, momentum=0.9, nesterov=1, weight_decay=0.01),
    "adam": dict(kind=1, lr=0.05),
    "adamw": dict(kind=2, lr=0.05, weight_decay=0.1),
    "rmsprop_centered_momentum": dict(kind=3, lr=0.01, alpha=0.9, centered=1, momentum=0.9, weight_decay=0.01),
    # the trainer's global-norm clipping in front of the optimizer
    "adam_clip": dict(kind=1, lr=0.05, max_norm=0.5),
}
# constant, StepLR, ExponentialLR, CosineAnnealingWarmRestarts, LinearLR warmup → cosine restarts
TRAINER_SCHEDULES = ["constant", "step", "exponential", "cosine", "warmup_cosine"]

# (loss, optimizer, schedule): every optimizer × every schedule under
# cross-entropy; mse and clipping on a few.
CASES = [("ce", o, s) for o in OPTIMIZERS if o != "adam_clip" for s in TRAINER_SCHEDULES]
CASES += [("mse", o, "warmup_cosine") for o in OPTIMIZERS if o != "adam_clip"]
CASES += [("ce", "adam_clip", "constant"), ("ce", "adam_clip", "cosine")]


def train(loss_name, cfg, sched, data, init, dtype):
    x, labels, targets = (t.to(dtype) if t.is_floating_point() else t for t in data)
    params = [t.to(dtype).clone().requires_grad_() for t in init]
    opt = make_optimizer(cfg, params)
    sch = make_scheduler(opt, sched)
    losses = []
    step = 0
    while step < STEPS:
        for start in range(0, N_SAMPLES, BATCH):  # file order, last batch partial
            if step == STEPS:
                break
            xb = x[start:start + BATCH]
            w1, b1, w2, b2 = params
            opt.zero_grad()
            y = torch.tanh(xb @ w1.t() + b1) @ w2.t() + b2
            if loss_name == "ce":
                loss = F.cross_entropy(y, labels[start:start + BATCH])
            else:
                loss = F.mse_loss(y, targets[start:start + BATCH])
            loss.backward()
            losses.append(loss.item())
            if cfg["max_norm"] > 0:
                torch.nn.utils.clip_grad_norm_(params, cfg["max_norm"])
            opt.step()
            if sch is not None:
                sch.step()
            step += 1
    return torch.cat([p.detach().reshape(-1) for p in params]), losses


def generate(out, save):
    x = torch.randn(N_SAMPLES, N_IN)
    labels = torch.randint(0, N_OUT, (N_SAMPLES,))
    targets = torch.randn(N_SAMPLES, N_OUT)
    init = [torch.randn(N_HIDDEN, N_IN) * 0.5, torch.randn(N_HIDDEN) * 0.5, torch.randn(N_OUT, N_HIDDEN) * 0.5,
            torch.randn(N_OUT) * 0.5]
    for k, v in dict(x=x, labels=labels.float(), targets=targets, init_w1=init[0], init_b1=init[1],
                     init_w2=init[2], init_b2=init[3]).items():
        save(out / f"{k}.npy", v)
    for oname, spec in OPTIMIZERS.items():
        cfg = opt_config(spec)
        save(out / f"optcfg_{oname}.npy", [cfg[f] for f in OPT_FIELDS])
    for sname in TRAINER_SCHEDULES:
        kind, step_size, gamma, t_0, t_mult, eta_min, warmup, factor = SCHEDULES[sname]
        save(out / f"sched_{sname}_config.npy", [kind, 1.0, step_size, gamma, t_0, t_mult, eta_min, warmup, factor])
    worst = (0.0, "")
    for loss_name, oname, sname in CASES:
        cfg = opt_config(OPTIMIZERS[oname])
        sched = SCHEDULES[sname]
        final, losses = train(loss_name, cfg, sched, (x, labels, targets), init, torch.float32)
        final64, _ = train(loss_name, cfg, sched, (x, labels, targets), init, torch.float64)
        # in units of the C test's tolerance: 1 means |d| = 1e-6 + 1e-5·|w|
        rel = ((final.double() - final64).abs() / (1e-6 + 1e-5 * final64.abs())).max().item()
        case = f"{loss_name}__{oname}__{sname}"
        worst = max(worst, (rel, case))
        save(out / f"{case}_params.npy", final)
        save(out / f"{case}_losses.npy", losses)
    print(f"trainer: {len(CASES)} cases; largest torch float32 vs float64 deviation "
          f"{worst[0]:.3g} × the tolerance 1e-6 + 1e-5·|w| ({worst[1]})")
