"""Writes small MNIST-format files where torchvision's MNIST dataset looks for them.

    python3 mnist_files.py ROOT TRAIN_COUNT TEST_COUNT

ROOT/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte, in the IDX format of
http://yann.lecun.com/exdb/mnist/. MNIST itself cannot be downloaded where the tests run; these
images are 28x28 greyscale "digits" a small network learns in one epoch: digit d is a bright bar
at rows 2d+2 to 2d+5, shifted left or right at random, on a dark background. Deterministic.
"""
import os
import struct
import sys

import numpy as np


def digits(count, rng):
    labels = rng.integers(0, 10, count, dtype=np.uint8)
    images = np.zeros((count, 28, 28), dtype=np.uint8)
    shifts = rng.integers(0, 8, count)
    for i, (label, shift) in enumerate(zip(labels, shifts)):
        images[i, 2 + 2 * label : 6 + 2 * label, 2 + shift : 18 + shift] = 255
    return images, labels


def write(root, train_count, test_count):
    raw = os.path.join(root, "MNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    rng = np.random.default_rng(53)
    for prefix, count in (("train", train_count), ("t10k", test_count)):
        images, labels = digits(count, rng)
        with open(os.path.join(raw, prefix + "-images-idx3-ubyte"), "wb") as f:
            f.write(struct.pack(">IIII", 2051, count, 28, 28))
            f.write(images.tobytes())
        with open(os.path.join(raw, prefix + "-labels-idx1-ubyte"), "wb") as f:
            f.write(struct.pack(">II", 2049, count))
            f.write(labels.tobytes())


if __name__ == "__main__":
    write(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
