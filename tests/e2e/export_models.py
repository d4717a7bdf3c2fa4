#!/usr/bin/python3
"""Exports the end-to-end test models from PyTorch to dlcc's JSON graph format v1.

Run with Debian's Python (python3-torch 1.13, python3-onnx 1.12, python3-numpy):

    /usr/bin/python3 tests/e2e/export_models.py [--out DIR] [NAME ...]

For each model it writes DIR/<name>/ (default: beside this script):
    model.json         the graph (docs/model-format.md), ONNX opset 13 semantics
    model.safetensors  initializers with more than 16 elements
    input_K.npy        a seeded random input for graph input K
    output_K.npy       PyTorch's output K for that input (float32)
and, for cnn, the Quick start copy in examples/cnn/ (model.json, model.safetensors,
input.npy, expected_output.npy).

Every model is built from fixed seeds and exported through torch.onnx.export;
the ONNX graph is then converted node by node (Constant nodes stay Constant
nodes with a tensor attribute, small initializers become inline "values").
The script is deterministic: running it twice gives the same bytes.

Before writing, each converted model is checked (see check_model): every
operator and attribute is one dlcc knows (ir/ops.def, ir/opattrs.def), every
tensor is defined before use, the safetensors image parses back and matches,
and the JSON converts back to an ONNX graph equal to the exported one, which
onnx's checker and strict shape inference accept with the expected output
shapes.
"""

import argparse
import collections
import io
import json
import math
import re
import struct
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OPSET = 13
INLINE_MAX = 16          # initializers with at most this many elements are inline "values"


# ----------------------------------------------------------------------------------------------
# dlcc's tables (parsed from the .def files so that this script never disagrees with them)

def read_dtypes():
    """ir/dtypes.def → {onnx type: (json name, safetensors name, numpy descr)}."""
    out = {}
    text = (ROOT / "ir" / "dtypes.def").read_text()
    for m in re.finditer(r'^DT\(\s*\w+,\s*"(\w+)",\s*\d+,\s*(\d+),\s*"(\w+)",\s*(?:"([^"]+)"|NULL)\)',
                         text, re.M):
        out[int(m.group(2))] = (m.group(1), m.group(3), m.group(4))
    return out


def read_ops():
    """ir/ops.def → {name: (min_in, max_in, min_out, max_out)}."""
    out = {}
    text = (ROOT / "ir" / "ops.def").read_text()
    for m in re.finditer(r'^OP\((\w+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),', text, re.M):
        out[m.group(1)] = tuple(int(m.group(k)) for k in range(2, 6))
    return out


def read_opattrs():
    """ir/opattrs.def → {op: {attr: KIND}}, expanding its one-parameter #define macros."""
    text = (ROOT / "ir" / "opattrs.def").read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S).replace("\\\n", " ")
    macros, lines = {}, []
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"#define\s+(\w+)\((\w+)\)\s*(.*)$", line)
        if m:
            macros[m.group(1)] = (m.group(2), m.group(3))
            continue
        m = re.match(r"(\w+)\((\w+)\)$", line)
        if m and m.group(1) in macros:
            param, body = macros[m.group(1)]
            line = re.sub(r"\b%s\b" % param, m.group(2), body)
        lines.append(line)
    out = collections.defaultdict(dict)
    for m in re.finditer(r"OA\((\w+),\s*(\w+),\s*(\w+),", "\n".join(lines)):
        out[m.group(1)][m.group(2)] = m.group(3)
    return out


DTYPES = read_dtypes()
OPS = read_ops()
OPATTRS = read_opattrs()


# ----------------------------------------------------------------------------------------------
# The models

def randomize_norms(model, gen):
    """Gives batch/layer norms non-trivial statistics and affine parameters, so a converter or
    kernel that ignored them would be caught."""
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.BatchNorm2d):
                n = mod.num_features
                mod.running_mean.copy_(0.2 * torch.randn(n, generator=gen))
                mod.running_var.copy_(0.5 + torch.rand(n, generator=gen))
            if isinstance(mod, (nn.BatchNorm2d, nn.LayerNorm)):
                mod.weight.copy_(1 + 0.2 * torch.randn(mod.weight.shape, generator=gen))
                mod.bias.copy_(0.2 * torch.randn(mod.bias.shape, generator=gen))


