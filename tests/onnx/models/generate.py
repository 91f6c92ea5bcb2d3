#!/usr/bin/python3
"""Writes the ONNX test models of tests/onnx/models/ with PyTorch (Debian's python3-torch,
python3-torchvision, python3-onnx; the tests themselves never need them).

Every model gets seeded random weights, batch-norm statistics far from the identity, reduced
widths and resolutions (the emulated NVDLA is slow), and is exported with torch.onnx.export at
opset 13 (a few at the opset that introduced their operator). Per model it writes, in the layout
of ONNX's own test data (libonnx-testdata):

    <name>/model.onnx
    <name>/test_data_set_<k>/input_<i>.pb   (TensorProto, float32)
    <name>/test_data_set_<k>/output_<i>.pb  (PyTorch's float32 outputs)

Run from anywhere: /usr/bin/python3 tests/onnx/models/generate.py [--only NAME...]
(--out DIR writes elsewhere; --measured-statistics sets the batch-norm statistics from data
instead, an experiment docs/onnx.md describes: it makes these random networks chaotic.)

The trained classifiers (<arch>_trained/) are written by generate_trained.py beside this file,
which trains these architectures on Fashion-MNIST; this script leaves them alone.
"""

import argparse
import io
import os
import sys

import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.models as tvm
from torchvision.models import efficientnet, mobilenetv3

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20261127
STATISTICS_SEED = 20261128


def randomize_batch_norms(model, generator):
    """Batch-norm statistics and affine parameters far from the identity."""
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm1d)):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=generator) * 0.2)
            m.running_var.copy_(torch.rand(n, generator=generator) * 1.5 + 0.5)
            m.weight.data.copy_(torch.rand(n, generator=generator) + 0.5)
            m.bias.data.copy_(torch.randn(n, generator=generator) * 0.2)


def measure_batch_norm_statistics(model, shapes, name):
    """Every running mean and variance replaced by the statistics of the activations it
    normalizes: one pass over 64 seeded normal inputs (drawn like the tests' inputs, from a seed
    of its own) with only the batch norms in training mode (cumulative average; no dropout or
    stochastic depth). Not used for the stored models: it makes these random networks chaotic
    (docs/onnx.md)."""
    norms = [m for m in model.modules() if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm1d))]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # the cumulative average
        m.train()
    generator = torch.Generator().manual_seed(STATISTICS_SEED + sum(map(ord, name)))
    model(*[torch.randn((64,) + tuple(s[1:]), generator=generator) for s in shapes])
    for m in norms:
        m.momentum = 0.1  # exported as the ONNX attribute: as without the measurement
        m.eval()


# ---- single operators ----


class Clip(nn.Module):
    def __init__(self, lo, hi):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.lo, self.hi = lo, hi

    def forward(self, x):
        return torch.clamp(self.conv(x), self.lo, self.hi)


class Act(nn.Module):
    """A convolution, then one activation."""

    def __init__(self, act):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.act = act

    def forward(self, x):
        return self.act(self.conv(x))


