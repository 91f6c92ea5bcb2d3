#!/usr/bin/python3
"""Trains the main job's network on Fashion-MNIST and exports it to ONNX (`make train-onnx`).

A small residual CNN (ResNet-style: a stem, a strided convolution, one residual block, two
fully connected layers; 290 242 parameters, 2.26 million multiply-adds per image) trained
with Debian's python3-torch on Debian's dataset-fashion-mnist. The model takes pixel / 255 in
[0, 1] as a [N, 1, 28, 28] float tensor and returns the probabilities of the 10 classes.

Deterministic: fixed seed, fixed thread count, deterministic algorithms; one machine and one
torch build always write the same model. Not run by CI (14 epochs, about 10 minutes of one
core: one thread, because OpenMP threads spin and waste a shared machine's cores).
"""
import argparse
import gzip
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DATASET_DIR = "/usr/share/datasets/fashion-mnist"
SEED = 20240601
STEM_CHANNELS = 24
WIDTH = 40


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, count = struct.unpack(">II", data[:8])
    if magic == 0x801:
        return np.frombuffer(data, dtype=np.uint8, offset=8).copy()
    if magic != 0x803:
        sys.exit(f"train.py: {path} is not an IDX image or label file")
    rows, cols = struct.unpack(">II", data[8:16])
    return np.frombuffer(data, dtype=np.uint8, offset=16).reshape(count, 1, rows, cols).copy()


def load(dataset_dir, split):
    images = read_idx(os.path.join(dataset_dir, f"{split}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(dataset_dir, f"{split}-labels-idx1-ubyte.gz"))
    return torch.from_numpy(images).float() / 255.0, torch.from_numpy(labels).long()


class ConvBn(nn.Sequential):
    def __init__(self, cin, cout, stride=1):
        super().__init__(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout))


class FmnistResNet(nn.Module):
    def __init__(self, stem=STEM_CHANNELS, width=WIDTH):
        super().__init__()
        self.stem = ConvBn(1, stem)                # stem x 28x28, then max pooling to 14x14
        self.down = ConvBn(stem, width, stride=2)  # width x 7x7
        self.block_a = ConvBn(width, width)        # residual block: two convolutions
        self.block_b = ConvBn(width, width)
        self.fc1 = nn.Linear(width * 7 * 7, 128)
        self.fc2 = nn.Linear(128, 10)
        self.dropout = nn.Dropout(0.3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.stem(x)), 2)
        x = F.relu(self.down(x))
        x = F.relu(x + self.block_b(F.relu(self.block_a(x))))
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc2(self.dropout(x))


def augment(images, generator):
    """Random horizontal flips and shifts of up to 1 pixel (zero padding)."""
    n = images.shape[0]
    flip = torch.rand(n, generator=generator) < 0.5
    images = torch.where(flip[:, None, None, None], images.flip(3), images)
    padded = F.pad(images, (1, 1, 1, 1))[:, 0]
    dx = torch.randint(0, 3, (n,), generator=generator)
    dy = torch.randint(0, 3, (n,), generator=generator)
    rows = (dy[:, None] + torch.arange(28))[:, :, None]
    cols = (dx[:, None] + torch.arange(28))[:, None, :]
    return padded[torch.arange(n)[:, None, None], rows, cols][:, None]


def accuracy(model, images, labels):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, images.shape[0], 1000):
            correct += (model(images[i:i + 1000]).argmax(1) == labels[i:i + 1000]).sum().item()
    return 100.0 * correct / images.shape[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=DATASET_DIR)
    parser.add_argument("--output", required=True, help="the ONNX file to write")
    parser.add_argument("--epochs", type=int, default=14)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--stem", type=int, default=STEM_CHANNELS)
    parser.add_argument("--width", type=int, default=WIDTH)
    args = parser.parse_args()

    torch.manual_seed(SEED)
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    generator = torch.Generator().manual_seed(SEED)

    train_x, train_y = load(args.dataset, "train")
    test_x, test_y = load(args.dataset, "t10k")
    model = FmnistResNet(args.stem, args.width)
    params = sum(p.numel() for p in model.parameters())
    print(f"train.py: {params} parameters")

    batch = 128
    steps = args.epochs * ((train_x.shape[0] + batch - 1) // batch)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=5e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=3e-3, total_steps=steps)
    for epoch in range(args.epochs):
        start = time.time()
        model.train()
        order = torch.randperm(train_x.shape[0], generator=generator)
        for i in range(0, order.shape[0], batch):
            idx = order[i:i + batch]
            x = augment(train_x[idx], generator)
            loss = F.cross_entropy(model(x), train_y[idx], label_smoothing=0.05)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
        print(f"epoch {epoch + 1}/{args.epochs}: test accuracy "
              f"{accuracy(model, test_x, test_y):.2f}% ({time.time() - start:.0f} s)", flush=True)

    model.eval()
    print(f"train.py: float test accuracy {accuracy(model, test_x, test_y):.2f}%")
    export(model, args.output)


def export(model, path):
    """The classifier as shipped: class probabilities (a softmax after the logits)."""
    classifier = nn.Sequential(model, nn.Softmax(dim=1)).eval()
    tmp = path + ".tmp"
    torch.onnx.export(classifier, torch.zeros(1, 1, 28, 28), tmp, input_names=["image"],
                      output_names=["prob"], opset_version=13,
                      dynamic_axes={"image": {0: "N"}, "prob": {0: "N"}})
    os.replace(tmp, path)
    print(f"train.py: wrote {path}")


if __name__ == "__main__":
    main()
