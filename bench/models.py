#!/usr/bin/python3
"""Exports the benchmark models to ONNX, with reference inputs and outputs.

Run with Debian's Python (python3-torch 1.13, python3-torchvision, python3-onnx 1.12):

    /usr/bin/python3 bench/models.py [--out DIR] [--family F ...] [--folding on|off|both] [NAME ...]
    /usr/bin/python3 bench/models.py --list | --names [--family F ...] [--folding ...] [NAME ...]

For each model it writes DIR/<name>/ (default DIR: bench/build/models):
    model.onnx     opset 13, eval mode, batch 1, fixed input shapes, as torch.onnx.export writes it
    input_K.npy    a seeded input K (float32 standard normal; token ids and attention masks int64)
    output_0.npy   PyTorch's output for those inputs (float32)

Every model is built from fixed seeds (random weights; batch/layer norms get non-trivial
statistics), so two runs give the same models.  MODELS below is the one table: name, family,
inputs, seed, description.  The end-to-end test models are reused from tests/e2e/export_models.py
and torchvision's models are built with weights=None; the rest are defined here.

Each model is exported with torch.onnx.export's do_constant_folding=True, its default (directory
<name>), and, with --folding off or both, with do_constant_folding=False (directory <name>-nofold):
the graph as traced, with the shape arithmetic (Shape, Gather, Concat before a Reshape), the
transposes of weights and the Slices of constant buffers left for the compiler to fold.  A NAME may
name either form.  --names prints the resolved names, one a line, and exports nothing (bench/run.sh
uses it to give every step the same list); --list prints name, family, inputs and description.
"""

import argparse
import collections
import io
import math
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
NOFOLD = "-nofold"     # the suffix of the do_constant_folding=False export's name


# ----------------------------------------------------------------------------------------------
# Building blocks

def conv_bn_relu(cin, cout, k, stride=1, groups=1, pad=None, dim=2):
    pad = k // 2 if pad is None and isinstance(k, int) else pad
    conv, bn = (nn.Conv1d, nn.BatchNorm1d) if dim == 1 else (nn.Conv2d, nn.BatchNorm2d)
    return [conv(cin, cout, k, stride=stride, padding=pad, groups=groups, bias=False), bn(cout), nn.ReLU()]


class SelfAttention(nn.Module):
    """Multi-head self-attention written out as GPT-2 and BERT implementations write it (one
    Linear for q, k and v, then view / transpose / matmul / softmax): the graph their exports
    give.  causal: a lower-triangular mask buffer of max_len, sliced to the sequence (GPT-2)."""

    def __init__(self, d, heads, causal=False, max_len=0):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.causal = causal
        if causal:
            self.register_buffer("bias", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool))
                                 .view(1, 1, max_len, max_len))

    def forward(self, x, mask=None):
        b, t, d = x.shape
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in self.qkv(x).split(d, dim=2))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        if self.causal:
            att = att.masked_fill(~self.bias[:, :, :t, :t], float("-inf"))
        if mask is not None:
            att = att + mask
        y = (att.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(y)


class Block(nn.Module):
    """A transformer block: pre-norm (GPT-2: x + attn(ln(x)), tanh GELU) or post-norm (BERT:
    ln(x + attn(x)), erf GELU)."""

    def __init__(self, d, heads, pre_norm, causal=False, max_len=0):
        super().__init__()
        self.attn = SelfAttention(d, heads, causal, max_len)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh" if pre_norm else "none"),
                                 nn.Linear(4 * d, d))
        self.pre_norm = pre_norm

    def forward(self, x, mask=None):
        if self.pre_norm:
            x = x + self.attn(self.ln1(x), mask)
            return x + self.mlp(self.ln2(x))
        x = self.ln1(x + self.attn(x, mask))
        return self.ln2(x + self.mlp(x))


def init_embeddings(model):
    """Embeddings drawn from N(0, 0.02) as GPT-2 and BERT initialize them (PyTorch's N(0, 1) makes
    the tied language-model head's logits a hundred times larger than trained models')."""
    for mod in model.modules():
        if isinstance(mod, nn.Embedding):
            nn.init.normal_(mod.weight, std=0.02)


