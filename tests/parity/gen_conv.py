"""Reference vectors for conv1d/2d/3d and conv_transpose1d/2d/3d.

Each case CASE writes CASE_params (the hyperparameters, see PARAMS_LAYOUT),
CASE_x, CASE_weight, CASE_bias (absent without bias), CASE_y, CASE_dy (a random
upstream gradient), CASE_dx, CASE_dweight and CASE_dbias. Inputs are drawn in
float32; the reference is computed in float64 from exactly those values.
"""
import torch
import torch.nn.functional as F

# CASE_params is a flat float32 vector:
# [dims, transposed, batch, in_channels, out_channels, groups, bias,
#  in_size[3], kernel[3], stride[3], padding[3], dilation[3], output_padding[3]]
# with unused trailing spatial entries set to 0.
PARAMS_LAYOUT = "dims transposed batch in out groups bias in_size kernel stride padding dilation output_padding"

CASES = [
    # name, dims, transposed, batch, cin, cout, groups, bias, in_size, kernel, stride, padding, dilation, output_padding
    ("c1_basic", 1, False, 2, 3, 4, 1, True, (11,), (3,), (2,), (1,), (1,), (0,)),
    ("c1_groups_dil", 1, False, 3, 4, 6, 2, False, (13,), (4,), (1,), (3,), (2,), (0,)),
    ("c1_depthwise", 1, False, 1, 6, 3, 3, True, (7,), (3,), (3,), (0,), (1,), (0,)),
    ("c2_basic", 2, False, 2, 3, 5, 1, True, (7, 9), (3, 2), (2, 1), (1, 0), (1, 2), (0, 0)),
    ("c2_groups", 2, False, 2, 4, 6, 2, False, (6, 5), (3, 3), (1, 1), (2, 1), (2, 1), (0, 0)),
    ("c2_pointwise", 2, False, 1, 4, 4, 4, True, (5, 3), (1, 1), (1, 1), (0, 0), (1, 1), (0, 0)),
    ("c2_depthwise_s2", 2, False, 2, 3, 6, 3, True, (8, 7), (3, 3), (2, 2), (1, 1), (1, 1), (0, 0)),
    ("c3_basic", 3, False, 2, 2, 3, 1, True, (5, 4, 6), (2, 3, 3), (1, 2, 1), (1, 0, 1), (1, 1, 2), (0, 0, 0)),
    ("c3_groups", 3, False, 1, 4, 4, 2, False, (3, 5, 4), (3, 1, 2), (2, 1, 1), (1, 1, 1), (1, 1, 1), (0, 0, 0)),
    ("t1_basic", 1, True, 2, 3, 4, 1, True, (7,), (3,), (2,), (1,), (1,), (1,)),
    ("t1_groups_dil", 1, True, 2, 4, 6, 2, False, (5,), (2,), (3,), (0,), (2,), (2,)),
    ("t2_basic", 2, True, 2, 3, 2, 1, True, (4, 5), (3, 3), (2, 1), (1, 0), (1, 1), (1, 0)),
    ("t2_groups", 2, True, 1, 4, 6, 2, True, (3, 3), (2, 3), (2, 2), (0, 1), (1, 2), (0, 1)),
    ("t3_basic", 3, True, 2, 2, 3, 1, True, (3, 2, 4), (2, 2, 3), (2, 1, 2), (0, 0, 1), (1, 1, 1), (1, 0, 1)),
    ("t3_groups", 3, True, 1, 4, 2, 2, False, (2, 3, 2), (3, 2, 2), (1, 2, 1), (1, 0, 0), (2, 1, 1), (0, 1, 0)),
]

CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def pad3(t):
    return list(t) + [0] * (3 - len(t))


def generate(out_dir, save):
    for (name, dims, transposed, batch, cin, cout, groups, bias, in_size, kernel, stride, padding, dilation,
         output_padding) in CASES:
        x = torch.randn(batch, cin, *in_size)
        if transposed:
            w = torch.randn(cin, cout // groups, *kernel) * 0.5
        else:
            w = torch.randn(cout, cin // groups, *kernel) * 0.5
        b = torch.randn(cout) if bias else None

        xd = x.double().requires_grad_()
        wd = w.double().requires_grad_()
        bd = b.double().requires_grad_() if bias else None
        if transposed:
            y = CONV_T[dims](xd, wd, bd, stride=stride, padding=padding, output_padding=output_padding,
                             groups=groups, dilation=dilation)
        else:
            y = CONV[dims](xd, wd, bd, stride=stride, padding=padding, dilation=dilation, groups=groups)
        dy = torch.randn(y.shape)
        (y * dy.double()).sum().backward()

        params = [dims, int(transposed), batch, cin, cout, groups, int(bias)]
        for t in (in_size, kernel, stride, padding, dilation, output_padding):
            params += pad3(t)
        save(out_dir / f"{name}_params.npy", torch.tensor(params, dtype=torch.float32))
        save(out_dir / f"{name}_x.npy", x)
        save(out_dir / f"{name}_weight.npy", w)
        save(out_dir / f"{name}_y.npy", y)
        save(out_dir / f"{name}_dy.npy", dy)
        save(out_dir / f"{name}_dx.npy", xd.grad)
        save(out_dir / f"{name}_dweight.npy", wd.grad)
        if bias:
            save(out_dir / f"{name}_bias.npy", b)
            save(out_dir / f"{name}_dbias.npy", bd.grad)