def conv_bn_relu(cin, cout, k, stride=1, groups=1):
    return [nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, groups=groups, bias=False),
            nn.BatchNorm2d(cout), nn.ReLU()]


def make_cnn():
    # [1,3,16,16] → conv/bn/relu/maxpool 2 → [1,8,8,8] → conv/bn/relu/maxpool 3 s2 p1 → [1,16,4,4]
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(3, stride=2, padding=1),
        nn.Flatten(), nn.Linear(16 * 4 * 4, 10))


def make_dscnn():
    # [1,3,32,32] → stem s2 → [1,16,16,16] → dw/pw → avgpool 3 s2 p1 → [1,32,8,8] → dw/pw
    # → avgpool 2 → [1,32,4,4] → global average pool → linear
    return nn.Sequential(
        *conv_bn_relu(3, 16, 3, stride=2),
        *conv_bn_relu(16, 16, 3, groups=16), *conv_bn_relu(16, 32, 1),
        nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
        *conv_bn_relu(32, 32, 3, groups=32), *conv_bn_relu(32, 32, 1),
        nn.AvgPool2d(2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


def make_mlp():
    return nn.Sequential(nn.Linear(64, 48), nn.ReLU(), nn.Linear(48, 32), nn.ReLU(),
                         nn.Linear(32, 10), nn.Softmax(dim=-1))


def make_encoder():
    return nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, activation="gelu",
                                      batch_first=True)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(*conv_bn_relu(cin, cout, 3, stride=stride),
                                  nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout))
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                      nn.BatchNorm2d(cout))
        self.relu = nn.ReLU()

    def forward(self, x):
        skip = x if self.down is None else self.down(x)
        return self.relu(self.body(x) + skip)


def make_resnet():
    # [1,3,16,16] → stem → [1,8,16,16] → block → block s2 (1×1 s2 downsample) → [1,16,8,8] → gap → fc
    return nn.Sequential(*conv_bn_relu(3, 8, 3), BasicBlock(8, 8, 1), BasicBlock(8, 16, 2),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))


def make_raider():
    # RAIDER-like binary-image classifier for FPGA tests (about 2.8k parameters):
    # [1,1,16,16] binary → conv 3×3 8 + relu + maxpool 2 → [1,8,8,8] → conv 3×3 8 + relu + maxpool 2
    # → [1,8,4,4] → linear 128→16 + relu → linear 16→4
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(8 * 4 * 4, 16), nn.ReLU(), nn.Linear(16, 4))


def make_cedr():
    # the CEDR poster's network: [1,3,6,6] → conv 3×3 3→8 + relu → [1,8,4,4] → maxpool 2 → [1,8,2,2]
    # → linear 32→16 (the heterogeneous target's reference model, docs/targets/hetero.md)
    return nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 2 * 2, 16))


def make_jet():
    # the hls4ml jet-tagging MLP: 16 features → 64 → 32 → 32 → 5 classes
    return nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(),
                         nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 5), nn.Softmax(dim=-1))


