"""Reference vectors for training: losses, schedulers, optimizers, clipping.

Losses (float32 inputs, reference in float64): CASE_y / CASE_logits, CASE_target
or CASE_labels (class indices stored as floats), CASE_mask, CASE_loss (1 value),
CASE_grad (dLoss/dy).

Schedules: sched_NAME_config holds [kind, base_lr, step_size, gamma, t_0, t_mult,
eta_min, warmup_steps, warmup_start_factor] (kind: 0 constant, 1 step,
2 exponential, 3 cosine_restarts) and sched_NAME_lr the learning rate torch
gives update 0..49 (scheduler.step() after every optimizer.step()).

Optimizers: a tiny MLP (tanh hidden layer, MSE) on fixed data (opt_x, opt_y,
opt_w1, opt_b1, opt_w2, opt_b2) trained 20 steps in float32 by torch.optim
under each schedule: optcfg_OPT holds [kind, lr, momentum, dampening, nesterov,
weight_decay, beta1, beta2, eps, amsgrad, alpha, centered, maximize, max_norm]
(kind: 0 sgd, 1 adam, 2 adamw, 3 rmsprop; max_norm 0 = no clipping, else
clip_grad_norm_ before each step), OPT__SCHED_params the final w1,b1,w2,b2
concatenated and OPT__SCHED_losses the 20 losses.

Clipping: clip_CASE_g0..g2 gradients, clip_CASE_config [max_norm, norm_type]
(norm_type 0 means infinity), clip_CASE_norm, clip_CASE_out0..out2.
"""
import math

import torch
import torch.nn.functional as F

STEPS = 20
SCHED_STEPS = 50

SCHEDULES = {
    # name: (kind, step_size, gamma, t_0, t_mult, eta_min, warmup_steps, start_factor)
    "constant": (0, 0, 0.0, 0, 0, 0.0, 0, 0.0),
    "step": (1, 5, 0.5, 0, 0, 0.0, 0, 0.0),
    "exponential": (2, 0, 0.9, 0, 0, 0.0, 0, 0.0),
    "cosine": (3, 0, 0.0, 4, 2, 0.001, 0, 0.0),
    "cosine_t1": (3, 0, 0.0, 6, 1, 0.0, 0, 0.0),
    "warmup_cosine": (3, 0, 0.0, 6, 1, 0.0005, 5, 0.1),
    "warmup_step": (1, 4, 0.7, 0, 0, 0.0, 3, 0.25),
    "warmup_constant": (0, 0, 0.0, 0, 0, 0.0, 4, 0.5),
    "warmup_exponential": (2, 0, 0.95, 0, 0, 0.0, 3, 0.2),
}
OPT_SCHEDULES = ["constant", "step", "exponential", "cosine", "warmup_cosine", "warmup_step"]