class SiluByHand(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class MishByHand(nn.Module):
    def forward(self, x):
        return x * torch.tanh(F.softplus(x))


class Broadcast(nn.Module):
    """A [N,C,H,W] tensor op a computed [N,C,1,1], [N,1,H,W] or [N,1,1,1] one."""

    def __init__(self, op, form):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.op, self.form = op, form

    def forward(self, x):
        y = self.conv(x)
        if self.form == "channel":
            s = torch.sigmoid(y.mean((2, 3), keepdim=True)) + 0.5
        elif self.form == "plane":
            s = torch.sigmoid(y.amax(1, keepdim=True)) + 0.5
        else:
            s = torch.sigmoid(y.mean((1, 2, 3), keepdim=True)) + 0.5
        return {"mul": y * s, "add": y + s, "sub": s - y, "div": y / s}[self.op]


class Reduce(nn.Module):
    def __init__(self, kind, keep):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.kind, self.keep = kind, keep

    def forward(self, x):
        y = F.relu(self.conv(x))  # as networks pool activations
        if self.kind == "mean":
            return y.mean((2, 3), keepdim=self.keep)
        if self.kind == "max":
            return y.amax((2, 3), keepdim=self.keep)
        return y.sum(1, keepdim=self.keep)  # ReduceSum over the channels: the CPU


class PadThen(nn.Module):
    def __init__(self, then, value):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.then, self.value = then, value
        self.conv2 = nn.Conv2d(8, 8, 3)

    def forward(self, x):
        y = F.pad(self.conv(x), (1, 2, 2, 1), value=self.value)
        return self.conv2(y) if self.then == "conv" else F.max_pool2d(y, 2)


class Resize(nn.Module):
    def __init__(self, mode, form):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.mode, self.form = mode, form

    def forward(self, x):
        y = self.conv(x)
        align = False if self.mode == "bilinear" else None
        if self.form == "scale":
            return F.interpolate(y, scale_factor=2, mode=self.mode, align_corners=align)
        return F.interpolate(y, size=(y.shape[2] * 3, y.shape[3] * 2), mode=self.mode,
                             align_corners=align)


class ChannelShuffle(nn.Module):
    def __init__(self, groups):
        super().__init__()
        self.conv = nn.Conv2d(3, 12, 3, padding=1)
        self.groups = groups

    def forward(self, x):
        y = self.conv(x)
        n, c, h, w = y.shape
        y = y.view(n, self.groups, c // self.groups, h, w).transpose(1, 2).contiguous()
        return y.view(n, -1, h, w)


class Pieces(nn.Module):
    """Split/Slice/Gather along the channels, the pieces processed and concatenated."""

    def __init__(self, how):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.how = how
        self.a = nn.Conv2d(8 if how != "slice" else 5, 4, 1)

    def forward(self, x):
        y = self.conv(x)
        if self.how == "split":
            p, q = y.chunk(2, dim=1)
        elif self.how == "slice":
            p, q = y[:, 3:8], y[:, 8:]
        else:  # gather one channel
            p, q = y[:, 0:8], y[:, 9]
            q = q.unsqueeze(1)
        return torch.cat([self.a(p), F.relu(q)], 1)


class CpuOps(nn.Module):
    """Operators without a hardware mapping, as CPU tasks between hardware layers."""

    def __init__(self, which):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 1)
        self.which = which
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        y = self.conv(x)
        if self.which == "softmax_w":
            y = torch.softmax(y, dim=3)
        elif self.which == "exp_sqrt":
            y = torch.sqrt(torch.exp(-y.abs()) + 1.0)
        elif self.which == "matmul":
            y = torch.matmul(y, y.transpose(2, 3)) * 0.1
        elif self.which == "layernorm":
            y = self.norm(y)
        elif self.which == "transpose":
            y = y.transpose(2, 3)
        elif self.which == "reshape":
            y = y.reshape(y.shape[0], 8, 32, 8)
        elif self.which == "gather_h":
            y = y[:, :, 2:10:2, :]
        return self.conv2(y)


class TwoInputsTwoOutputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, padding=1)
        self.b = nn.Conv2d(3, 8, 3, padding=1)
        self.c = nn.Conv2d(8, 4, 1)

    def forward(self, x, y):
        s = F.relu(self.a(x)) + torch.sigmoid(self.b(y))
        return self.c(s), F.max_pool2d(s, 2)


# ---- blocks ----


def conv_bn(cin, cout, k=3, stride=1, groups=1, act=nn.ReLU):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, c=16, expand=4, act=nn.ReLU6, se=False):
        super().__init__()
        h = c * expand
        layers = [conv_bn(c, h, 1, act=act), conv_bn(h, h, 3, groups=h, act=act)]
        if se:
            layers.append(SqueezeExcite(h, nn.Hardsigmoid))
        layers.append(conv_bn(h, c, 1, act=None))
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.body(x)