class GPT(nn.Module):
    """GPT-2-style decoder: token and position embeddings, causal pre-norm blocks, final norm, a
    language-model head tied to the token embedding."""

    def __init__(self, vocab, seq, d, heads, layers):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        init_embeddings(self)
        self.register_buffer("pos", torch.arange(seq).unsqueeze(0))
        self.blocks = nn.ModuleList(Block(d, heads, True, causal=True, max_len=seq) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(self.pos[:, :ids.shape[1]])
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


class BERT(nn.Module):
    """BERT-style encoder: word + position + token-type embeddings and LayerNorm, post-norm blocks
    with the additive mask built from the attention_mask input as BERT does ((1 - mask) · -10000),
    the last hidden state out."""

    def __init__(self, vocab, seq, d, heads, layers):
        super().__init__()
        self.word, self.pos, self.tok_type = nn.Embedding(vocab, d), nn.Embedding(seq, d), nn.Embedding(2, d)
        init_embeddings(self)
        self.register_buffer("position_ids", torch.arange(seq).unsqueeze(0))
        self.register_buffer("token_type_ids", torch.zeros(1, seq, dtype=torch.long))
        self.ln = nn.LayerNorm(d)
        self.blocks = nn.ModuleList(Block(d, heads, False) for _ in range(layers))

    def forward(self, ids, attention_mask):
        t = ids.shape[1]
        x = self.ln(self.word(ids) + self.pos(self.position_ids[:, :t]) + self.tok_type(self.token_type_ids[:, :t]))
        mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for blk in self.blocks:
            x = blk(x, mask)
        return x


class MixerBlock(nn.Module):
    """MLP-Mixer: a token-mixing MLP across the patches, then a channel-mixing MLP."""

    def __init__(self, tokens, d, d_tok, d_ch):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.tok = nn.Sequential(nn.Linear(tokens, d_tok), nn.GELU(), nn.Linear(d_tok, tokens))
        self.ch = nn.Sequential(nn.Linear(d, d_ch), nn.GELU(), nn.Linear(d_ch, d))

    def forward(self, x):
        x = x + self.tok(self.ln1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.ch(self.ln2(x))


class Mixer(nn.Module):
    def __init__(self, image, patch, d, d_tok, d_ch, layers, classes):
        super().__init__()
        self.stem = nn.Conv2d(3, d, patch, stride=patch)
        self.blocks = nn.Sequential(*(MixerBlock((image // patch) ** 2, d, d_tok, d_ch) for _ in range(layers)))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x).flatten(2).transpose(1, 2))
        return self.head(self.ln(x).mean(dim=1))


class RNNNet(nn.Module):
    """nn.LSTM / nn.GRU (batch_first, zero initial state) and a Linear on the last step or on
    every step."""

    def __init__(self, kind, n_in, hidden, n_out, layers=1, bidirectional=False, every_step=False):
        super().__init__()
        self.rnn = getattr(nn, kind)(n_in, hidden, layers, batch_first=True, bidirectional=bidirectional)
        self.fc = nn.Linear(hidden * (2 if bidirectional else 1), n_out)
        self.every_step = every_step

    def forward(self, x):
        y = self.rnn(x)[0]
        return self.fc(y if self.every_step else y[:, -1])


def double_conv(cin, cout):
    return nn.Sequential(*conv_bn_relu(cin, cout, 3), *conv_bn_relu(cout, cout, 3))


class UNet(nn.Module):
    """U-Net: double 3×3 convolutions, max-pool down; up by transposed convolution (2×2, stride 2)
    at even levels and by nearest upsampling + 1×1 convolution at odd ones; skip concatenation."""

    def __init__(self, cin, cout, widths):
        super().__init__()
        self.down = nn.ModuleList(double_conv(a, b) for a, b in zip((cin,) + widths[:-1], widths))
        self.pool = nn.MaxPool2d(2)
        self.up = nn.ModuleList(
            nn.ConvTranspose2d(widths[i + 1], widths[i], 2, stride=2) if i % 2 == 0 else
            nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(widths[i + 1], widths[i], 1))
            for i in range(len(widths) - 1))
        self.merge = nn.ModuleList(double_conv(2 * w, w) for w in widths[:-1])
        self.out = nn.Conv2d(widths[0], cout, 1)

    def forward(self, x):
        skips = []
        for i, blk in enumerate(self.down):
            x = blk(x if i == 0 else self.pool(x))
            skips.append(x)
        for i in reversed(range(len(self.up))):
            x = self.merge[i](torch.cat([self.up[i](x), skips[i]], dim=1))
        return self.out(x)


class FPN(nn.Module):
    """A feature pyramid: a strided conv backbone (C2..C5 at 1/4..1/32), 1×1 laterals, the top-down
    path by nearest ×2 Resize, 3×3 smoothing, then every level resized bilinearly to P2's size,
    concatenated and classified per pixel (a Panoptic-FPN-like semantic head)."""

    def __init__(self, widths, d, classes):
        super().__init__()
        stages, cin = [nn.Sequential(*conv_bn_relu(3, widths[0], 3, stride=2))], widths[0]
        for w in widths:
            stages.append(nn.Sequential(*conv_bn_relu(cin, w, 3, stride=2), *conv_bn_relu(w, w, 3)))
            cin = w
        self.stages = nn.ModuleList(stages)
        self.lateral = nn.ModuleList(nn.Conv2d(w, d, 1) for w in widths)
        self.smooth = nn.ModuleList(nn.Conv2d(d, d, 3, padding=1) for _ in widths)
        self.head = nn.Sequential(*conv_bn_relu(d * len(widths), d, 3), nn.Conv2d(d, classes, 1))

    def forward(self, x):
        feats = []
        for i, st in enumerate(self.stages):
            x = st(x)
            if i:
                feats.append(x)
        p = [lat(f) for lat, f in zip(self.lateral, feats)]
        for i in reversed(range(len(p) - 1)):
            p[i] = p[i] + nn.functional.interpolate(p[i + 1], scale_factor=2.0, mode="nearest")
        p = [sm(q) for sm, q in zip(self.smooth, p)]
        size = p[0].shape[-2:]
        up = [p[0]] + [nn.functional.interpolate(q, size=size, mode="bilinear", align_corners=False) for q in p[1:]]
        return self.head(torch.cat(up, dim=1))


# ----------------------------------------------------------------------------------------------
# The models' constructors

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


def make_mlp_mnist():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                         nn.Linear(1024, 10))


def make_m5():
    # M5 (Dai et al. 2017, "Very deep CNNs for raw waveforms"): conv 80/4 (128), then 3-tap layers
    # 128, 256, 512, each with BN, ReLU and max pool 4; global average pool; fc 35 (speech commands)
    layers, cin = conv_bn_relu(1, 128, 80, stride=4, pad=0, dim=1) + [nn.MaxPool1d(4)], 128
    for cout in (128, 256, 512):
        layers += conv_bn_relu(cin, cout, 3, pad=1, dim=1) + [nn.MaxPool1d(4)]
        cin = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(cin, 35))


def make_wav2letter(width=128, wide=512, classes=29):
    # torchaudio's Wav2Letter (waveform input) at a smaller width (250 → 128, 2000 → 512) and its
    # 32-tap layer at 16 taps: conv 250/160 on the samples, conv 48/2, 7 × conv 7, conv 16, two 1×1
    def conv(cin, cout, k, stride=1, pad=0):
        return [nn.Conv1d(cin, cout, k, stride=stride, padding=pad), nn.ReLU()]
    layers = conv(1, width, 250, 160, 45) + conv(width, width, 48, 2, 23)
    for _ in range(7):
        layers += conv(width, width, 7, pad=3)
    layers += conv(width, wide, 16, pad=8) + conv(wide, wide, 1) + [nn.Conv1d(wide, classes, 1)]
    return nn.Sequential(*layers)


def torchvision_model(name, reset=None, **kw):
    """torchvision.models.NAME(weights=None, **kw), or with a dotted name, the class
    torchvision.models.MODULE.CLASS(**kw); reset names a Linear that gets PyTorch's default
    initialization instead of the model's (ViT's head starts at zero, MobileNetV3's classifier at
    N(0, 0.01): the output would be zero or too small for the check's tolerance to mean much)."""
    def make():
        import importlib
        module, _, cls = name.rpartition(".")
        mod = importlib.import_module("torchvision.models" + ("." + module if module else ""))
        model = getattr(mod, cls)(**kw) if module else getattr(mod, cls)(weights=None, **kw)
        if reset:
            model.get_submodule(reset).reset_parameters()
        return model
    return make


def make_resnet_bottleneck():
    from torchvision.models.resnet import Bottleneck, ResNet
    return ResNet(Bottleneck, [1, 1, 1, 1])


def make_transformer_encoder():
    return nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, batch_first=True)


# ----------------------------------------------------------------------------------------------
# The table

# An input: its ONNX name, shape, and how its seeded values are drawn: "normal" (float32 standard
# normal), ("tokens", V) (int64 in [0, V)), ("mask", N) (int64, 1 for the first N positions, 0 after:
# padding at the end)
Input = collections.namedtuple("Input", "name shape kind")
Model = collections.namedtuple("Model", "ctor family inputs seed desc")


def image(*shape):
    return [Input("input", list(shape), "normal")]


FAMILIES = {
    "cnn": "image classifiers: residual, inverted residual, grouped, channel shuffle, inception, dense",
    "transformer": "transformer encoders and decoders",
    "rnn": "LSTM and GRU, one- and bidirectional",
    "encdec": "encoder-decoder vision nets (U-Net, feature pyramid)",
    "audio": "1-D convolutional nets on raw 16 kHz audio",
    "mlp": "multi-layer perceptrons",
}

MODELS = {
    # the end-to-end test models and the MLPerf Tiny set
    "mlp": Model(e2e.make_mlp, "mlp", image(1, 64), 3, "MLP 64-48-32-10 + softmax (e2e)"),
    "cnn": Model(e2e.make_cnn, "cnn", image(1, 3, 16, 16), 1, "small CNN, 2 conv + 2 pool + fc (e2e)"),
    "dscnn_kws": Model(make_dscnn_kws, "cnn", image(1, 1, 49, 10), 11, "DS-CNN keyword spotting (MLPerf Tiny)"),
    "resnet8": Model(make_resnet8, "cnn", image(1, 3, 32, 32), 12, "ResNet-8 at 32×32 (MLPerf Tiny)"),
    "mobilenet_v1_025": Model(make_mobilenet_v1_025, "cnn", image(1, 3, 96, 96), 13,
                              "MobileNetV1-0.25 at 96×96 (MLPerf Tiny)"),
    "autoencoder": Model(make_autoencoder, "mlp", image(1, 640), 14,
                         "FC autoencoder 640-128×4-8-128×4-640 (MLPerf Tiny)"),
    "encoder": Model(e2e.make_encoder, "transformer", image(1, 8, 32), 4,
                     "transformer encoder layer d=32, 4 heads, ff 64, seq 8 (e2e)"),
    "squeezenet1_1": Model(torchvision_model("squeezenet1_1"), "cnn", image(1, 3, 224, 224), 21,
                           "torchvision SqueezeNet 1.1"),
    "mobilenet_v2": Model(torchvision_model("mobilenet_v2"), "cnn", image(1, 3, 224, 224), 22,
                          "torchvision MobileNetV2"),
    "resnet18": Model(torchvision_model("resnet18"), "cnn", image(1, 3, 224, 224), 23, "torchvision ResNet-18"),
    # CNNs
    "resnet_bottleneck": Model(make_resnet_bottleneck, "cnn", image(1, 3, 128, 128), 31,
                               "torchvision ResNet of bottleneck blocks [1,1,1,1] (ResNet-26-class) at 128×128"),
    "efficientnet_b0": Model(torchvision_model("efficientnet_b0"), "cnn", image(1, 3, 224, 224), 32,
                             "torchvision EfficientNet-B0: inverted residual, squeeze-and-excitation, SiLU, "
                             "3×3 and 5×5 depthwise"),
    "mobilenet_v3_small": Model(torchvision_model("mobilenet_v3_small", reset="classifier.3"), "cnn",
                                image(1, 3, 224, 224), 33,
                                "torchvision MobileNetV3-Small: hard-swish, squeeze-and-excitation"),
    "regnet_x_400mf": Model(torchvision_model("regnet_x_400mf"), "cnn", image(1, 3, 224, 224), 34,
                            "torchvision RegNetX-400MF: grouped 3×3 convolutions (group width 16)"),
    "shufflenet_v2": Model(torchvision_model("shufflenet_v2_x1_0"), "cnn", image(1, 3, 224, 224), 35,
                           "torchvision ShuffleNetV2 1.0×: channel split and shuffle"),
    "googlenet": Model(torchvision_model("googlenet", aux_logits=False, init_weights=True), "cnn",
                       image(1, 3, 128, 128), 36, "torchvision GoogLeNet (inception), no aux heads, 128×128"),
    "densenet_small": Model(torchvision_model("densenet.DenseNet", growth_rate=16, block_config=(4, 8, 8),
                                              num_init_features=32, num_classes=100),
                            "cnn", image(1, 3, 96, 96), 37,
                            "torchvision DenseNet class, growth 16, blocks 4-8-8, 96×96 (dense concatenation)"),
    # transformers
    "transformer_encoder": Model(make_transformer_encoder, "transformer", image(1, 128, 256), 41,
                                 "nn.TransformerEncoderLayer d=256, 4 heads, ff 1024, seq 128"),
    "gpt_decoder": Model(lambda: GPT(vocab=2000, seq=128, d=256, heads=4, layers=2), "transformer",
                         [Input("input_ids", [1, 128], ("tokens", 2000))], 42,
                         "GPT-2-style decoder, 2 causal blocks d=256, 4 heads, seq 128, vocab 2000, tied head"),
    "bert_small": Model(lambda: BERT(vocab=2000, seq=128, d=256, heads=4, layers=4), "transformer",
                        [Input("input_ids", [1, 128], ("tokens", 2000)),
                         Input("attention_mask", [1, 128], ("mask", 100))], 43,
                        "BERT-style encoder, 4 layers d=256, 4 heads, seq 128 (100 tokens + padding), "
                        "attention-mask input"),
    "vit_tiny": Model(torchvision_model("vision_transformer.VisionTransformer", reset="heads.head", image_size=96,
                                        patch_size=16, num_layers=4, num_heads=3, hidden_dim=192, mlp_dim=768,
                                        num_classes=10),
                      "transformer", image(1, 3, 96, 96), 44,
                      "torchvision VisionTransformer class, 96×96, patch 16, 4 layers d=192, 3 heads"),
    # recurrent
    "lstm_kws": Model(lambda: RNNNet("LSTM", 10, 128, 12), "rnn", image(1, 49, 10), 51,
                      "keyword spotter: 49 frames × 10 MFCC → LSTM 128 → fc 12 on the last step"),
    "gru_kws": Model(lambda: RNNNet("GRU", 10, 128, 12), "rnn", image(1, 49, 10), 52,
                     "keyword spotter: 49 frames × 10 MFCC → GRU 128 → fc 12 on the last step"),
    "lstm_bi2": Model(lambda: RNNNet("LSTM", 40, 128, 29, 2, True, True), "rnn", image(1, 100, 40), 53,
                      "2-layer bidirectional LSTM, 100 frames × 40 → 128 per direction → fc 29 per frame"),
    "gru_bi2": Model(lambda: RNNNet("GRU", 40, 64, 29, 2, True, True), "rnn", image(1, 100, 40), 54,
                     "2-layer bidirectional GRU, 100 frames × 40 → 64 per direction → fc 29 per frame"),
    # encoder-decoder vision
    "unet_small": Model(lambda: UNet(3, 2, (16, 32, 64, 128)), "encdec", image(1, 3, 96, 96), 61,
                        "U-Net 16-32-64-128 at 96×96: transposed conv and nearest upsampling, skip concat"),
    "fpn_small": Model(lambda: FPN((32, 64, 128, 256), 64, 8), "encdec", image(1, 3, 128, 128), 62,
                       "feature pyramid on a strided conv backbone at 128×128, nearest and bilinear Resize"),
    # 1-D audio
    "m5": Model(make_m5, "audio", image(1, 1, 16000), 71, "M5 on 16000 samples (1 s at 16 kHz), 35 classes"),
    "wav2letter_small": Model(make_wav2letter, "audio", image(1, 1, 16000), 72,
                              "Wav2Letter on 16000 samples at width 128/512, 29 classes per frame"),
    # MLPs
    "mlp_mnist": Model(make_mlp_mnist, "mlp", image(1, 1, 28, 28), 81, "MLP 784-1024-1024-10 on a 28×28 image"),
    "mlp_mixer": Model(lambda: Mixer(64, 8, 128, 64, 512, 4, 10), "mlp", image(1, 3, 64, 64), 82,
                       "MLP-Mixer, 64×64, patch 8 (64 tokens), d=128, 4 layers"),
}


def base(name):
    """(model name in MODELS, do_constant_folding) of an export's name."""
    return (name[:-len(NOFOLD)], False) if name.endswith(NOFOLD) else (name, True)


def resolve(names, families, folding):
    """The export names to run: NAMEs (either form) and the models of the families (each in the
    forms of folding: "on", "off", "both"), in table order, or all models when neither is given.
    Raises ValueError on an unknown name or family."""
    bad = [f for f in families if f not in FAMILIES]
    if bad:
        raise ValueError("unknown family %s (have: %s)" % (", ".join(bad), ", ".join(FAMILIES)))
    bad = [n for n in names if base(n)[0] not in MODELS]
    if bad:
        raise ValueError("unknown model %s (have: %s; add %s for the unfolded export)" % (
            ", ".join(bad), ", ".join(MODELS), NOFOLD))
    forms = {"on": [""], "off": [NOFOLD], "both": ["", NOFOLD]}[folding]
    picked = [n + f for n, m in MODELS.items() if m.family in families or not (names or families) for f in forms]
    return picked + [n for n in names if n not in picked]


def make(name):
    """The model in eval mode, with its seeded weights, and its seeded inputs (numpy arrays)."""
    m = MODELS[base(name)[0]]
    torch.manual_seed(m.seed)
    model = m.ctor()
    randomize_norms(model, torch.Generator().manual_seed(m.seed + 1000))
    rng = np.random.default_rng(m.seed)
    xs = []
    for inp in m.inputs:
        if inp.kind == "normal":
            xs.append(rng.standard_normal(inp.shape).astype(np.float32))
        elif inp.kind[0] == "tokens":
            xs.append(rng.integers(0, inp.kind[1], inp.shape, dtype=np.int64))
        else:
            x = np.zeros(inp.shape, np.int64)
            x[..., :inp.kind[1]] = 1
            xs.append(x)
    return model.eval(), xs


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


def to_onnx(model, xts, input_names=("input",), **options):
    """The model exported at OPSET with inputs input_names (for the tensors xts) and one output
    `output` (an io.BytesIO); options go to torch.onnx.export (default do_constant_folding=True)."""
    buf = io.BytesIO()
    options.setdefault("do_constant_folding", True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(xts), buf, opset_version=OPSET, input_names=list(input_names),
                          output_names=["output"], **options)
    return buf


def export(name, out):
    model, xs = make(name)
    spec = MODELS[base(name)[0]]
    xts = [torch.from_numpy(x) for x in xs]
    with torch.no_grad():
        y = model(*xts).numpy().astype(np.float32)
    buf = to_onnx(model, xts, [i.name for i in spec.inputs], do_constant_folding=base(name)[1])
    m = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(m)
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    for old in d.glob("input_*.npy"):
        old.unlink()
    (d / "model.onnx").write_bytes(buf.getvalue())
    for k, x in enumerate(xs):
        np.save(d / ("input_%d.npy" % k), x)
    np.save(d / "output_0.npy", y)
    params = sum(int(np.prod(t.dims, dtype=np.int64)) for t in m.graph.initializer)
    print("%-26s %-11s %4d nodes %9d params  input %-18s output %-16s |y| mean %.3g max %.3g" % (
        name, spec.family, len(m.graph.node), params, " ".join(str(x.shape[1:]).replace(" ", "") for x in xs),
        list(y.shape), float(np.abs(y).mean()), float(np.abs(y).max())), flush=True)


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
    ap.add_argument("--list", action="store_true", help="print name, family, inputs and description of each model")
    ap.add_argument("--names", action="store_true", help="print the resolved names, one a line; export nothing")
    ap.add_argument("--family", action="append", default=[], choices=list(FAMILIES),
                    help="the models of this family (repeatable)")
    ap.add_argument("--folding", choices=("on", "off", "both"), default="on",
                    help="the exports of --family / all models: do_constant_folding=True (on, the default), "
                         "False (off: names end in %s), or both" % NOFOLD)
    ap.add_argument("--gemm", type=int, nargs="+", metavar="N",
                    help="instead, write DIR/gemmN/model.onnx, a one-node N×N MatMul, for each N")
    ap.add_argument("names_", nargs="*", metavar="NAME", help="models to export (default: all)")
    a = ap.parse_intermixed_args()
    if a.gemm:
        for n in a.gemm:
            export_gemm(n, a.out)
        return 0
    if a.list:
        for k, v in MODELS.items():
            print("%-20s %-11s %-40s %s" % (k, v.family, " ".join("%s%s" % (i.name, i.shape) for i in v.inputs),
                                             v.desc))
        return 0
    try:
        names = resolve(a.names_, a.family, a.folding)
    except ValueError as e:
        ap.error(str(e))
    if a.names:
        print("\n".join(names))
        return 0
    torch.set_num_threads(1)
    for nm in names:
        try:
            export(nm, a.out)
        except Exception as e:  # a model PyTorch cannot export is an error of this script: stop
            raise SystemExit("models.py: exporting %s failed: %s: %s" % (nm, type(e).__name__, e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