OPTIMIZERS = {
    # name: dict of the config fields that differ from the defaults below
    "sgd": dict(kind=0, lr=0.1),
    "sgd_momentum": dict(kind=0, lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
    "sgd_nesterov": dict(kind=0, lr=0.05, momentum=0.8, nesterov=1, weight_decay=0.001),
    "sgd_momentum_clip": dict(kind=0, lr=0.1, momentum=0.9, max_norm=0.3),
    "adam": dict(kind=1, lr=0.05),
    "adam_amsgrad_wd": dict(kind=1, lr=0.05, amsgrad=1, weight_decay=0.01, beta1=0.8, beta2=0.99),
    "adam_clip": dict(kind=1, lr=0.05, max_norm=0.1),
    "adamw": dict(kind=2, lr=0.05, weight_decay=0.1),
    "adamw_amsgrad": dict(kind=2, lr=0.05, weight_decay=0.01, amsgrad=1),
    "rmsprop": dict(kind=3, lr=0.01),
    "rmsprop_centered_momentum": dict(kind=3, lr=0.01, alpha=0.9, centered=1, momentum=0.9, weight_decay=0.01),
    "sgd_maximize": dict(kind=0, lr=0.01, momentum=0.5, maximize=1),
}
OPT_FIELDS = ["kind", "lr", "momentum", "dampening", "nesterov", "weight_decay", "beta1", "beta2", "eps",
              "amsgrad", "alpha", "centered", "maximize", "max_norm"]


def opt_config(spec):
    kind = spec["kind"]
    cfg = dict(momentum=0.0, dampening=0.0, nesterov=0, weight_decay=0.0, beta1=0.9, beta2=0.999, eps=1e-8,
               amsgrad=0, alpha=0.99, centered=0, maximize=0, max_norm=0.0)
    if kind == 2:
        cfg["weight_decay"] = 0.01
    cfg.update(spec)
    return cfg


def make_optimizer(cfg, params):
    kind = cfg["kind"]
    if kind == 0:
        return torch.optim.SGD(params, lr=cfg["lr"], momentum=cfg["momentum"], dampening=cfg["dampening"],
                               nesterov=bool(cfg["nesterov"]), weight_decay=cfg["weight_decay"],
                               maximize=bool(cfg["maximize"]))
    if kind in (1, 2):
        cls = torch.optim.Adam if kind == 1 else torch.optim.AdamW
        return cls(params, lr=cfg["lr"], betas=(cfg["beta1"], cfg["beta2"]), eps=cfg["eps"],
                   weight_decay=cfg["weight_decay"], amsgrad=bool(cfg["amsgrad"]), maximize=bool(cfg["maximize"]))
    return torch.optim.RMSprop(params, lr=cfg["lr"], alpha=cfg["alpha"], eps=cfg["eps"],
                               weight_decay=cfg["weight_decay"], momentum=cfg["momentum"],
                               centered=bool(cfg["centered"]), maximize=bool(cfg["maximize"]))


def make_scheduler(opt, sched):
    """The torch scheduler for a SCHEDULES entry, or None for a constant rate."""
    kind, step_size, gamma, t_0, t_mult, eta_min, warmup, factor = sched
    S = torch.optim.lr_scheduler
    if kind == 0:
        wrapped = None
    elif kind == 1:
        wrapped = S.StepLR(opt, step_size=step_size, gamma=gamma)
    elif kind == 2:
        wrapped = S.ExponentialLR(opt, gamma=gamma)
    else:
        wrapped = S.CosineAnnealingWarmRestarts(opt, T_0=t_0, T_mult=t_mult, eta_min=eta_min)
    if warmup == 0:
        return wrapped
    linear = S.LinearLR(opt, start_factor=factor, end_factor=1.0, total_iters=warmup)
    if wrapped is None:
        return linear
    return S.SequentialLR(opt, [linear, wrapped], milestones=[warmup])


def gen_losses(out, save):
    # mse
    y, t = torch.randn(5, 3), torch.randn(5, 3)
    yd = y.double().requires_grad_()
    loss = F.mse_loss(yd, t.double())
    loss.backward()
    for k, v in dict(y=y, target=t, loss=loss.detach().reshape(1), grad=yd.grad).items():
        save(out / f"mse_{k}.npy", v)
    # cross-entropy, with and without label smoothing
    for name, batch, classes, eps in [("ce", 7, 5, 0.0), ("ce_smooth", 6, 4, 0.15), ("ce_one", 1, 3, 0.3)]:
        logits = torch.randn(batch, classes) * 3
        labels = torch.randint(0, classes, (batch,))
        ld = logits.double().requires_grad_()
        loss = F.cross_entropy(ld, labels, label_smoothing=eps)
        loss.backward()
        for k, v in dict(logits=logits, labels=labels.float(), loss=loss.detach().reshape(1),
                         grad=ld.grad).items():
            save(out / f"{name}_{k}.npy", v)
    # binary cross-entropy with logits: large magnitudes and soft targets
    logits = torch.randn(6, 3) * 4
    logits[0, 0], logits[1, 1], logits[2, 2] = 40.0, -60.0, 0.0
    target = torch.rand(6, 3)
    target[0:2] = (target[0:2] > 0.5).float()
    ld = logits.double().requires_grad_()
    loss = F.binary_cross_entropy_with_logits(ld, target.double())
    loss.backward()
    for k, v in dict(logits=logits, target=target, loss=loss.detach().reshape(1), grad=ld.grad).items():
        save(out / f"bce_{k}.npy", v)
    # multi-head cross-entropy: batch 4, 3 heads, 5 classes, some heads masked
    batch, heads, classes, eps = 4, 3, 5, 0.2
    logits = torch.randn(batch, heads, classes) * 2
    labels = torch.randint(0, classes, (batch, heads))
    mask = torch.ones(batch, heads)
    mask[0, 1] = mask[2, 0] = mask[2, 2] = mask[3, 1] = 0
    ld = logits.double().requires_grad_()
    per_head = F.cross_entropy(ld.reshape(-1, classes), labels.reshape(-1), reduction="none", label_smoothing=eps)
    active = mask.reshape(-1).bool()
    loss = per_head[active].mean()
    loss.backward()
    # The documented equivalence: CrossEntropyLoss with masked heads ignored.
    ignored = torch.where(active, labels.reshape(-1), torch.full_like(labels.reshape(-1), -100))
    alt = F.cross_entropy(logits.double().reshape(-1, classes), ignored, ignore_index=-100, label_smoothing=eps)
    assert abs(alt.item() - loss.item()) < 1e-12, (alt.item(), loss.item())
    for k, v in dict(logits=logits, labels=labels.float(), mask=mask, loss=loss.detach().reshape(1),
                     grad=ld.grad).items():
        save(out / f"mhce_{k}.npy", v)
    # multi-head NLL on probabilities (a grid softmax's rows): its own generator,
    # so the draws of everything after it stay as they were
    g = torch.Generator().manual_seed(11)
    batch, heads, classes, eps = 3, 4, 5, 0.1
    probs = torch.softmax(torch.randn(batch, heads, classes, generator=g) * 2, dim=-1)
    labels = torch.randint(0, classes, (batch, heads), generator=g)
    mask = torch.ones(batch, heads)
    mask[0, 2] = mask[2, 1] = 0
    active = mask.reshape(-1).bool()
    pd = probs.double().requires_grad_()
    logp = torch.log(pd.reshape(-1, classes))
    q = torch.full((batch * heads, classes), eps / classes, dtype=torch.float64)
    q[torch.arange(batch * heads), labels.reshape(-1)] += 1 - eps
    per_head = -(q * logp).sum(dim=1)
    loss = per_head[active].mean()
    loss.backward()
    # without smoothing it is torch's NLLLoss on log p with masked heads ignored
    ignored = torch.where(active, labels.reshape(-1), torch.full_like(labels.reshape(-1), -100))
    plain = -(torch.log(probs.double().reshape(-1, classes))[torch.arange(batch * heads), labels.reshape(-1)])[active].mean()
    alt = F.nll_loss(torch.log(probs.double().reshape(-1, classes)), ignored, ignore_index=-100)
    assert abs(alt.item() - plain.item()) < 1e-12, (alt.item(), plain.item())
    for k, v in dict(probs=probs, labels=labels.float(), mask=mask, loss=loss.detach().reshape(1),
                     grad=pd.grad).items():
        save(out / f"mhnll_{k}.npy", v)


def gen_schedules(out, save):
    for name, sched in SCHEDULES.items():
        base = 0.1
        p = torch.zeros(1, requires_grad=True)
        opt = torch.optim.SGD([p], lr=base)
        sch = make_scheduler(opt, sched)
        lrs = []
        for _ in range(SCHED_STEPS):
            lrs.append(opt.param_groups[0]["lr"])
            opt.step()
            if sch is not None:
                sch.step()
        kind, step_size, gamma, t_0, t_mult, eta_min, warmup, factor = sched
        save(out / f"sched_{name}_config.npy",
             [kind, base, step_size, gamma, t_0, t_mult, eta_min, warmup, factor])
        save(out / f"sched_{name}_lr.npy", lrs)


def mlp_loss(x, y, w1, b1, w2, b2):
    return F.mse_loss(torch.tanh(x @ w1.t() + b1) @ w2.t() + b2, y)


def gen_optimizers(out, save):
    x = torch.randn(6, 3)
    y = torch.randn(6, 2)
    init = [torch.randn(4, 3) * 0.5, torch.randn(4) * 0.5, torch.randn(2, 4) * 0.5, torch.randn(2) * 0.5]
    for k, v in zip(["x", "y", "w1", "b1", "w2", "b2"], [x, y] + init):
        save(out / f"opt_{k}.npy", v)
    for oname, spec in OPTIMIZERS.items():
        cfg = opt_config(spec)
        save(out / f"optcfg_{oname}.npy", [cfg[f] for f in OPT_FIELDS])
        for sname in OPT_SCHEDULES:
            params = [t.clone().requires_grad_() for t in init]
            opt = make_optimizer(cfg, params)
            sch = make_scheduler(opt, SCHEDULES[sname])
            losses = []
            for _ in range(STEPS):
                opt.zero_grad()
                loss = mlp_loss(x, y, *params)
                loss.backward()
                losses.append(loss.item())
                if cfg["max_norm"] > 0:
                    torch.nn.utils.clip_grad_norm_(params, cfg["max_norm"])
                opt.step()
                if sch is not None:
                    sch.step()
            final = torch.cat([p.detach().reshape(-1) for p in params])
            save(out / f"{oname}__{sname}_params.npy", final)
            save(out / f"{oname}__{sname}_losses.npy", losses)


def gen_clipping(out, save):
    cases = [("l2_clips", 1.0, 2.0), ("l2_no_clip", 100.0, 2.0), ("inf", 0.5, math.inf), ("l1", 2.0, 1.0),
             ("l3", 0.7, 3.0)]
    for name, max_norm, norm_type in cases:
        grads = [torch.randn(3, 4), torch.randn(5), torch.randn(2, 2, 3) * 0.3]
        params = [torch.zeros_like(g, requires_grad=True) for g in grads]
        for p, g in zip(params, grads):
            p.grad = g.clone()
        total = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
        for i, g in enumerate(grads):
            save(out / f"clip_{name}_g{i}.npy", g)
            save(out / f"clip_{name}_out{i}.npy", params[i].grad)
        save(out / f"clip_{name}_config.npy", [max_norm, 0.0 if math.isinf(norm_type) else norm_type])
        save(out / f"clip_{name}_norm.npy", [total.item()])


def generate(out_dir, save):
    gen_losses(out_dir, save)
    gen_schedules(out_dir, save)
    gen_optimizers(out_dir, save)
    gen_clipping(out_dir, save)
