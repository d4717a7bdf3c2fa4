#!/usr/bin/python3
"""Exports the benchmark models to ONNX, with a reference input and output each.

Run with Debian's Python (python3-torch 1.13, python3-torchvision, python3-onnx 1.12):

    /usr/bin/python3 bench/models.py [--out DIR] [NAME ...]

For each model it writes DIR/<name>/ (default DIR: bench/build/models):
    model.onnx     opset 13, eval mode, batch 1, fixed input shape
    input_0.npy    a seeded random float32 input
    output_0.npy   PyTorch's output for that input (float32)

Every model is built from fixed seeds (random weights; batch/layer norms get
non-trivial statistics), so two runs give the same models.  The small models of
the end-to-end tests are reused from tests/e2e/export_models.py; the MLPerf Tiny
style ones (DS-CNN for keyword spotting, ResNet-8, MobileNetV1-0.25 at 96×96, the
fully connected autoencoder) and torchvision's SqueezeNet 1.1, MobileNetV2 and
ResNet-18 are defined here.
"""

import argparse
import io
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import torch
import torch.nn as nn

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
import export_models as e2e  # noqa: E402  (the end-to-end models and randomize_norms)

OPSET = 13


def conv_bn_relu(cin, cout, k, stride=1, groups=1, pad=None):
    pad = k // 2 if pad is None else pad
    return [nn.Conv2d(cin, cout, k, stride=stride, padding=pad, groups=groups, bias=False),
            nn.BatchNorm2d(cout), nn.ReLU()]


def make_dscnn_kws():
    # MLPerf Tiny keyword spotting: 49×10 MFCC → conv 10×4 s2 (64) → 4 × (dw 3×3, pw 1×1) → avgpool → fc 12
    layers = conv_bn_relu(1, 64, (10, 4), stride=2, pad=(5, 1))
    for _ in range(4):
        layers += conv_bn_relu(64, 64, 3, groups=64) + conv_bn_relu(64, 64, 1)
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 12))


def make_resnet8():
    # MLPerf Tiny image classification: 32×32×3 → stem 16 → blocks 16, 32 s2, 64 s2 → gap → fc 10
    return nn.Sequential(*conv_bn_relu(3, 16, 3), e2e.BasicBlock(16, 16, 1), e2e.BasicBlock(16, 32, 2),
                         e2e.BasicBlock(32, 64, 2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


def make_mobilenet_v1_025():
    # MLPerf Tiny visual wake words: MobileNetV1 width 0.25 at 96×96, 2 classes
    def c(n):
        return max(8, int(n * 0.25))
    cfg = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + [(1024, 2), (1024, 1)]
    layers = conv_bn_relu(3, c(32), 3, stride=2)
    cin = c(32)
    for cout, s in cfg:
        layers += conv_bn_relu(cin, cin, 3, stride=s, groups=cin) + conv_bn_relu(cin, c(cout), 1)
        cin = c(cout)
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 2))


def make_autoencoder():
    # MLPerf Tiny anomaly detection: 640 → 4 × (128, BN, ReLU) → 8 → 4 × (128, BN, ReLU) → 640
    def block(i, o):
        return [nn.Linear(i, o), nn.BatchNorm1d(o), nn.ReLU()]
    layers, dims = [], [640, 128, 128, 128, 128, 8, 128, 128, 128, 128]
    for i, o in zip(dims, dims[1:]):
        layers += block(i, o)
    return nn.Sequential(*layers, nn.Linear(128, 640))


def randomize_norms(model, gen):
    e2e.randomize_norms(model, gen)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.BatchNorm1d):
                n = mod.num_features
                mod.running_mean.copy_(0.2 * torch.randn(n, generator=gen))
                mod.running_var.copy_(0.5 + torch.rand(n, generator=gen))
                mod.weight.copy_(1 + 0.2 * torch.randn(n, generator=gen))
                mod.bias.copy_(0.2 * torch.randn(n, generator=gen))


def torchvision_model(name):
    def make():
        import torchvision.models as tvm
        return getattr(tvm, name)(weights=None)
    return make


