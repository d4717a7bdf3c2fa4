#!/usr/bin/python3
"""Writes the binary inputs of the bad-input suite (ONNX models, safetensors
files, .npy files) into tests/errors/cases/.  The files are committed, so the
suite needs neither this script nor the onnx package; rerun it (Debian's
/usr/bin/python3 with python3-onnx) after changing it.  Each file is made
wrong in exactly one way; the .expect files beside them say how dlcc must
refuse it."""
import json
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")


def write(folder, name, data):
    with open(os.path.join(HERE, folder, name), "wb") as f:
        f.write(data)


# ---------------------------------------------------------------- ONNX

def relu_model(inits=(), nodes=None, opset=13):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    nodes = nodes or [helper.make_node("Relu", ["x"], ["y"], name="r")]
    g = helper.make_graph(nodes, "g", [x], [y], initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def external(location, offset=None, length=None):
    """A model adding an initializer 'w' (float32 [3]) held in external data."""
    t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[3])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    return relu_model(inits=[t], nodes=[node]).SerializeToString()


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def ld(field, payload):
    """A length-delimited protobuf field."""
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def patch(data, find, repl):
    """Replaces the one occurrence of find."""
    assert data.count(find) == 1, find
    return data.replace(find, repl)


def onnx_cases():
    good = relu_model().SerializeToString()
    write("onnx", "truncated.onnx", good[: len(good) // 2])
    # ModelProto.graph (7) whose length claims far more than the file holds
    write("onnx", "length_past_end.onnx", varint(1 << 3) + varint(8) + ld(7, b"")[:1] + varint(1 << 20) + b"\0" * 16)
    # GraphProto.node (1) > NodeProto.attribute (5) > AttributeProto.g (6) > GraphProto ... 200 levels deep
    inner = b""
    for _ in range(200):
        inner = ld(1, ld(5, ld(6, inner)))
    write("onnx", "deep_nesting.onnx", varint(1 << 3) + varint(8) + ld(7, inner))
    # enum values no enum names (Python's protobuf refuses to set them, so the
    # serialized bytes are patched in place; one-byte varints keep lengths)
    t = helper.make_tensor("w", TensorProto.FLOAT, [3], [1, 2, 3])
    m = relu_model(inits=[t], nodes=[helper.make_node("Add", ["x", "w"], ["y"], name="add")])
    write("onnx", "unknown_dtype_enum.onnx", patch(m.SerializeToString(), b"\x08\x03\x10\x01", b"\x08\x03\x10\x4d"))
    n = helper.make_node("LeakyRelu", ["x"], ["y"], name="lr", alpha=0.5)
    write("onnx", "unknown_attr_type.onnx", patch(relu_model(nodes=[n]).SerializeToString(), b"\xa0\x01\x01",
                                                  b"\xa0\x01\x63"))
    good = relu_model().SerializeToString()
    i = good.index(b"\x08\x01", good.rindex(b"\x0a\x01x\x12"))  # graph input x: elem_type FLOAT
    write("onnx", "unknown_input_type.onnx", good[:i] + b"\x08\x63" + good[i + 2:])
    n = helper.make_node("Frobnicate", ["x"], ["y"], name="f")
    write("onnx", "unknown_operator.onnx", relu_model(nodes=[n]).SerializeToString())
    n = helper.make_node("Relu", ["x"], ["y"], name="r", domain="com.example")
    m = relu_model(nodes=[n])
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    write("onnx", "unknown_domain.onnx", m.SerializeToString())
    write("onnx", "opset_too_new.onnx", relu_model(opset=99).SerializeToString())
    # not a protobuf at all: a wire type 7 (invalid) in the first tag
    write("onnx", "garbage.onnx", b"\x0f\xff\xff\xff\xff garbage")
    # found by fuzz_onnx: Pad-2's float 'value' for an int16 input was cast
    # to int64 out of range (UB); it saturates now
    x = helper.make_tensor_value_info("x", TensorProto.INT16, [1, 2])
    y = helper.make_tensor_value_info("y", TensorProto.INT16, [1, 3])
    n = helper.make_node("Pad", ["x"], ["y"], name="pad", pads=[0, 1, 0, 0], value=-6.5e32)
    m = helper.make_model(helper.make_graph([n], "g", [x], [y]), opset_imports=[helper.make_opsetid("", 6)],
                          ir_version=3)
    write("onnx", "pad_value_range.onnx", m.SerializeToString())
    write("onnx", "x_i16.npy", npy("{'descr': '<i2', 'fortran_order': False, 'shape': (1, 2), }",
                                   np.array([[7, -9]], "<i2").tobytes()))
    # found by fuzz_onnx: Clip-6's float max on int64 became 2^63 in lowering,
    # cast to int64 out of range (UB); it saturates now
    x = helper.make_tensor_value_info("x", TensorProto.INT64, [3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, [3, 4])
    n = helper.make_node("Clip", ["x"], ["y"], name="clip", min=-0.5, max=1.7e38)
    m = helper.make_model(helper.make_graph([n], "g", [x], [y]), opset_imports=[helper.make_opsetid("", 6)],
                          ir_version=3)
    write("onnx", "clip_int64_range.onnx", m.SerializeToString())
    # found by fuzz_onnx: an Upsample to 865 million rows made lowering
    # allocate gigabytes of Resize tables
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    n = helper.make_node("Upsample", ["x"], ["y"], name="up", mode="nearest", scales=[865370112.0, 1, 2, 3])
    m = helper.make_model(helper.make_graph([n], "g", [x], [y]), opset_imports=[helper.make_opsetid("", 7)],
                          ir_version=3)
    write("onnx", "resize_huge_axis.onnx", m.SerializeToString())
    # 5 million rows: within the tensor limits, beyond Resize's tables on the CPU target
    n = helper.make_node("Upsample", ["x"], ["y"], name="up", mode="nearest", scales=[5000000.0, 1, 2, 3])
    m = helper.make_model(helper.make_graph([n], "g", [x], [y]), opset_imports=[helper.make_opsetid("", 7)],
                          ir_version=3)
    write("onnx", "resize_axis_limit.onnx", m.SerializeToString())
    # found by fuzz_onnx: a Resize whose output is empty (a dim of 0) but has an
    # axis of 268 million made the interpreter allocate 4 GB of tap tables;
    # 8 million now, the tensor limits counting a dim of 0 as 1 (docs/limits.md)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 47])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    sc = helper.make_tensor("scales", TensorProto.FLOAT, [4], [1.0, 8388608.0, 1e-30, 3.0])
    n = helper.make_node("Resize", ["x", "scales"], ["y"], name="rs", mode="linear")
    m = helper.make_model(helper.make_graph([n], "g", [x], [y], initializer=[sc]),
                          opset_imports=[helper.make_opsetid("", 10)], ir_version=5)
    write("onnx", "resize_empty_output.onnx", m.SerializeToString())
    # the issue that brought the limits on integer attributes: a Conv with a
    # stride of 2^62 passed shape inference and overflowed int64 in lowering
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = helper.make_tensor("w", TensorProto.FLOAT, [2, 1, 3, 3], [0.5] * 18)
    n = helper.make_node("Conv", ["x", "w"], ["y"], name="c", group=2, pads=[1, 1, 1, 1], strides=[1 << 62, 1 << 62])
    m = helper.make_model(helper.make_graph([n], "g", [x], [y], initializer=[w]),
                          opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    write("onnx", "conv_stride_2_62.onnx", m.SerializeToString())
    write("onnx", "x_1x1x2x47.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2, 47), }",
                                        np.zeros(94, "<f4").tobytes()))
    # external data
    write("paths", "w.bin", np.arange(3, dtype=np.float32).tobytes())
    write("paths", "ext_absolute.onnx", external("/etc/passwd"))
    write("paths", "ext_dotdot.onnx", external("../w.bin"))
    write("paths", "ext_nested_dotdot.onnx", external("a/../../w.bin"))
    write("paths", "ext_symlink.onnx", external("link.bin"))
    write("paths", "ext_symlink_dir.onnx", external("linkdir/passwd"))
    write("paths", "ext_offset_past_end.onnx", external("w.bin", offset=100))
    write("paths", "ext_length_past_end.onnx", external("w.bin", offset=4, length=12))
    write("paths", "ext_bad_offset.onnx", external("w.bin", offset="-4"))


# ---------------------------------------------------------------- safetensors

def st(header, data=b"", length=None):
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(h) if length is None else length) + h + data


F3 = {"dtype": "F32", "shape": [3]}


def st_cases():
    write("safetensors", "header_past_end.safetensors", st({"w": dict(F3, data_offsets=[0, 12])}, b"\0" * 12,
                                                          length=4096))
    write("safetensors", "header_too_big.safetensors", st(b"{}", length=(100 << 20) + 1))
    write("safetensors", "header_not_object.safetensors", st([1, 2, 3]))
    write("safetensors", "short_file.safetensors", b"\x02\0\0")
    write("safetensors", "deep_nesting.safetensors", st(b'{"a":' + b"[" * 100000 + b"]" * 100000 + b"}"))
    write("safetensors", "overlap.safetensors",
          st({"w": dict(F3, data_offsets=[0, 12]), "v": dict(F3, data_offsets=[8, 20])}, b"\0" * 20))
    write("safetensors", "gap.safetensors",
          st({"w": dict(F3, data_offsets=[0, 12]), "v": dict(F3, data_offsets=[16, 28])}, b"\0" * 28))
    write("safetensors", "end_before_begin.safetensors", st({"w": dict(F3, data_offsets=[12, 0])}, b"\0" * 12))
    write("safetensors", "span_mismatch.safetensors", st({"w": dict(F3, data_offsets=[0, 8])}, b"\0" * 8))
    write("safetensors", "numel_overflow.safetensors",
          st({"w": {"dtype": "F32", "shape": [4194305, 4194305, 211106198978564], "data_offsets": [0, 4]}},
             b"\0" * 4))
    write("safetensors", "offsets_past_data.safetensors", st({"w": dict(F3, data_offsets=[0, 12])}, b"\0" * 4))
    write("safetensors", "bad_dtype.safetensors",
          st({"w": {"dtype": "F128", "shape": [3], "data_offsets": [0, 12]}}, b"\0" * 12))
    write("safetensors", "dtype_mismatch.safetensors",
          st({"w": {"dtype": "I32", "shape": [3], "data_offsets": [0, 12]}}, b"\0" * 12))


# ---------------------------------------------------------------- .npy

def npy(header, data, magic=b"\x93NUMPY", version=b"\x01\x00"):
    h = header.encode("latin1")
    h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
    return magic + version + struct.pack("<H", len(h)) + h + data


def npy_cases():
    ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"
    data = np.array([1, -2, 3], np.float32).tobytes()
    write("npy", "x.npy", npy(ok, data))
    write("outputs", "x.npy", npy(ok, data))
    write("cli", "x.npy", npy(ok, data))
    write("outputs", "x_f64.npy", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                                      np.array([[1, -2, 3], [-4, 5, -6]], "<f8").tobytes()))
    write("outputs", "idx_oob.npy", npy("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                                        np.array([1, 7], "<i8").tobytes()))
    write("npy", "bad_magic.npy", npy(ok, data, magic=b"\x93NUMPZ"))
    write("npy", "truncated.npy", npy(ok, data)[:-5])
    write("npy", "big_endian.npy",
          npy("{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }", np.array([1, 2, 3], ">f4").tobytes()))
    write("npy", "fortran.npy",
          npy("{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", data))
    write("npy", "wrong_dtype.npy",
          npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", np.zeros(3).tobytes()))
    write("npy", "wrong_shape.npy",
          npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", np.zeros(4, np.float32).tobytes()))
    write("npy", "bad_version.npy", npy(ok, data, version=b"\x09\x00"))
    write("npy", "header_garbage.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}",
                                           data))


# ---------------------------------------------------------------- JSON models

def model(weights=None, inits=None, nodes=None, inputs=None, outputs=None, **extra):
    """A dlcc JSON model: by default y = x + w with x, w float32 [3]."""
    m = {"format": "dlcc-graph", "version": 1, "name": "m", "opset": 13}
    if weights:
        m["weights"] = weights
    m["inputs"] = inputs or [{"name": "x", "dtype": "float32", "shape": [3]}]
    m["outputs"] = outputs or [{"name": "y"}]
    m["initializers"] = [{"name": "w", "dtype": "float32", "shape": [3]}] if inits is None else inits
    m["nodes"] = nodes or [{"name": "add", "op": "Add", "inputs": ["x", "w"], "outputs": ["y"]}]
    m.update(extra)
    return json.dumps(m).encode()


def json_models():
    for f in sorted(os.listdir(os.path.join(HERE, "safetensors"))):
        if f.endswith(".safetensors"):
            write("safetensors", f[:-len(".safetensors")] + ".json", model(weights=f))
    for name, weights in (("weights_nested_dotdot", "a/../../w.safetensors"), ("weights_symlink", "link.safetensors"),
                          ("weights_missing", "nowhere.safetensors"), ("weights_directory", "a")):
        write("paths", name + ".json", model(weights=weights))
    os.makedirs(os.path.join(HERE, "paths", "a"), exist_ok=True)
    with open(os.path.join(HERE, "paths", "a", "README"), "w") as f:
        f.write("a folder named where a weights file is expected\n")
    relu = [{"name": "r", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}]
    write("npy", "relu.json", model(inits=[], nodes=relu))
    write("outputs", "evil.json", model(inits=[], nodes=[{"name": "r", "op": "Relu", "inputs": ["x"],
                                                          "outputs": ["../../evil"]}],
                                        outputs=[{"name": "../../evil"}]))
    write("outputs", "relu.json", model(inits=[], nodes=relu))
    write("cli", "relu.json", model(inits=[], nodes=relu))
    # found by fuzz_pipeline: ReduceMax / ReduceMin of float64 shifted 1 by 63 (UB)
    axes = [{"name": "axes", "dtype": "int64", "shape": [1], "values": [1]}]
    write("outputs", "reduce_f64.json",
          model(inits=axes, inputs=[{"name": "x", "dtype": "float64", "shape": [2, 3]}],
                nodes=[{"name": "mx", "op": "ReduceMax", "inputs": ["x", "axes"], "outputs": ["mx"]},
                       {"name": "mn", "op": "ReduceMin", "inputs": ["x", "axes"], "outputs": ["mn"]}],
                outputs=[{"name": "mx"}, {"name": "mn"}]))
    # run time errors, after the inputs were read: an index only known then,
    # and an operator the CPU target does not lower
    write("outputs", "gather_runtime.json",
          model(inits=[], nodes=[{"name": "g", "op": "Gather", "inputs": ["x", "i"], "outputs": ["y"]}],
                inputs=[{"name": "x", "dtype": "float32", "shape": [3]}, {"name": "i", "dtype": "int64", "shape": [2]}]))
    write("outputs", "unlowered.json",
          model(inits=[{"name": "c", "dtype": "bool", "shape": [3], "values": [1, 0, 1]}],
                nodes=[{"name": "compress", "op": "Compress", "inputs": ["x", "c"], "outputs": ["y"],
                        "attrs": {"axis": 1}}],
                inputs=[{"name": "x", "dtype": "float32", "shape": [2, 3]}]))


def attr_models():
    """One operator with one bad attribute or shape operand each."""
    def one(name, op, attrs=None, inits=(), extra_inputs=(), shape=(2, 3), outs=("y",), graph_inputs=()):
        node = {"name": "n", "op": op, "inputs": ["x"] + list(extra_inputs), "outputs": list(outs)}
        if attrs:
            node["attrs"] = attrs
        write("attrs", name + ".json", model(inits=list(inits), nodes=[node],
                                             inputs=[{"name": "x", "dtype": "float32", "shape": list(shape)}]
                                             + list(graph_inputs),
                                             outputs=[{"name": o} for o in outs]))

    def ints(name, values):
        return {"name": name, "dtype": "int64", "shape": [len(values)], "values": values}

    one("transpose_perm_repeat", "Transpose", {"perm": [0, 0]})
    one("transpose_perm_range", "Transpose", {"perm": [0, 2]})
    one("concat_axis", "Concat", {"axis": 2})
    one("flatten_axis", "Flatten", {"axis": 3})
    one("softmax_axis", "Softmax", {"axis": -3})
    one("reduce_axes", "ReduceSum", inits=[ints("axes", [5])], extra_inputs=["axes"])
    one("split_negative", "Split", {"axis": 1}, inits=[ints("s", [4, -1])], extra_inputs=["s"], outs=("y", "z"))
    one("gather_negative_oob", "Gather", {"axis": 1}, inits=[ints("i", [-4])], extra_inputs=["i"])
    one("reshape_two_unknown", "Reshape", inits=[ints("s", [-1, -1])], extra_inputs=["s"])
    one("pad_wrong_length", "Pad", inits=[ints("p", [1, 1, 1])], extra_inputs=["p"])
    one("maxpool_pads_length", "MaxPool", {"kernel_shape": [2, 2], "pads": [1, 1]}, shape=(1, 1, 4, 4))
    one("maxpool_kernel_rank", "MaxPool", {"kernel_shape": [2]}, shape=(1, 1, 4, 4))
    one("conv_group_channels", "Conv", {"group": 2}, shape=(1, 3, 4, 4),
        inits=[{"name": "w", "dtype": "float32", "shape": [2, 1, 1, 1], "values": [1, 1]}], extra_inputs=["w"])
    one("expand_incompatible", "Expand", inits=[ints("s", [4, 3])], extra_inputs=["s"])
    one("slice_zero_step", "Slice", inits=[ints("b", [0]), ints("e", [2]), ints("a", [1]), ints("st", [0])],
        extra_inputs=["b", "e", "a", "st"])
    one("tile_repeats_rank", "Tile", inits=[ints("r", [2])], extra_inputs=["r"])
    # the limits of docs/limits.md: an integer attribute, a tensor's elements, a tensor's bytes
    one("attr_beyond_limit", "MaxPool", {"kernel_shape": [2, 2], "strides": [1, 2147483648]}, shape=(1, 1, 4, 4))
    one("tile_too_large", "Tile", inits=[ints("r", [1 << 20, 1 << 10])], extra_inputs=["r"])
    one("input_too_large", "Relu", shape=(1 << 28, 5))
    one("shape_operand_unknown", "Reshape", extra_inputs=["s"],
        graph_inputs=[{"name": "s", "dtype": "int64", "shape": [2]}])


def json_text_models():
    """JSON that is malformed, or well-formed JSON that is not a valid model."""
    base = model(inits=[], nodes=[{"name": "r", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}]).decode()
    write("json", "lone_surrogate.json", base.replace('"name": "m"', '"name": "\\ud800"').encode())
    write("json", "nul_in_name.json", base.replace('"name": "r"', '"name": "r\\u0000s"').encode())
    write("json", "huge_float.json", base.replace('"shape": [3]', '"shape": [1e999]').encode())
    write("json", "trailing_garbage.json", base.encode() + b" }")
    write("json", "top_array.json", b"[" + base.encode() + b"]")
    write("json", "control_char.json", base.replace('"name": "r"', '"name": "r\ts"').encode())
    write("json", "too_many_dims.json", base.replace('"shape": [3]', '"shape": [1, 1, 1, 1, 1, 1, 1, 1, 3]').encode())
    write("json", "too_many_elements.json", base.replace('"shape": [3]', '"shape": [1048576, 1048576, 2]').encode())
    write("json", "opset_zero.json", base.replace('"opset": 13', '"opset": 0').encode())
    g = lambda nodes, **kw: model(inits=[], nodes=nodes, **kw)
    write("graph", "two_producers.json", g([{"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["y"]},
                                            {"name": "b", "op": "Neg", "inputs": ["x"], "outputs": ["y"]}]))
    write("graph", "overwrite_input.json", g([{"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["x"]}],
                                             outputs=[{"name": "x"}]))
    write("graph", "self_loop.json", g([{"name": "a", "op": "Add", "inputs": ["x", "y"], "outputs": ["y"]}]))
    write("graph", "declared_output_shape.json", g([{"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}],
                                                   outputs=[{"name": "y", "dtype": "float32", "shape": [4]}]))
    write("graph", "no_outputs.json", g([{"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}])
          .replace(b'"outputs": [{"name": "y"}]', b'"outputs": []'))
    write("graph", "too_few_inputs.json", g([{"name": "a", "op": "Add", "inputs": ["x"], "outputs": ["y"]}]))


def main():
    st_cases()          # before json_models, which writes a model per safetensors file
    json_text_models()
    json_models()
    attr_models()
    onnx_cases()
    npy_cases()
    return 0


if __name__ == "__main__":
    sys.exit(main())
