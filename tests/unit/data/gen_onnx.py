#!/usr/bin/python3
"""Writes the small ONNX models tests/unit/test_onnx.c loads (tests/unit/data/onnx/).

Run with Debian's python3-onnx (1.12):  /usr/bin/python3 tests/unit/data/gen_onnx.py
The outputs are committed; rerun only when changing a model here.
"""
import os
import struct

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'onnx')
F = TensorProto.FLOAT


def save(name, nodes, inputs, outputs, inits=(), opset=13, ir=8, value_info=(), domains=()):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits), value_info=list(value_info))
    ops = [helper.make_opsetid('', opset)] + [helper.make_opsetid(d, 1) for d in domains]
    m = helper.make_model(g, opset_imports=ops, producer_name='dlcc-tests')
    m.ir_version = ir
    with open(os.path.join(OUT, name + '.onnx'), 'wb') as f:
        f.write(m.SerializeToString())


def vi(name, dims, t=F):
    return helper.make_tensor_value_info(name, t, dims)


def raw_tensor(name, dt, dims, raw):
    t = TensorProto(name=name, data_type=dt, dims=dims)
    t.raw_data = raw
    return t


def main():
    os.makedirs(OUT, exist_ok=True)
    # basic: symbolic dim, raw and typed initializers, Constant node, value_info
    w = numpy_helper.from_array(np.array([1.0, 2.0, 3.0], np.float32), 'w')          # raw_data
    b = helper.make_tensor('b', TensorProto.INT64, [2], [5, -7])                     # int64_data
    c = helper.make_node('Constant', [], ['c'], name='cst',
                         value=helper.make_tensor('cv', F, [1], [0.5]))
    save('basic', [c, helper.make_node('Add', ['x', 'w'], ['s'], name='add'),
                   helper.make_node('Mul', ['s', 'c'], ['y'], name='mul')],
         [vi('x', ['N', 3])], [vi('y', ['N', 3])], [w, b], value_info=[vi('s', ['N', 3])])

    # every dtype through its typed field (and one through raw_data)
    inits = [
        helper.make_tensor('f32', F, [2], [1.5, -2.0]),
        helper.make_tensor('f64', TensorProto.DOUBLE, [2], [0.25, -8.0]),
        helper.make_tensor('f16', TensorProto.FLOAT16, [2], [1.0, -0.5]),
        helper.make_tensor('bf16', TensorProto.BFLOAT16, [2], [2.0, -3.0]),
        helper.make_tensor('i8', TensorProto.INT8, [2], [-128, 127]),
        helper.make_tensor('u8', TensorProto.UINT8, [2], [0, 255]),
        helper.make_tensor('i16', TensorProto.INT16, [2], [-300, 300]),
        helper.make_tensor('u16', TensorProto.UINT16, [2], [65535, 1]),
        helper.make_tensor('i32', TensorProto.INT32, [2], [-70000, 70000]),
        helper.make_tensor('u32', TensorProto.UINT32, [2], [4000000000, 7]),
        helper.make_tensor('u64', TensorProto.UINT64, [2], [2**63 + 5, 9]),
        helper.make_tensor('bool', TensorProto.BOOL, [3], [True, False, True]),
        raw_tensor('i16raw', TensorProto.INT16, [2], struct.pack('<hh', -2, 513)),
        helper.make_tensor('empty', F, [0, 4], []),
    ]
    save('typed', [helper.make_node('Relu', ['x'], ['y'])], [vi('x', [2])], [vi('y', [2])], inits)

    # legacy upgrades
    save('add6_axis', [helper.make_node('Add', ['a', 'b'], ['y'], broadcast=1, axis=1)],
         [vi('a', [2, 3, 4, 5]), vi('b', [3, 4])], [vi('y', [2, 3, 4, 5])], opset=6, ir=3)
    # MatMul of a 1-D and a 3-D input: rank 2, which the upgrade does not know before inference
    save('add6_dynamic', [helper.make_node('MatMul', ['v', 'm'], ['a']),
                          helper.make_node('Add', ['a', 'b'], ['y'], broadcast=1, axis=0)],
         [vi('v', [3]), vi('m', [2, 3, 4]), vi('b', [2])], [vi('y', [2, 4])], opset=6, ir=3)
    save('softmax11', [helper.make_node('Softmax', ['x'], ['y'], axis=1)],
         [vi('x', [2, 3, 4])], [vi('y', [2, 3, 4])], opset=11, ir=6)
    save('reduce11', [helper.make_node('ReduceSum', ['x'], ['s'], axes=[1], keepdims=0),
                      helper.make_node('ReduceMean', ['x'], ['m'], axes=[0, 1])],
         [vi('x', [2, 3])], [vi('s', [2]), vi('m', [1, 1])], opset=11, ir=6)
    save('legacy6', [helper.make_node('Clip', ['x'], ['c'], min=-1.0, max=2.0),
                     helper.make_node('Pad', ['c'], ['p'], pads=[0, 1, 0, 1], value=3.0),
                     helper.make_node('Slice', ['p'], ['sl'], starts=[0], ends=[1], axes=[0]),
                     helper.make_node('Unsqueeze', ['sl'], ['u'], axes=[0]),
                     helper.make_node('Split', ['u'], ['s1', 's2'], axis=2),
                     helper.make_node('Dropout', ['s1'], ['y'], ratio=0.3, is_test=1)],
         [vi('x', [2, 4])], [vi('y', [1, 1, 3])], opset=6, ir=3)
    bn_in = [numpy_helper.from_array(np.ones((3, 2), np.float32) * k, n)
             for k, n in [(2, 'scale'), (1, 'bias'), (0.5, 'mean'), (4, 'var')]]
    save('bn_spatial0', [helper.make_node('BatchNormalization', ['x', 'scale', 'bias', 'mean', 'var'], ['y'],
                                          spatial=0, epsilon=0.0, is_test=1)],
         [vi('x', [1, 3, 2])], [vi('y', [1, 3, 2])], bn_in, opset=6, ir=3)
    save('upsample7', [helper.make_node('Upsample', ['x'], ['y'], scales=[1.0, 1.0, 2.0, 3.0], mode='nearest')],
         [vi('x', [1, 1, 2, 2])], [vi('y', [1, 1, 4, 6])], opset=7, ir=3)

    slope = numpy_helper.from_array(np.array([0.1, 0.2, 0.3], np.float32), 'slope')
    save('prelu6', [helper.make_node('PRelu', ['x', 'slope'], ['y'])], [vi('x', [2, 3, 4])], [vi('y', [2, 3, 4])],
         [slope], opset=6, ir=3)
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), 'scales')
    save('resize10', [helper.make_node('Resize', ['x', 'scales'], ['y'], mode='linear')],
         [vi('x', [1, 1, 2, 2])], [vi('y', [1, 1, 4, 4])], [scales], opset=10, ir=5)
    tiles = numpy_helper.from_array(np.array(2, np.int64), 'tiles')
    axis = numpy_helper.from_array(np.array(1, np.int64), 'axis')
    save('topk1', [helper.make_node('TopK', ['x'], ['v', 'i'], k=2, axis=1)], [vi('x', [2, 4])],
         [vi('v', [2, 2]), vi('i', [2, 2], TensorProto.INT64)], opset=1, ir=3)
    save('tile1', [helper.make_node('Tile', ['x', 'tiles', 'axis'], ['y'])], [vi('x', [2, 3])], [vi('y', [2, 6])],
         [tiles, axis], opset=1, ir=3)
    save('cast1', [helper.make_node('Cast', ['x'], ['y'], to='INT64')], [vi('x', [2])],
         [vi('y', [2], TensorProto.INT64)], opset=1, ir=3)

    # malformed models, each refused with a specific message
    bad = TensorProto(name='bad', data_type=99, dims=[1])
    bad.raw_data = b'\0\0\0\0'
    save('bad_dtype', [helper.make_node('Relu', ['bad'], ['y'])], [], [vi('y', [1])], [bad])
    neg = TensorProto(name='neg', data_type=F, dims=[2, -2])
    save('bad_negdim', [helper.make_node('Relu', ['neg'], ['y'])], [], [vi('y', [1])], [neg])
    big = TensorProto(name='big', data_type=F, dims=[2**40, 2**40])
    save('bad_overflow', [helper.make_node('Relu', ['big'], ['y'])], [], [vi('y', [1])], [big])
    nodata = TensorProto(name='nodata', data_type=F, dims=[1000000])
    save('bad_nodata', [helper.make_node('Relu', ['nodata'], ['y'])], [], [vi('y', [1])], [nodata])
    short = raw_tensor('short', F, [4], b'\0' * 8)
    save('bad_shortraw', [helper.make_node('Relu', ['short'], ['y'])], [], [vi('y', [4])], [short])
    save('bad_undefined', [helper.make_node('Relu', ['nope'], ['y'], name='r')], [vi('x', [1])], [vi('y', [1])])
    save('bad_op', [helper.make_node('FooBar', ['x'], ['y'], name='f')], [vi('x', [1])], [vi('y', [1])])
    save('bad_domain', [helper.make_node('Gelu', ['x'], ['y'], name='g', domain='com.example')],
         [vi('x', [1])], [vi('y', [1])], domains=['com.example'])
    save('bad_attr', [helper.make_node('Relu', ['x'], ['y'], name='r', alpha=0.5)], [vi('x', [1])], [vi('y', [1])])
    save('bad_attrtype', [helper.make_node('LeakyRelu', ['x'], ['y'], name='l', alpha='big')],
         [vi('x', [1])], [vi('y', [1])])
    save('int_for_float', [helper.make_node('LeakyRelu', ['x'], ['y'], name='l', alpha=2)],
         [vi('x', [1])], [vi('y', [1])])
    body = helper.make_graph([helper.make_node('Identity', ['x'], ['z'])], 'body', [], [vi('z', [1])])
    save('bad_if', [helper.make_node('If', ['c'], ['y'], name='if', then_branch=body, else_branch=body)],
         [vi('c', [], TensorProto.BOOL), vi('x', [1])], [vi('y', [1])])
    save('bad_opset', [helper.make_node('Relu', ['x'], ['y'])], [vi('x', [1])], [vi('y', [1])], opset=30)
    save('bad_inputtype', [helper.make_node('Relu', ['x'], ['y'])], [vi('x', [1], TensorProto.STRING)],
         [vi('y', [1])])
    save('bad_neginput', [helper.make_node('Relu', ['x'], ['y'])], [vi('x', [2, -3])], [vi('y', [1])])

    # external data
    def ext(name, location, offset=None, length=None):
        t = TensorProto(name='e', data_type=F, dims=[3])
        t.data_location = TensorProto.EXTERNAL
        for k, v in [('location', location), ('offset', offset), ('length', length)]:
            if v is not None:
                e = t.external_data.add()
                e.key, e.value = k, str(v)
        save(name, [helper.make_node('Relu', ['e'], ['y'])], [], [vi('y', [3])], [t])
    with open(os.path.join(OUT, 'ext_ok.bin'), 'wb') as f:
        f.write(struct.pack('<4f', 9.0, 1.0, -2.0, 0.5))
    ext('ext_ok', 'ext_ok.bin', 4, 12)
    ext('ext_range', 'ext_ok.bin', 8, 12)
    ext('ext_abs', '/etc/hostname')
    ext('ext_dotdot', '../data/ext_ok.bin')
    ext('ext_link', 'link.bin')            # the test makes link.bin a symlink out of a temp folder

    # a serialized TensorProto as in ONNX test data
    with open(os.path.join(OUT, 'tensor_i64.pb'), 'wb') as f:
        f.write(numpy_helper.from_array(np.array([[1, -2, 3]], np.int64), 'out').SerializeToString())


main()
