#!/usr/bin/python3
"""Writes the compiler tests' models (tests/compiler/models/), deterministic (seeded NumPy):

- lenet.prototxt + lenet.caffemodel and lenet.onnx: one small LeNet (conv 8 5x5, max pool,
  conv 16 5x5, max pool, ip 64, ReLU, ip 10, softmax) with the same weights in Caffe and in
  ONNX, so the two importers can be compared;
- layers.prototxt + layers.caffemodel: the other Caffe layers the importer maps (BatchNorm,
  Scale, PReLU, Eltwise with coefficients, Concat, LRN, Sigmoid, TanH, Deconvolution, average
  pooling, Flatten) behind the legacy input/input_dim form.

The Caffe files are written with python3-protobuf against umd/caffe/caffe.proto (compiled
here with protoc), the ONNX file with python3-onnx. Run: python3 tests/compiler/make_models.py
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "compiler", "models")


def caffe_module():
    work = tempfile.mkdtemp(prefix="caffe-proto-")
    proto_dir = os.path.join(ROOT, "umd", "caffe")
    subprocess.run(["protoc", "-I", proto_dir, "--python_out", work,
                    os.path.join(proto_dir, "caffe.proto")], check=True)
    sys.path.insert(0, work)
    import caffe_pb2  # noqa: E402
    return caffe_pb2


def add_layer(net, kind, name, bottoms, tops):
    layer = net.layer.add()
    layer.name, layer.type = name, kind
    layer.bottom.extend(bottoms)
    layer.top.extend(tops)
    return layer


def add_blob(layer, values):
    blob = layer.blobs.add()
    blob.shape.dim.extend(values.shape)
    blob.data.extend(values.astype(np.float32).reshape(-1).tolist())


def split(net):
    """The prototxt (no blobs) and the caffemodel (everything)."""
    text = type(net)()
    text.CopyFrom(net)
    for layer in text.layer:
        del layer.blobs[:]
    return str(text), net.SerializeToString()


def lenet(pb, rng):
    w = {
        "conv1": rng.normal(0, 0.3, (8, 1, 5, 5)), "conv1_b": rng.uniform(-0.1, 0.1, 8),
        "conv2": rng.normal(0, 0.1, (16, 8, 5, 5)), "conv2_b": rng.uniform(-0.1, 0.1, 16),
        "ip1": rng.normal(0, 0.08, (64, 256)), "ip1_b": rng.uniform(-0.1, 0.1, 64),
        "ip2": rng.normal(0, 0.15, (10, 64)), "ip2_b": rng.uniform(-0.1, 0.1, 10),
    }
    w = {k: v.astype(np.float32) for k, v in w.items()}

    net = pb.NetParameter()
    net.name = "lenet"
    data = add_layer(net, "Input", "data", [], ["data"])
    data.input_param.shape.add().dim.extend([1, 1, 28, 28])
    for name, bottom, out in (("conv1", "data", 8), ("conv2", "pool1", 16)):
        conv = add_layer(net, "Convolution", name, [bottom], [name])
        conv.convolution_param.num_output = out
        conv.convolution_param.kernel_size.append(5)
        add_blob(conv, w[name])
        add_blob(conv, w[name + "_b"])
        pool = add_layer(net, "Pooling", "pool" + name[-1], [name], ["pool" + name[-1]])
        pool.pooling_param.pool = pb.PoolingParameter.MAX
        pool.pooling_param.kernel_size = 2
        pool.pooling_param.stride = 2
    ip1 = add_layer(net, "InnerProduct", "ip1", ["pool2"], ["ip1"])
    ip1.inner_product_param.num_output = 64
    add_blob(ip1, w["ip1"])
    add_blob(ip1, w["ip1_b"])
    add_layer(net, "ReLU", "relu1", ["ip1"], ["ip1"])
    ip2 = add_layer(net, "InnerProduct", "ip2", ["ip1"], ["ip2"])
    ip2.inner_product_param.num_output = 10
    add_blob(ip2, w["ip2"])
    add_blob(ip2, w["ip2_b"])
    add_layer(net, "Softmax", "prob", ["ip2"], ["prob"])

    # The same network in ONNX.
    inits = [numpy_helper.from_array(v, k) for k, v in w.items()]
    inits.append(numpy_helper.from_array(np.array([1, 256], np.int64), "flat_shape"))
    nodes = [
        helper.make_node("Conv", ["data", "conv1", "conv1_b"], ["conv1_out"], "conv1",
                         kernel_shape=[5, 5]),
        helper.make_node("MaxPool", ["conv1_out"], ["pool1"], "pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["pool1", "conv2", "conv2_b"], ["conv2_out"], "conv2",
                         kernel_shape=[5, 5]),
        helper.make_node("MaxPool", ["conv2_out"], ["pool2"], "pool2", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["pool2"], ["flat"], "flatten"),
        helper.make_node("Gemm", ["flat", "ip1", "ip1_b"], ["ip1_out"], "ip1", transB=1),
        helper.make_node("Relu", ["ip1_out"], ["relu1"], "relu1"),
        helper.make_node("Gemm", ["relu1", "ip2", "ip2_b"], ["ip2_out"], "ip2", transB=1),
        helper.make_node("Softmax", ["ip2_out"], ["prob"], "prob", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "lenet", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 1, 28, 28])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 10])], inits[:-1])
    model = helper.make_model(graph, producer_name="make_models.py",
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    return net, model


def layers(pb, rng):
    net = pb.NetParameter()
    net.name = "layers"
    net.input.append("data")
    net.input_dim.extend([1, 3, 16, 16])

    def conv(name, bottom, out, k, cin, pad=0, stride=1, group=1, kind="Convolution"):
        c = add_layer(net, kind, name, [bottom], [name])
        p = c.convolution_param
        p.num_output, p.group = out, group
        p.kernel_size.append(k)
        if pad:
            p.pad.append(pad)
        if stride != 1:
            p.stride.append(stride)
        shape = (cin, out // group, k, k) if kind == "Deconvolution" else (out, cin // group, k, k)
        add_blob(c, rng.normal(0, 0.3, shape).astype(np.float32))
        add_blob(c, rng.uniform(-0.1, 0.1, out).astype(np.float32))

    conv("conv1", "data", 16, 3, 3, pad=1)
    bn = add_layer(net, "BatchNorm", "bn1", ["conv1"], ["conv1"])
    bn.batch_norm_param.eps = 1e-5
    factor = 999.982
    add_blob(bn, (rng.normal(0, 0.2, 16) * factor).astype(np.float32))
    add_blob(bn, (rng.uniform(0.75, 1.25, 16) * factor).astype(np.float32))
    add_blob(bn, np.array([factor], np.float32))
    sc = add_layer(net, "Scale", "scale1", ["conv1"], ["conv1"])
    sc.scale_param.bias_term = True
    add_blob(sc, rng.uniform(0.8, 1.2, 16).astype(np.float32))
    add_blob(sc, rng.uniform(-0.1, 0.1, 16).astype(np.float32))
    pr = add_layer(net, "PReLU", "prelu1", ["conv1"], ["conv1"])
    add_blob(pr, rng.uniform(0.05, 0.3, 16).astype(np.float32))
    conv("branch_a", "conv1", 16, 3, 16, pad=1)
    conv("branch_b", "conv1", 16, 1, 16)
    el = add_layer(net, "Eltwise", "sum", ["branch_a", "branch_b"], ["sum"])
    el.eltwise_param.operation = pb.EltwiseParameter.SUM
    el.eltwise_param.coeff.extend([1.0, 0.5])
    mx = add_layer(net, "Eltwise", "max", ["sum", "conv1"], ["max"])
    mx.eltwise_param.operation = pb.EltwiseParameter.MAX
    add_layer(net, "Sigmoid", "sig", ["branch_a"], ["sig"])
    add_layer(net, "TanH", "tanh", ["branch_b"], ["tanh"])
    cat = add_layer(net, "Concat", "cat", ["max", "sig", "tanh"], ["cat"])
    cat.concat_param.axis = 1
    lrn = add_layer(net, "LRN", "norm", ["cat"], ["norm"])
    lrn.lrn_param.local_size = 5
    lrn.lrn_param.alpha = 1e-4
    lrn.lrn_param.beta = 0.75
    pool = add_layer(net, "Pooling", "pool", ["norm"], ["pool"])
    pool.pooling_param.pool = pb.PoolingParameter.AVE
    pool.pooling_param.kernel_size = 2
    pool.pooling_param.stride = 2
    conv("up", "pool", 8, 2, 48, stride=2, kind="Deconvolution")
    add_layer(net, "ReLU", "relu_up", ["up"], ["up"])
    gp = add_layer(net, "Pooling", "gpool", ["up"], ["gpool"])
    gp.pooling_param.pool = pb.PoolingParameter.AVE
    gp.pooling_param.global_pooling = True
    add_layer(net, "Flatten", "flat", ["gpool"], ["flat"])
    ip = add_layer(net, "InnerProduct", "fc", ["flat"], ["fc"])
    ip.inner_product_param.num_output = 4
    add_blob(ip, rng.normal(0, 0.3, (4, 8)).astype(np.float32))
    add_blob(ip, rng.uniform(-0.1, 0.1, 4).astype(np.float32))
    return net


def main():
    pb = caffe_module()
    rng = np.random.default_rng(20240611)
    os.makedirs(OUT, exist_ok=True)
    net, model = lenet(pb, rng)
    text, binary = split(net)
    open(os.path.join(OUT, "lenet.prototxt"), "w").write(text)
    open(os.path.join(OUT, "lenet.caffemodel"), "wb").write(binary)
    onnx.save(model, os.path.join(OUT, "lenet.onnx"))
    text, binary = split(layers(pb, rng))
    open(os.path.join(OUT, "layers.prototxt"), "w").write(text)
    open(os.path.join(OUT, "layers.caffemodel"), "wb").write(binary)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