# name: (constructor, input shape, seed, description)
MODELS = {
    "mlp": (e2e.make_mlp, [1, 64], 3, "MLP 64-48-32-10 + softmax (e2e)"),
    "cnn": (e2e.make_cnn, [1, 3, 16, 16], 1, "small CNN, 2 conv + 2 pool + fc (e2e)"),
    "dscnn_kws": (make_dscnn_kws, [1, 1, 49, 10], 11, "DS-CNN keyword spotting (MLPerf Tiny)"),
    "resnet8": (make_resnet8, [1, 3, 32, 32], 12, "ResNet-8 at 32×32 (MLPerf Tiny)"),
    "mobilenet_v1_025": (make_mobilenet_v1_025, [1, 3, 96, 96], 13, "MobileNetV1-0.25 at 96×96 (MLPerf Tiny)"),
    "autoencoder": (make_autoencoder, [1, 640], 14, "FC autoencoder 640-128×4-8-128×4-640 (MLPerf Tiny)"),
    "encoder": (e2e.make_encoder, [1, 8, 32], 4, "transformer encoder layer d=32, 4 heads, ff 64, seq 8 (e2e)"),
    "squeezenet1_1": (torchvision_model("squeezenet1_1"), [1, 3, 224, 224], 21, "torchvision SqueezeNet 1.1"),
    "mobilenet_v2": (torchvision_model("mobilenet_v2"), [1, 3, 224, 224], 22, "torchvision MobileNetV2"),
    "resnet18": (torchvision_model("resnet18"), [1, 3, 224, 224], 23, "torchvision ResNet-18"),
}


def make(name):
    """The model in eval mode, with its seeded weights, and its seeded input (numpy float32)."""
    ctor, shape, seed, _ = MODELS[name]
    torch.manual_seed(seed)
    model = ctor()
    randomize_norms(model, torch.Generator().manual_seed(seed + 1000))
    return model.eval(), np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def to_onnx(model, xt, **options):
    """The model exported at OPSET with one input `input` and one output `output` (an io.BytesIO);
    options go to torch.onnx.export (default do_constant_folding=True)."""
    buf = io.BytesIO()
    options.setdefault("do_constant_folding", True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (xt,), buf, opset_version=OPSET, input_names=["input"], output_names=["output"],
                          **options)
    return buf


def export(name, out):
    model, x = make(name)
    shape = list(x.shape)
    xt = torch.from_numpy(x)
    with torch.no_grad():
        y = model(xt).numpy().astype(np.float32)
    buf = to_onnx(model, xt)
    m = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(m)
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "model.onnx").write_bytes(buf.getvalue())
    np.save(d / "input_0.npy", x)
    np.save(d / "output_0.npy", y)
    params = sum(int(np.prod(t.dims, dtype=np.int64)) for t in m.graph.initializer)
    print("%-18s %4d nodes %10d params  input %s  output %s" % (name, len(m.graph.node), params, shape,
                                                                 list(y.shape)))


def export_gemm(n, out):
    """A one-node MatMul C[n,n] = A[n,n] · B[n,n] of two graph inputs (no constant operand, as for
    sgemm), for bench/gemm.c."""
    h = onnx.helper
    t = onnx.TensorProto.FLOAT
    g = h.make_graph([h.make_node("MatMul", ["A", "B"], ["C"])], "gemm%d" % n,
                     [h.make_tensor_value_info("A", t, [n, n]), h.make_tensor_value_info("B", t, [n, n])],
                     [h.make_tensor_value_info("C", t, [n, n])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", OPSET)])
    onnx.checker.check_model(m)
    d = out / ("gemm%d" % n)
    d.mkdir(parents=True, exist_ok=True)
    (d / "model.onnx").write_bytes(m.SerializeToString())
    print("gemm%-14d MatMul %d×%d·%d×%d" % (n, n, n, n, n))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=HERE / "build" / "models")
    ap.add_argument("--list", action="store_true", help="print name and description of each model")
    ap.add_argument("--gemm", type=int, nargs="+", metavar="N",
                    help="instead, write DIR/gemmN/model.onnx, a one-node N×N MatMul, for each N")
    ap.add_argument("names", nargs="*", help="models to export (default: all)")
    a = ap.parse_intermixed_args()
    if a.gemm:
        for n in a.gemm:
            export_gemm(n, a.out)
        return 0
    if a.list:
        for k, v in MODELS.items():
            print("%s\t%s" % (k, v[3]))
        return 0
    names = a.names or list(MODELS)
    for nm in names:
        if nm not in MODELS:
            ap.error("unknown model %s (have: %s)" % (nm, ", ".join(MODELS)))
    torch.set_num_threads(1)
    for nm in names:
        export(nm, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