class Recurrent(nn.Module):
    """A 2-layer bidirectional LSTM, a GRU over its output (linear_before_reset, as PyTorch
    exports it), a Linear on every step: batch 2 of 12 steps."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 24, 2, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(48, 20, batch_first=True)
        self.fc = nn.Linear(20, 5)

    def forward(self, x):
        return self.fc(self.gru(self.lstm(x)[0])[0])


def make_rnn():
    return Recurrent()


def raider_data(gen, n):
    """4 classes of 16×16 binary images: a horizontal bar, a vertical bar, a diagonal, a square
    outline, at random positions, with 5% of the pixels flipped."""
    x = torch.zeros(n, 1, 16, 16)
    y = torch.randint(0, 4, (n,), generator=gen)
    pos = torch.randint(2, 12, (n, 2), generator=gen)
    for i in range(n):
        r, c = int(pos[i, 0]), int(pos[i, 1])
        k = int(y[i])
        if k == 0:
            x[i, 0, r, 1:15] = 1
        elif k == 1:
            x[i, 0, 1:15, c] = 1
        elif k == 2:
            for j in range(12):
                x[i, 0, 2 + j, (c + j) % 16] = 1
        else:
            x[i, 0, r - 2:r + 3, c - 2] = x[i, 0, r - 2:r + 3, c + 2] = 1
            x[i, 0, r - 2, c - 2:c + 3] = x[i, 0, r + 2, c - 2:c + 3] = 1
    flip = torch.rand(n, 1, 16, 16, generator=gen) < 0.05
    return torch.where(flip, 1 - x, x), y


def jet_data(gen, n):
    """5 Gaussian clusters in 16 dimensions."""
    centers = torch.randn(5, 16, generator=gen) * 1.5
    y = torch.randint(0, 5, (n,), generator=gen)
    return centers[y] + torch.randn(n, 16, generator=gen), y


def train(model, seed, data, lr, weight_decay, steps):
    """A short, deterministic training run (single thread, fixed seeds) so the FPGA tests'
    classification margins mean something; cross entropy on the logits, weights clamped to
    [-1, 0.99] after each step (what a user targeting fixed<8,1> weights trains with)."""
    gen = torch.Generator().manual_seed(seed + 2000)
    x, y = data(gen, 512)
    logits_model = model[:-1] if isinstance(model[-1], nn.Softmax) else model
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    for step in range(steps):
        idx = torch.randint(0, x.shape[0], (64,), generator=gen)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(logits_model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        with torch.no_grad():       # weights stay inside fixed<8,1>'s range [-1, 1)
            for prm in model.parameters():
                if prm.dim() > 1:
                    prm.clamp_(-1.0, 0.99)


# Models trained before export (the others keep their seeded initialization), and models whose
# test input is not standard normal.
# name: (data, learning rate, weight decay, steps); RAIDER's weight decay keeps its activations
# inside fixed<16,6>'s range [-32, 32).
TRAIN = {"raider": (raider_data, 0.005, 5e-3, 200), "jet": (jet_data, 0.01, 0.0, 300)}
INPUTS = {"raider": lambda rng, shape: raider_data(torch.Generator().manual_seed(int(rng.integers(1 << 30))),
                                                  shape[0])[0].numpy()}

# name: (constructor, input shape, seed, export options)
EVAL_KEEP_BN = dict(training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
MODELS = {
    "cnn": (make_cnn, [1, 3, 16, 16], 1, EVAL_KEEP_BN),   # BatchNormalization stays in the graph
    "dscnn": (make_dscnn, [1, 3, 32, 32], 2, {}),          # BN folded into Conv by the exporter
    "mlp": (make_mlp, [2, 64], 3, {}),
    "encoder": (make_encoder, [1, 8, 32], 4, {}),
    "resnet": (make_resnet, [1, 3, 16, 16], 5, {}),
    "raider": (make_raider, [1, 1, 16, 16], 6, {}),
    "jet": (make_jet, [4, 16], 7, {}),
    "rnn": (make_rnn, [2, 12, 8], 8, {}),
    "cedr": (make_cedr, [1, 3, 6, 6], 9, {}),
}

# The README's Quick start model (examples/), kept identical to the test model.
EXAMPLES = {"cnn": ROOT / "examples" / "cnn"}


def make_model(name):
    """The PyTorch module of test model `name`, seeded (and trained) as exported; also what
    bench/hls4ml_peer.py hands to hls4ml."""
    ctor, shape, seed, opts = MODELS[name]
    torch.manual_seed(seed)
    model = ctor()
    randomize_norms(model, torch.Generator().manual_seed(seed + 1000))
    if name in TRAIN:
        train(model, seed, *TRAIN[name])
    return model.eval()


def build(name):
    ctor, shape, seed, opts = MODELS[name]
    model = make_model(name)
    rng = np.random.default_rng(seed)
    x = INPUTS[name](rng, shape) if name in INPUTS else rng.standard_normal(shape).astype(np.float32)
    xt = torch.from_numpy(x)
    # Reference: the plain (traced, non-fast-path) forward with autograd on, which is the math
    # the exported graph encodes; with no_grad PyTorch may take fused fast paths.
    y = model(xt).detach().numpy().astype(np.float32)
    with torch.no_grad():
        y_fast = model(xt).numpy()
    if not np.allclose(y, y_fast, rtol=1e-4, atol=1e-5):
        raise SystemExit("%s: PyTorch's fast and plain paths disagree" % name)
    buf = io.BytesIO()
    kw = dict(opset_version=OPSET, do_constant_folding=True, input_names=["input"],
              output_names=["output"])
    kw.update(opts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (xt,), buf, **kw)
    return onnx.load_from_string(buf.getvalue()), [x], [y]


# ----------------------------------------------------------------------------------------------
# ONNX → dlcc JSON v1 + safetensors

def f32(v):
    """A float32 value as the shortest decimal that reads back to the same float32."""
    v = np.float32(v)
    if not np.isfinite(v):
        raise ValueError("non-finite float %r cannot be written as JSON" % v)
    return float(np.format_float_scientific(v, unique=True))


def json_values(arr):
    flat = arr.reshape(-1)
    if arr.dtype.kind == "f":
        if arr.dtype == np.float64:
            return [float(v) for v in flat]
        return [f32(v) for v in flat]
    if arr.dtype.kind == "b":
        return [bool(v) for v in flat]
    return [int(v) for v in flat]


def dtype_name(onnx_type):
    if onnx_type not in DTYPES:
        raise ValueError("ONNX data type %d has no dlcc dtype" % onnx_type)
    return DTYPES[onnx_type][0]


def tensor_json(t):
    arr = onnx.numpy_helper.to_array(t)
    return {"dtype": dtype_name(t.data_type), "shape": list(arr.shape), "values": json_values(arr)}


def attr_json(a):
    A = onnx.AttributeProto
    if a.type == A.INT:
        return int(a.i)
    if a.type == A.FLOAT:
        return f32(a.f)
    if a.type == A.STRING:
        return a.s.decode("utf-8")
    if a.type == A.INTS:
        return [int(v) for v in a.ints]
    if a.type == A.FLOATS:
        return [f32(v) for v in a.floats]
    if a.type == A.STRINGS:
        return [s.decode("utf-8") for s in a.strings]
    if a.type == A.TENSOR:
        return tensor_json(a.t)
    raise ValueError("attribute %s: type %d not representable in JSON v1" % (a.name, a.type))


def value_info_json(vi, with_type):
    tt = vi.type.tensor_type
    out = {"name": vi.name}
    if with_type:
        out["dtype"] = dtype_name(tt.elem_type)
        dims = []
        for d in tt.shape.dim:
            if not d.HasField("dim_value"):
                raise ValueError("%s: dynamic dimension %r" % (vi.name, d.dim_param))
            dims.append(int(d.dim_value))
        out["shape"] = dims
    return out


def safetensors_bytes(tensors):
    """tensors: [(name, numpy array, ONNX data type)] → the safetensors image (names sorted, data contiguous,
    header padded with spaces to a multiple of 8 as the reference implementation does)."""
    header, blobs, off = {}, [], 0
    for name, arr, onnx_type in sorted(tensors, key=lambda t: t[0]):
        st = DTYPES[onnx_type][1]
        data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": st, "shape": list(arr.shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    h = json.dumps(header, separators=(",", ":"), sort_keys=True).encode("utf-8")
    h += b" " * (-(8 + len(h)) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def convert(model, name):
    """Returns (JSON text, safetensors bytes) for an ONNX ModelProto."""
    g = model.graph
    opsets = {o.domain: o.version for o in model.opset_import}
    init_names = {t.name for t in g.initializer}
    doc = collections.OrderedDict()
    doc["format"] = "dlcc-graph"
    doc["version"] = 1
    doc["name"] = name
    doc["opset"] = opsets.get("", opsets.get("ai.onnx"))
    inits, weights = [], []
    for t in g.initializer:
        arr = onnx.numpy_helper.to_array(t)
        entry = {"name": t.name, "dtype": dtype_name(t.data_type), "shape": list(arr.shape)}
        if arr.size <= INLINE_MAX:
            entry["values"] = json_values(arr)
        else:
            weights.append((t.name, arr, t.data_type))
        inits.append(entry)
    if weights:
        doc["weights"] = "model.safetensors"
    doc["inputs"] = [value_info_json(v, True) for v in g.input if v.name not in init_names]
    doc["outputs"] = [value_info_json(v, True) for v in g.output]
    doc["initializers"] = inits
    nodes = []
    for n in g.node:
        e = collections.OrderedDict()
        if n.name:
            e["name"] = n.name
        e["op"] = n.op_type
        if n.domain not in ("", "ai.onnx"):
            e["domain"] = n.domain
        e["inputs"] = list(n.input)
        e["outputs"] = list(n.output)
        if n.attribute:
            e["attrs"] = collections.OrderedDict((a.name, attr_json(a)) for a in n.attribute)
        nodes.append(e)
    doc["nodes"] = nodes

    # One line per list element keeps the files readable and diffs small.
    def dump(v):
        return json.dumps(v, separators=(", ", ": "), ensure_ascii=False, allow_nan=False)
    lines = ["{"]
    keys = list(doc)
    for i, k in enumerate(keys):
        comma = "," if i + 1 < len(keys) else ""
        v = doc[k]
        if isinstance(v, list) and v:
            lines.append('  %s: [' % dump(k))
            lines += ["    %s%s" % (dump(x), "," if j + 1 < len(v) else "") for j, x in enumerate(v)]
            lines.append("  ]%s" % comma)
        else:
            lines.append("  %s: %s%s" % (dump(k), dump(v), comma))
    lines.append("}")
    return "\n".join(lines) + "\n", (safetensors_bytes(weights) if weights else None)


# ----------------------------------------------------------------------------------------------
# Self-check: structure against dlcc's tables, and a lossless round trip back to ONNX

ATTR_KIND = {int: "INT", float: "FLOAT", str: "STRING"}


def attr_kind(v):
    if isinstance(v, dict):
        return "TENSOR"
    if isinstance(v, list):
        return (ATTR_KIND[type(v[0])] + "S") if v else None
    return ATTR_KIND[type(v)]


def parse_safetensors(data):
    (hlen,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + hlen])
    header.pop("__metadata__", None)
    body = data[8 + hlen:]
    st_np = {v[1]: np.dtype(v[2]) for v in DTYPES.values() if v[2]}
    out, spans = {}, []
    for k, e in header.items():
        b, end = e["data_offsets"]
        dt = st_np[e["dtype"]]
        assert end - b == int(np.prod(e["shape"], dtype=np.int64)) * dt.itemsize, k
        out[k] = np.frombuffer(body[b:end], dtype=dt).reshape(e["shape"])
        spans.append((b, end))
    spans.sort()
    pos = 0
    for b, end in spans:
        assert b == pos, "safetensors data not contiguous"
        pos = end
    assert pos == len(body), "safetensors data section not covered exactly"
    return out


def to_onnx(doc, weights):
    """Builds an ONNX ModelProto back from a JSON v1 document and its weights."""
    json_dtypes = {v[0]: np.dtype(v[2]) if v[2] else None for v in DTYPES.values()}

    def to_tensor(nm, dt, shape, values):
        np_dt = json_dtypes[dt]
        return onnx.numpy_helper.from_array(np.array(values, dtype=np_dt).reshape(shape), nm)

    def to_attr(k, v):
        if isinstance(v, dict):
            return onnx.helper.make_attribute(k, to_tensor("", v["dtype"], v["shape"], v["values"]))
        return onnx.helper.make_attribute(k, v)

    inits = []
    for t in doc["initializers"]:
        if "values" in t:
            inits.append(to_tensor(t["name"], t["dtype"], t["shape"], t["values"]))
        else:
            inits.append(onnx.numpy_helper.from_array(weights[t.get("key", t["name"])], t["name"]))
    onnx_types = {v[0]: k for k, v in DTYPES.items()}
    nodes = []
    for n in doc["nodes"]:
        node = onnx.helper.make_node(n["op"], n["inputs"], n["outputs"], name=n.get("name"))
        node.attribute.extend(to_attr(k, v) for k, v in n.get("attrs", {}).items())
        nodes.append(node)
    graph = onnx.helper.make_graph(
        nodes, doc["name"],
        [onnx.helper.make_tensor_value_info(v["name"], onnx_types[v["dtype"]], v["shape"])
         for v in doc["inputs"]],
        [onnx.helper.make_tensor_value_info(v["name"], onnx_types[v["dtype"]], v["shape"])
         for v in doc["outputs"]],
        inits)
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", doc["opset"])])


def check_model(name, text, st, onnx_model, y_ref):
    def fail(msg):
        raise SystemExit("%s: self-check failed: %s" % (name, msg))

    doc = json.loads(text, object_pairs_hook=lambda kv: dict(kv) if len({k for k, _ in kv}) == len(kv)
                     else fail("duplicate key"))
    weights = parse_safetensors(st) if st is not None else {}
    json_dtypes = {v[0]: np.dtype(v[2]) if v[2] else None for v in DTYPES.values()}
    defined = {}
    used_weights = set()
    for v in doc["inputs"]:
        defined[v["name"]] = "input"
    for t in doc["initializers"]:
        if t["name"] in defined:
            fail("tensor %s defined twice" % t["name"])
        defined[t["name"]] = "initializer"
        if "values" in t:
            if len(t["values"]) != int(np.prod(t["shape"], dtype=np.int64)):
                fail("%s: values do not match shape" % t["name"])
        else:
            key = t.get("key", t["name"])
            if key not in weights:
                fail("%s: not in the weights file" % key)
            w = weights[key]
            if list(w.shape) != t["shape"] or w.dtype != json_dtypes[t["dtype"]]:
                fail("%s: shape/dtype disagree with the weights file" % key)
            used_weights.add(key)
    if set(weights) - used_weights:
        fail("unused weights %s" % sorted(set(weights) - used_weights))
    hist = collections.Counter()
    for n in doc["nodes"]:
        op = n["op"]
        hist[op] += 1
        if op not in OPS:
            fail("operator %s is not in ir/ops.def" % op)
        min_in, max_in, min_out, max_out = OPS[op]
        if not (min_in <= len(n["inputs"]) <= max_in and min_out <= len(n["outputs"]) <= max_out):
            fail("%s: arity out of range" % n.get("name", op))
        for a, v in n.get("attrs", {}).items():
            kind = OPATTRS.get(op, {}).get(a)
            if kind is None:
                fail("%s: attribute %s of %s is not in ir/opattrs.def" % (n.get("name"), a, op))
            if attr_kind(v) != kind and not (kind == "FLOAT" and attr_kind(v) == "INT"):
                fail("%s: attribute %s is %s, dlcc expects %s" % (n.get("name"), a, attr_kind(v), kind))
        for i in n["inputs"]:
            if i and i not in defined:
                fail("%s: input %s used before it is defined" % (n.get("name"), i))
        for o in n["outputs"]:
            if o in defined:
                fail("tensor %s defined twice" % o)
            if o:
                defined[o] = "node"
    for o in doc["outputs"]:
        if o["name"] not in defined:
            fail("graph output %s is never produced" % o["name"])
        if o["shape"] != list(y_ref[doc["outputs"].index(o)].shape):
            fail("graph output %s: shape disagrees with PyTorch's output" % o["name"])

    # Round trip: JSON + safetensors → ONNX must equal the exported graph.
    back = to_onnx(doc, weights)
    onnx.checker.check_model(back, full_check=True)
    inferred = onnx.shape_inference.infer_shapes(back, strict_mode=True)
    for o, y in zip(inferred.graph.output, y_ref):
        dims = [d.dim_value for d in o.type.tensor_type.shape.dim]
        if dims != list(y.shape):
            fail("ONNX shape inference gives %s for %s, PyTorch %s" % (dims, o.name, list(y.shape)))

    orig = onnx_model.graph
    if len(orig.node) != len(back.graph.node):
        fail("node count changed in the round trip")
    for a, b in zip(orig.node, back.graph.node):
        if (a.op_type, list(a.input), list(a.output)) != (b.op_type, list(b.input), list(b.output)):
            fail("node %s changed in the round trip" % a.name)
        aa = {x.name: onnx.helper.get_attribute_value(x) for x in a.attribute}
        bb = {x.name: onnx.helper.get_attribute_value(x) for x in b.attribute}
        if aa.keys() != bb.keys():
            fail("node %s: attributes changed in the round trip" % a.name)
        for k in aa:
            va, vb = aa[k], bb[k]
            if isinstance(va, onnx.TensorProto):
                ta, tb = onnx.numpy_helper.to_array(va), onnx.numpy_helper.to_array(vb)
                same = ta.dtype == tb.dtype and ta.shape == tb.shape and np.array_equal(ta, tb)
            elif isinstance(va, float) or (isinstance(va, list) and va and isinstance(va[0], float)):
                same = np.array_equal(np.float32(va), np.float32(vb))
            else:
                same = va == vb
            if not same:
                fail("node %s: attribute %s changed in the round trip" % (a.name, k))
    ob = {t.name: onnx.numpy_helper.to_array(t) for t in back.graph.initializer}
    for t in orig.initializer:
        a = onnx.numpy_helper.to_array(t)
        b = ob.get(t.name)
        if b is None or a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
            fail("initializer %s changed in the round trip" % t.name)
    return hist, back


def run_onnxruntime(name, back, xs, ys):
    """Where onnxruntime is importable (it is not a Debian package; a venv made with
    --system-site-packages and `pip install onnxruntime` will do), executes the graph rebuilt
    from the JSON and compares it with PyTorch.  Returns the max abs error, or None."""
    try:
        import onnxruntime
    except ImportError:
        return None
    so = onnxruntime.SessionOptions()
    so.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = onnxruntime.InferenceSession(back.SerializeToString(), so, providers=["CPUExecutionProvider"])
    outs = sess.run(None, {i.name: x for i, x in zip(back.graph.input, xs)})
    err = 0.0
    for o, y in zip(outs, ys):
        if o.shape != y.shape or not np.allclose(o, y, rtol=1e-4, atol=1e-5):
            raise SystemExit("%s: onnxruntime on the converted graph disagrees with PyTorch" % name)
        err = max(err, float(np.max(np.abs(o.astype(np.float64) - y))))
    return err


# ----------------------------------------------------------------------------------------------

def npy_bytes(arr):
    f = io.BytesIO()
    np.save(f, arr, allow_pickle=False)
    return f.getvalue()


def write_if_changed(path, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=HERE, help="output folder (default: %(default)s)")
    ap.add_argument("names", nargs="*", help="models to export (default: all)")
    args = ap.parse_args()
    names = args.names or list(MODELS)
    for nm in names:
        if nm not in MODELS:
            ap.error("unknown model %s (have: %s)" % (nm, ", ".join(MODELS)))
    torch.set_num_threads(1)
    for nm in names:
        onnx_model, xs, ys = build(nm)
        text, st = convert(onnx_model, nm)
        hist, back = check_model(nm, text, st, onnx_model, ys)
        ort_err = run_onnxruntime(nm, back, xs, ys)
        d = args.out / nm
        d.mkdir(parents=True, exist_ok=True)
        write_if_changed(d / "model.json", text)
        if st is not None:
            write_if_changed(d / "model.safetensors", st)
        for k, x in enumerate(xs):
            write_if_changed(d / ("input_%d.npy" % k), npy_bytes(x))
        for k, y in enumerate(ys):
            write_if_changed(d / ("output_%d.npy" % k), npy_bytes(y))
        if nm in EXAMPLES and args.out == HERE:
            ex = EXAMPLES[nm]
            ex.mkdir(parents=True, exist_ok=True)
            write_if_changed(ex / "model.json", text)
            write_if_changed(ex / "model.safetensors", st)
            write_if_changed(ex / "input.npy", npy_bytes(xs[0]))
            write_if_changed(ex / "expected_output.npy", npy_bytes(ys[0]))
        n_params = sum(int(np.prod(t.dims, dtype=np.int64)) for t in onnx_model.graph.initializer)
        print("%-8s %3d nodes, %6d parameters, %7d weight bytes%s: %s" % (
            nm, sum(hist.values()), n_params, len(st) if st else 0,
            "" if ort_err is None else ", onnxruntime max abs err %.1e" % ort_err,
            " ".join("%s=%d" % kv for kv in sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
