#!/usr/bin/python3
"""Trains and writes the trained depthwise classifiers of tests/onnx/models/ (<arch>_trained/).

generate.py's classifiers have random weights and batch-norm statistics, so their logits hardly
depend on the input and their top two are often nearly tied: int8 top-1 agreement with the float
model is decided by those ties (docs/onnx.md). Users deploy trained networks, whose logits have
real margins. This script trains the same torchvision architectures at the same reduced widths
briefly on Fashion-MNIST (Debian's dataset-fashion-mnist) with a fixed seed: a 1-channel stem,
10 classes, the 28x28 images zero-padded to 32x32 and normalized ((pixel / 255 - 0.286) / 0.353).
Per model it writes, in generate.py's layout:

    <name>/model.onnx                          (torch.onnx.export, opset 13)
    <name>/test_data_set_<k>/input_0.pb        32 test images of a seeded random draw
    <name>/test_data_set_<k>/output_0.pb       PyTorch's float logits for them
    <name>/test_data_set_<k>/label.txt         the image's Fashion-MNIST class
    <name>/calibration_images.pb               64 training images [64, 1, 32, 32], for int8
                                               calibration

Takes 10 s to 3 minutes of one core per model (the model and the machine's load decide).
Run from anywhere: /usr/bin/python3 tests/onnx/models/generate_trained.py [--only NAME...]
"""

import argparse
import io
import os
import sys
import time

import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402  (the same reduced architectures)

sys.path.insert(0, os.path.join(generate.HERE, "..", "..", "..", "tools", "fmnist_resnet"))
import train  # noqa: E402  (the main job's Fashion-MNIST reader)

HERE = generate.HERE
SEED = 20261128
DATASET_DIR = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.286, 0.353
TRAIN_IMAGES = 20000
EPOCHS = 2
TEST_IMAGES = 32
CALIBRATION_IMAGES = 64  # with 8, MnasNet's and MobileNetV3's int8 cosine is 0.96-0.98


def load(split):
    images, labels = train.load(DATASET_DIR, split)
    return (F.pad(images, (2, 2, 2, 2)) - MEAN) / STD, labels


def one_channel_stem(conv):
    """The first convolution of a 3-channel network for 1-channel images."""
    return nn.Conv2d(1, conv.out_channels, conv.kernel_size, conv.stride, conv.padding,
                     bias=conv.bias is not None)


def mobilenet_v2():
    m = generate.mobilenet_v2()
    m.features[0][0] = one_channel_stem(m.features[0][0])
    return m


def mobilenet_v3_small():
    m = generate.mobilenet_v3_small()
    m.features[0][0] = one_channel_stem(m.features[0][0])
    return m


def shufflenet_v2():
    m = generate.shufflenet_v2()
    m.conv1[0] = one_channel_stem(m.conv1[0])
    return m


def mnasnet():
    m = generate.mnasnet()
    m.layers[0] = one_channel_stem(m.layers[0])
    return m


MODELS = {
    "mnasnet_trained": mnasnet,
    "mobilenet_v2_trained": mobilenet_v2,
    "mobilenet_v3_small_trained": mobilenet_v3_small,
    "shufflenet_v2_trained": shufflenet_v2,
}


def accuracy(model, images, labels):
    model.eval()
    with torch.no_grad():
        correct = sum((model(images[i:i + 1000]).argmax(1) == labels[i:i + 1000]).sum().item()
                      for i in range(0, images.shape[0], 1000))
    return 100.0 * correct / images.shape[0]


def tensor_file(path, array, name):
    with open(path, "wb") as f:
        f.write(onnx.numpy_helper.from_array(array, name).SerializeToString())


def train_and_write(name, make, train, test):
    torch.manual_seed(SEED + sum(map(ord, name)))
    generator = torch.Generator().manual_seed(SEED + sum(map(ord, name)))
    train_x, train_y = train
    test_x, test_y = test
    subset = torch.randperm(train_x.shape[0], generator=generator)[:TRAIN_IMAGES]
    model = make()
    for m in model.modules():  # torchvision's MnasNet keeps 0.0003 (ImageNet's long schedule)
        if isinstance(m, nn.BatchNorm2d):
            m.momentum = 0.1
    batch = 64
    steps = EPOCHS * ((TRAIN_IMAGES + batch - 1) // batch)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=3e-3, total_steps=steps)
    start = time.time()
    for _ in range(EPOCHS):
        model.train()
        order = subset[torch.randperm(TRAIN_IMAGES, generator=generator)]
        for i in range(0, TRAIN_IMAGES, batch):
            idx = order[i:i + batch]
            loss = F.cross_entropy(model(train_x[idx]), train_y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
    model.eval()
    float_accuracy = accuracy(model, test_x, test_y)

    picks = torch.randperm(test_x.shape[0], generator=generator)[:TEST_IMAGES]
    calibration = subset[:CALIBRATION_IMAGES]  # training images the model has seen
    directory = os.path.join(HERE, name)
    os.makedirs(directory, exist_ok=True)
    buffer = io.BytesIO()
    torch.onnx.export(model, (test_x[picks[:1]],), buffer, opset_version=13,
                      input_names=["input_0"], output_names=["output_0"],
                      do_constant_folding=True)
    proto = onnx.load_from_string(buffer.getvalue())
    onnx.checker.check_model(proto)
    with open(os.path.join(directory, "model.onnx"), "wb") as f:
        f.write(buffer.getvalue())
    agree = 0
    with torch.no_grad():
        for k, i in enumerate(picks.tolist()):
            x = test_x[i:i + 1]
            y = model(x)
            agree += int(y.argmax(1).item() == test_y[i].item())
            data = os.path.join(directory, "test_data_set_%d" % k)
            os.makedirs(data, exist_ok=True)
            tensor_file(os.path.join(data, "input_0.pb"), x.numpy(), "input_0")
            tensor_file(os.path.join(data, "output_0.pb"), y.numpy(), "output_0")
            with open(os.path.join(data, "label.txt"), "w") as f:
                f.write("%d\n" % test_y[i].item())
    tensor_file(os.path.join(directory, "calibration_images.pb"), train_x[calibration].numpy(),
                "input_0")
    print("%-28s float accuracy %.2f%% on the 10000 test images, %d/%d on the stored ones "
          "(%.0f s)" % (name, float_accuracy, agree, TEST_IMAGES, time.time() - start),
          flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", help="model names (default: all)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    train, test = load("train"), load("t10k")
    for name, make in MODELS.items():
        if not args.only or name in args.only:
            train_and_write(name, make, train, test)
    return 0


if __name__ == "__main__":
    sys.exit(main())
