#!/usr/bin/env python3
"""Write the example Chakra execution traces for `podsim import chakra`.

Each trace is one file per rank, `NAME.RANK.et`, written exactly as Chakra writes them
(chakra/src/third_party/utils/protolib.py, encodeMessage): a GlobalMetadata message and then
Node messages, each preceded by its length as a varint. Nodes and attributes are set the way
Chakra's own generator (chakra/src/generator/generator.py) and PyTorch converter set them:
`is_cpu_op` as bool_val, `num_ops`, `comm_type` and `comm_size` as int64_val, `tensor_size`
as uint64_val, `comm_src`, `comm_dst` and `comm_tag` as int32_val.

    pip install protobuf grpcio-tools      # grpcio-tools ships protoc
    python3 examples/chakra/make_traces.py  # from the repository's root

The messages come from the vendored schema beside this script (et_def.proto), compiled at
run time, so nothing generated is committed.
"""

import os
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def load_schema():
    """Compile et_def.proto with grpcio-tools' protoc and import it."""
    from grpc_tools import protoc

    out = tempfile.mkdtemp(prefix="chakra-schema-")
    rc = protoc.main(["protoc", f"-I{HERE}", f"--python_out={out}", os.path.join(HERE, "et_def.proto")])
    if rc != 0:
        sys.exit(f"protoc failed on et_def.proto ({rc})")
    sys.path.insert(0, out)
    import et_def_pb2  # noqa: E402

    return et_def_pb2


pb = load_schema()


def encode_message(out_file, message):
    """Chakra's protolib.encodeMessage: the length as a varint, then the message."""
    data = message.SerializeToString()
    value = len(data)
    bits = value & 0x7F
    value >>= 7
    while value:
        out_file.write(struct.pack("<B", 0x80 | bits))
        bits = value & 0x7F
        value >>= 7
    out_file.write(struct.pack("<B", bits))
    out_file.write(data)


def node(node_id, name, node_type, deps=(), duration_micros=0, attrs=()):
    n = pb.Node()
    n.id = node_id
    n.name = name
    n.type = node_type
    n.data_deps.extend(deps)
    n.duration_micros = duration_micros
    n.attr.append(pb.AttributeProto(name="is_cpu_op", bool_val=False))
    n.attr.extend(attrs)
    return n


def write(path, nodes):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as et:
        encode_message(et, pb.GlobalMetadata(version="0.0.4"))
        for n in nodes:
            encode_message(et, n)


MiB = 1 << 20


def data_parallel():
    """A data-parallel step on 4 ranks: load, forward (2.75 GFLOP), backward (20 us
    measured), all-reduce of 4 MiB of gradients, store."""
    for rank in range(4):
        write(
            os.path.join(HERE, "data-parallel", f"step.{rank}.et"),
            [
                node(0, "load weights", pb.MEM_LOAD_NODE,
                     attrs=[pb.AttributeProto(name="tensor_size", uint64_val=MiB)]),
                node(1, "aten::mm forward", pb.COMP_NODE, deps=[0],
                     attrs=[pb.AttributeProto(name="num_ops", int64_val=2_750_000_000),
                            pb.AttributeProto(name="op_schema", string_val="aten::mm(Tensor self, Tensor mat2) -> Tensor")]),
                node(2, "aten::mm backward", pb.COMP_NODE, deps=[1], duration_micros=20),
                node(3, "all_reduce grads", pb.COMM_COLL_NODE, deps=[2],
                     attrs=[pb.AttributeProto(name="comm_type", int64_val=pb.ALL_REDUCE),
                            pb.AttributeProto(name="comm_size", int64_val=4 * MiB)]),
                node(4, "store weights", pb.MEM_STORE_NODE, deps=[3],
                     attrs=[pb.AttributeProto(name="tensor_size", uint64_val=MiB)]),
            ],
        )


def pipeline():
    """Two pipeline stages: rank 0 computes 10 us and sends 8 MiB of activations to rank 1,
    which receives them and computes 10 us."""
    write(
        os.path.join(HERE, "pipeline", "pp.0.et"),
        [
            node(0, "stage 0", pb.COMP_NODE, duration_micros=10),
            node(1, "send activations", pb.COMM_SEND_NODE, deps=[0],
                 attrs=[pb.AttributeProto(name="comm_dst", int32_val=1),
                        pb.AttributeProto(name="comm_tag", int32_val=7),
                        pb.AttributeProto(name="comm_size", int64_val=8 * MiB)]),
        ],
    )
    write(
        os.path.join(HERE, "pipeline", "pp.1.et"),
        [
            node(0, "recv activations", pb.COMM_RECV_NODE,
                 attrs=[pb.AttributeProto(name="comm_src", int32_val=0),
                        pb.AttributeProto(name="comm_tag", int32_val=7),
                        pb.AttributeProto(name="comm_size", int64_val=8 * MiB)]),
            node(1, "stage 1", pb.COMP_NODE, deps=[0], duration_micros=10),
        ],
    )


def mixed():
    """One rank with what carries no work or runs beside the matrix unit: a METADATA_NODE,
    a host op (is_cpu_op), a compute node depending on the metadata by a control dependency,
    a COMP_NODE with neither duration nor num_ops joining both, then a store of 1.2 MB."""
    meta = pb.Node(id=0, name="process group", type=pb.METADATA_NODE)
    meta.attr.append(pb.AttributeProto(name="pg_name", string_val="0"))
    host = node(1, "host op", pb.COMP_NODE, deps=[0], duration_micros=4)
    host.attr[0].bool_val = True  # is_cpu_op
    gpu = node(2, "kernel", pb.COMP_NODE, duration_micros=6)
    gpu.ctrl_deps.append(0)
    join = node(3, "join", pb.COMP_NODE, deps=[1, 2])
    store = node(4, "store", pb.MEM_STORE_NODE, deps=[3],
                 attrs=[pb.AttributeProto(name="tensor_size", uint64_val=1_200_000)])
    write(os.path.join(HERE, "mixed", "mixed.0.et"), [meta, host, gpu, join, store])


def refused():
    """A gather, which podsim has no collective for, on 2 ranks."""
    for rank in range(2):
        write(
            os.path.join(HERE, "refused", f"gather.{rank}.et"),
            [
                node(0, "compute", pb.COMP_NODE, duration_micros=5),
                node(1, "gather", pb.COMM_COLL_NODE, deps=[0],
                     attrs=[pb.AttributeProto(name="comm_type", int64_val=pb.GATHER),
                            pb.AttributeProto(name="comm_size", int64_val=MiB)]),
            ],
        )


if __name__ == "__main__":
    data_parallel()
    pipeline()
    mixed()
    refused()
