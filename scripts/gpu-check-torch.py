"""gpu-check-torch.py — the peer for the GPU device check: PyTorch's eager ResNet-18 (torchvision, random
weights, eval mode, batch 1, 224x224, float32) on the same GPU, timed the way bench/harness.c times a
dlcc GPU model: one call from host memory in to host memory out (the copies included), median of RUNS
after WARMUP calls, and also with the input already on the GPU.  Run on the NVIDIA machine with the
Python that holds torch and torchvision (docs/targets/gpu.md, "Device check"):

    python3 gpu-check-torch.py [RUNS [WARMUP]]

Prints one line per setting: cuDNN's float32 (TF32 off, as dlcc computes) and PyTorch's default
(TF32 allowed in convolutions)."""
import statistics
import sys
import time

import torch
import torchvision

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 3
dev = torch.device("cuda")
torch.manual_seed(0)
model = torchvision.models.resnet18().eval().to(dev)
host = torch.randn(1, 3, 224, 224)


def median_ms(fn):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def from_host():
    with torch.inference_mode():
        return model(host.to(dev)).cpu()


dev_in = host.to(dev)


def on_device():
    with torch.inference_mode():
        y = model(dev_in)
    torch.cuda.synchronize()
    return y


print("torch %s, %s" % (torch.__version__, torch.cuda.get_device_name(0)))
for tf32 in (False, True):
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    label = "tf32" if tf32 else "fp32"
    print("TORCH resnet18 %s host->host %.3f ms  device-resident %.3f ms" %
          (label, median_ms(from_host), median_ms(on_device)))