class SqueezeExcite(nn.Module):
    def __init__(self, c, gate=nn.Sigmoid):
        super().__init__()
        self.fc1 = nn.Conv2d(c, max(c // 4, 8), 1)
        self.fc2 = nn.Conv2d(max(c // 4, 8), c, 1)
        self.gate = gate()

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * self.gate(self.fc2(F.relu(self.fc1(s))))


class Stem(nn.Module):
    def __init__(self, body, cin=3, c=16):
        super().__init__()
        self.stem = conv_bn(cin, c, 3)
        self.body = body

    def forward(self, x):
        return self.body(self.stem(x))


class DenseBlock(nn.Module):
    def __init__(self, c=16, growth=8, layers=3):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.Sequential(nn.BatchNorm2d(c + i * growth), nn.ReLU(),
                          nn.Conv2d(c + i * growth, 2 * growth, 1, bias=False),
                          nn.BatchNorm2d(2 * growth), nn.ReLU(),
                          nn.Conv2d(2 * growth, growth, 3, padding=1, bias=False))
            for i in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = torch.cat([x, layer(x)], 1)
        return x


class YoloNeck(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = conv_bn(16, 32, 3, stride=2, act=lambda: nn.LeakyReLU(0.1))
        self.lateral = conv_bn(32, 16, 1, act=lambda: nn.LeakyReLU(0.1))
        self.fuse = conv_bn(32, 16, 3, act=lambda: nn.LeakyReLU(0.1))

    def forward(self, x):
        deep = self.down(x)
        up = F.interpolate(self.lateral(deep), scale_factor=2, mode="nearest")
        return self.fuse(torch.cat([up, x], 1))


class UNetDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = conv_bn(16, 32, 3, stride=2)
        self.up = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.bilinear = conv_bn(32, 8, 1)
        self.dec = conv_bn(40, 16, 3)

    def forward(self, x):
        e = self.enc(x)
        b = F.interpolate(self.bilinear(e), scale_factor=2, mode="bilinear", align_corners=False)
        return self.dec(torch.cat([self.up(e), x, b], 1))


class ShuffleUnit(nn.Module):
    def __init__(self):
        super().__init__()
        self.unit = tvm.shufflenetv2.InvertedResidual(16, 16, 1)

    def forward(self, x):
        return self.unit(x)


# ---- whole models ----


class SmallResNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = conv_bn(3, 16, 3, stride=2)

        def block(cin, cout, stride):
            return tvm.resnet.BasicBlock(
                cin, cout, stride,
                downsample=None if stride == 1 and cin == cout else nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)))

        self.layers = nn.Sequential(block(16, 16, 1), block(16, 32, 2), block(32, 64, 2))
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class TinyYolo(nn.Module):
    """YOLO-v3-tiny's shape: a strided backbone, two detection heads, upsample + concat."""

    def __init__(self, anchors=3, classes=4):
        super().__init__()
        leaky = lambda: nn.LeakyReLU(0.1)  # noqa: E731
        out = anchors * (5 + classes)
        self.b1 = nn.Sequential(conv_bn(3, 8, act=leaky), nn.MaxPool2d(2, 2),
                                conv_bn(8, 16, act=leaky), nn.MaxPool2d(2, 2),
                                conv_bn(16, 32, act=leaky), nn.MaxPool2d(2, 2))
        self.b2 = nn.Sequential(conv_bn(32, 64, act=leaky), nn.MaxPool2d(2, 2),
                                conv_bn(64, 64, act=leaky), conv_bn(64, 32, 1, act=leaky))
        self.head1 = nn.Sequential(conv_bn(32, 64, act=leaky), nn.Conv2d(64, out, 1))
        self.lateral = conv_bn(32, 16, 1, act=leaky)
        self.head2 = nn.Sequential(conv_bn(48, 32, act=leaky), nn.Conv2d(32, out, 1))

    def forward(self, x):
        route = self.b1(x)
        deep = self.b2(route)
        up = F.interpolate(self.lateral(deep), scale_factor=2, mode="nearest")
        return self.head1(deep), self.head2(torch.cat([up, route], 1))


def mobilenet_v2():
    setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 2, 2], [6, 64, 2, 2], [6, 96, 1, 1]]
    m = tvm.MobileNetV2(num_classes=10, width_mult=0.5, inverted_residual_setting=setting)
    # torchvision keeps 1280 final channels at any width: 128 here.
    cin = m.features[-1][0].in_channels
    m.features[-1] = conv_bn(cin, 128, 1, act=nn.ReLU6)
    m.classifier[-1] = nn.Linear(128, 10)
    return m


def mobilenet_v3_small():
    setting, last = mobilenetv3._mobilenet_v3_conf("mobilenet_v3_small", width_mult=0.25)
    return tvm.MobileNetV3(setting, 128, num_classes=10)


def efficientnet_b0():
    setting, last = efficientnet._efficientnet_conf("efficientnet_b0", width_mult=0.2,
                                                    depth_mult=0.25)
    return tvm.EfficientNet(setting, 0.2, num_classes=10, last_channel=128)


def shufflenet_v2():
    return tvm.ShuffleNetV2([2, 2, 2], [16, 32, 64, 128, 128], num_classes=10)


def mnasnet():
    m = tvm.MNASNet(0.2, num_classes=10)
    m.layers[-3] = nn.Conv2d(m.layers[-3].in_channels, 128, 1, bias=False)
    m.layers[-2] = nn.BatchNorm2d(128)
    m.classifier[-1] = nn.Linear(128, 10)
    return m


def densenet121_reduced():
    # DenseNet-121's four blocks (6, 12, 24, 16 layers) at a growth rate of 4.
    return tvm.DenseNet(growth_rate=4, block_config=(6, 12, 24, 16), num_init_features=16,
                        bn_size=2, num_classes=10)


# name -> (constructor, input shapes, opset, samples)
def catalogue():
    img = [(1, 3, 32, 32)]
    small = [(1, 3, 16, 16)]
    models = {
        # operators alone
        "op_clip_relu6": (lambda: Clip(0.0, 6.0), small, 13),
        "op_clip_range": (lambda: Clip(-0.5, 0.75), small, 13),
        "op_hardsigmoid": (lambda: Act(nn.Hardsigmoid()), small, 13),
        "op_hardswish": (lambda: Act(nn.Hardswish()), small, 13),
        "op_hardswish_opset14": (lambda: Act(nn.Hardswish()), small, 14),
        "op_silu": (lambda: Act(nn.SiLU()), small, 13),
        "op_silu_by_hand": (lambda: Act(SiluByHand()), small, 13),
        "op_mish": (lambda: Act(MishByHand()), small, 13),
        "op_mul_channel": (lambda: Broadcast("mul", "channel"), small, 13),
        "op_add_plane": (lambda: Broadcast("add", "plane"), small, 13),
        "op_sub_scalar": (lambda: Broadcast("sub", "scalar"), small, 13),
        "op_div_channel": (lambda: Broadcast("div", "channel"), small, 13),
        "op_reduce_mean": (lambda: Reduce("mean", True), small, 13),
        "op_reduce_max_flat": (lambda: Reduce("max", False), small, 13),
        "op_reduce_sum_channels": (lambda: Reduce("sum", True), small, 13),
        "op_pad_conv": (lambda: PadThen("conv", 0.0), small, 13),
        "op_pad_value_pool": (lambda: PadThen("pool", -1.5), small, 13),
        "op_resize_nearest": (lambda: Resize("nearest", "scale"), small, 13),
        "op_resize_nearest_sizes": (lambda: Resize("nearest", "size"), small, 13),
        "op_resize_bilinear": (lambda: Resize("bilinear", "scale"), small, 13),
        "op_channel_shuffle": (lambda: ChannelShuffle(3), small, 13),
        "op_split": (lambda: Pieces("split"), small, 13),
        "op_slice": (lambda: Pieces("slice"), small, 13),
        "op_gather": (lambda: Pieces("gather"), small, 13),
        "op_softmax_w": (lambda: CpuOps("softmax_w"), small, 13),
        "op_exp_sqrt": (lambda: CpuOps("exp_sqrt"), small, 13),
        "op_matmul": (lambda: CpuOps("matmul"), small, 13),
        "op_layernorm": (lambda: CpuOps("layernorm"), small, 17),
        "op_transpose": (lambda: CpuOps("transpose"), small, 13),
        "op_reshape": (lambda: CpuOps("reshape"), small, 13),
        "op_gather_rows": (lambda: CpuOps("gather_h"), small, 13),
        "op_two_inputs_two_outputs": (TwoInputsTwoOutputs, [(1, 3, 16, 16)] * 2, 13),
        "op_batch2": (lambda: Act(nn.Hardswish()), [(2, 3, 16, 16)], 13),
        # blocks
        "block_inverted_residual": (lambda: Stem(InvertedResidual()), small, 13),
        "block_se": (lambda: Stem(SqueezeExcite(16)), small, 13),
        "block_hardswish": (lambda: Stem(InvertedResidual(act=nn.Hardswish, se=True)), small,
                            13),
        "block_channel_shuffle": (lambda: Stem(ShuffleUnit()), small, 13),
        "block_dense": (lambda: Stem(DenseBlock()), small, 13),
        "block_yolo_neck": (lambda: Stem(YoloNeck()), small, 13),
        "block_unet_decoder": (lambda: Stem(UNetDecoder()), small, 13),
        # whole models
        "mobilenet_v2": (mobilenet_v2, img, 13),
        "mobilenet_v3_small": (mobilenet_v3_small, img, 13),
        "efficientnet_b0": (efficientnet_b0, img, 13),
        "shufflenet_v2": (shufflenet_v2, img, 13),
        "mnasnet": (mnasnet, img, 13),
        "densenet121_reduced": (densenet121_reduced, img, 13),
        "tiny_yolo": (TinyYolo, [(1, 3, 48, 48)], 13),
        "resnet_small": (SmallResNet, img, 13),
    }
    return models


def tensor_file(path, array, name):
    t = onnx.numpy_helper.from_array(array, name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def write_model(name, make, shapes, opset, out, measured_statistics, samples=2):
    generator = torch.Generator().manual_seed(SEED + sum(map(ord, name)))
    torch.manual_seed(SEED + len(name))
    model = make().eval()
    with torch.no_grad():
        for p in model.parameters():  # seeded weights, whatever the constructor did
            if p.dim() > 1:
                fan_in = p[0].numel()
                p.copy_(torch.randn(p.shape, generator=generator) * (2.0 / fan_in) ** 0.5)
            else:
                p.copy_(torch.randn(p.shape, generator=generator) * 0.1)
        randomize_batch_norms(model, generator)
        if measured_statistics:
            measure_batch_norm_statistics(model, shapes, name)
    inputs = [torch.randn(s, generator=generator) for s in shapes]
    names = ["input_%d" % i for i in range(len(shapes))]
    buffer = io.BytesIO()
    with torch.no_grad():
        outputs = model(*inputs)
    outputs = list(outputs) if isinstance(outputs, tuple) else [outputs]
    output_names = ["output_%d" % i for i in range(len(outputs))]
    torch.onnx.export(model, tuple(inputs), buffer, opset_version=opset, input_names=names,
                      output_names=output_names, do_constant_folding=True)
    proto = onnx.load_from_string(buffer.getvalue())
    onnx.checker.check_model(proto)
    directory = os.path.join(out, name)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "model.onnx"), "wb") as f:
        f.write(buffer.getvalue())
    for k in range(samples):
        if k:
            inputs = [torch.randn(s, generator=generator) for s in shapes]
        with torch.no_grad():
            outs = model(*inputs)
        outs = list(outs) if isinstance(outs, tuple) else [outs]
        data = os.path.join(directory, "test_data_set_%d" % k)
        os.makedirs(data, exist_ok=True)
        for i, t in enumerate(inputs):
            tensor_file(os.path.join(data, "input_%d.pb" % i), t.numpy(), names[i])
        for i, t in enumerate(outs):
            tensor_file(os.path.join(data, "output_%d.pb" % i), t.numpy(), output_names[i])
    macs = count_macs(model, inputs)
    ops = sorted({n.op_type for n in proto.graph.node})
    print("%-28s %7.2f MMAC %6d KiB  %s" % (name, macs / 1e6, len(buffer.getvalue()) // 1024,
                                           " ".join(ops)))


def count_macs(model, inputs):
    total = [0]

    def hook(m, inp, out):
        if isinstance(m, nn.Conv2d):
            total[0] += out.numel() * m.in_channels // m.groups * m.kernel_size[0] * \
                m.kernel_size[1]
        elif isinstance(m, nn.ConvTranspose2d):
            total[0] += inp[0].numel() * m.out_channels // m.groups * m.kernel_size[0] * \
                m.kernel_size[1]
        elif isinstance(m, nn.Linear):
            total[0] += out.numel() * m.in_features

    handles = [m.register_forward_hook(hook) for m in model.modules()]
    with torch.no_grad():
        model(*inputs)
    for h in handles:
        h.remove()
    return total[0] // inputs[0].shape[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", help="model names (default: all)")
    parser.add_argument("--out", default=HERE, help="the directory to write (default: beside "
                        "this script)")
    parser.add_argument("--measured-statistics", action="store_true",
                        help="batch-norm running statistics measured on data (an experiment "
                        "of docs/onnx.md, not the stored models)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for name, (make, shapes, opset) in catalogue().items():
        if args.only and name not in args.only:
            continue
        write_model(name, make, shapes, opset, args.out, args.measured_statistics)
    return 0


if __name__ == "__main__":
    sys.exit(main())
