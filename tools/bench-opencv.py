#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Times OpenCV's OpenCL path (cv2.UMat) on an RGB image, for tools/bench.

    python3 tools/bench-opencv.py [--reps N] [--budget S] IMAGE.ppm

IMAGE.ppm is a binary PPM (P6, maxval 255), as tools/bench writes its RGB image. Each
operation is the same work as a climg stage of tools/bench's table, on an image already in
device memory, writing into a UMat allocated beforehand; a run is timed on the host from the
call to the end of cv2.ocl.finish(), after 2 warm-up runs; the median of N runs (at least 20)
is printed. With --budget, an operation whose N runs would end more than S seconds after the
start is skipped (OpenCV on a CPU device is slow at 8K).

Output (stdout), one line each:
    # opencv VERSION
    # device NAME (OpenCL VERSION)
    # runs N
    NAME MS          for NAME in cvtColor rotate90 transpose warpAffine30 filter2D3x3
                     GaussianBlur2 calcHist upload download
    # skipped NAME REASON   for an operation that failed or did not fit the budget
Exit status: 0, or 1 when OpenCV has no usable OpenCL device (it would run on the CPU).
"""
import argparse
import math
import statistics
import sys
import time

import cv2
import numpy as np


def read_ppm(path):
    """The pixels of a binary PPM as an H x W x 3 uint8 array (RGB order, as in the file)."""
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos : pos + 1].isspace():
            pos += 1
        if data[pos : pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while not data[end : end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P6" or int(fields[3]) != 255:
        raise ValueError(f"{path}: not a binary PPM with maxval 255")
    w, h = int(fields[1]), int(fields[2])
    pos += 1  # the single white space after maxval
    return np.frombuffer(data, np.uint8, w * h * 3, pos).reshape(h, w, 3)


class OverBudget(Exception):
    pass


def median_ms(fn, reps, deadline):
    """The median wall time of fn() followed by cv2.ocl.finish(), in ms, after 2 warm-ups;
    OverBudget when the runs would end after deadline (a time.monotonic() value or None)."""
    for _ in range(2):
        t0 = time.monotonic()
        fn()
        cv2.ocl.finish()
        warm = time.monotonic() - t0
    if deadline is not None and time.monotonic() + reps * warm > deadline:
        raise OverBudget(f"{reps} runs of about {warm * 1e3:.0f} ms would end past the budget")
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        cv2.ocl.finish()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def expanded_size(w, h, degrees):
    """climg rotate's expanded canvas (src/stages/rotate.c): ceil(W|cos| + H|sin| - 1e-6)..."""
    a = math.radians(degrees)
    c, s = abs(math.cos(a)), abs(math.sin(a))
    return math.ceil(w * c + h * s - 1e-6), math.ceil(w * s + h * c - 1e-6)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--budget", type=float, default=0, help="seconds; 0: no limit")
    ap.add_argument("image")
    args = ap.parse_args()
    start = time.monotonic()
    reps = max(20, args.reps)
    deadline = start + args.budget if args.budget > 0 else None

    cv2.ocl.setUseOpenCL(True)
    if not cv2.ocl.haveOpenCL() or not cv2.ocl.useOpenCL():
        print("bench-opencv: OpenCV has no usable OpenCL device "
              "(OPENCV_OPENCL_DEVICE chooses one, e.g. ':CPU:' for PoCL)", file=sys.stderr)
        return 1
    dev = cv2.ocl.Device_getDefault()
    print(f"# opencv {cv2.__version__}")
    print(f"# device {dev.name()} ({dev.version()})")
    print(f"# runs {reps}")

    rgb = np.ascontiguousarray(read_ppm(args.image))
    h, w = rgb.shape[:2]
    src = cv2.UMat(rgb)
    grey = cv2.cvtColor(src, cv2.COLOR_RGB2GRAY)
    cv2.ocl.finish()

    # climg rotate:30 turns clockwise onto the expanded canvas; OpenCV's positive angles
    # turn anticlockwise, and its matrix maps the centre onto itself: shift to the new centre.
    rw, rh = expanded_size(w, h, 30)
    m = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), -30, 1.0)
    m[0, 2] += (rw - w) / 2
    m[1, 2] += (rh - h) / 2
    box = np.full((3, 3), 1 / 9, np.float32)

    def out(width, height, typ):
        return cv2.UMat(height, width, typ)

    d_grey, d_rot, d_same = out(w, h, cv2.CV_8UC1), out(h, w, cv2.CV_8UC3), out(w, h, cv2.CV_8UC3)
    d_warp = out(rw, rh, cv2.CV_8UC3)
    ops = [
        ("cvtColor", lambda: cv2.cvtColor(src, cv2.COLOR_RGB2GRAY, dst=d_grey)),
        ("rotate90", lambda: cv2.rotate(src, cv2.ROTATE_90_CLOCKWISE, dst=d_rot)),
        ("transpose", lambda: cv2.transpose(src, dst=d_rot)),
        ("warpAffine30", lambda: cv2.warpAffine(src, m, (rw, rh), dst=d_warp,
                                                flags=cv2.INTER_LINEAR,
                                                borderMode=cv2.BORDER_CONSTANT,
                                                borderValue=(0, 0, 0))),
        ("filter2D3x3", lambda: cv2.filter2D(src, -1, box, dst=d_same,
                                             borderType=cv2.BORDER_REPLICATE)),
        ("GaussianBlur2", lambda: cv2.GaussianBlur(src, (0, 0), 2, dst=d_same,
                                                   borderType=cv2.BORDER_REPLICATE)),
        ("calcHist", lambda: cv2.calcHist([grey], [0], None, [256], [0, 256])),
        ("upload", lambda: cv2.UMat(rgb)),
        ("download", lambda: src.get()),
    ]
    for name, fn in ops:
        try:
            ms = median_ms(fn, reps, deadline)
        except OverBudget as e:
            print(f"# skipped {name} {e}", flush=True)
            continue
        except cv2.error as e:
            reason = " ".join(str(e).split())
            print(f"bench-opencv: {name}: {reason}", file=sys.stderr)
            print(f"# skipped {name} it failed: {reason[:200]}", flush=True)
            continue
        print(f"{name} {ms:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
