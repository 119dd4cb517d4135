//! The messages of Chakra's et_def.proto (package ChakraProtoMsg), field for field, decoded
//! with prost. They are written by hand from the vendored schema, examples/chakra/et_def.proto
//! (mlcommons/chakra at 21585d8f, Apache-2.0), so no protoc is needed to build podsim. The
//! schema's `Tensor` message is not part of an ET file's stream and is left out.

/// A named attribute of a node or of the trace (`AttributeProto`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttributeProto {
    /// The attribute's name (`num_ops`, `comm_type`, ...).
    #[prost(string, tag = "1")]
    pub name: String,
    /// Its documentation.
    #[prost(string, tag = "2")]
    pub doc_string: String,
    /// Its value.
    #[prost(
        oneof = "Value",
        tags = "3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32"
    )]
    pub value: Option<Value>,
}

/// The `value` oneof of `AttributeProto`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Value {
    /// double_val = 3.
    #[prost(double, tag = "3")]
    DoubleVal(f64),
    /// double_list = 4.
    #[prost(message, tag = "4")]
    DoubleList(DoubleList),
    /// float_val = 5.
    #[prost(float, tag = "5")]
    FloatVal(f32),
    /// float_list = 6.
    #[prost(message, tag = "6")]
    FloatList(FloatList),
    /// int32_val = 7.
    #[prost(int32, tag = "7")]
    Int32Val(i32),
    /// int32_list = 8.
    #[prost(message, tag = "8")]
    Int32List(Int32List),
    /// int64_val = 9.
    #[prost(int64, tag = "9")]
    Int64Val(i64),
    /// int64_list = 10.
    #[prost(message, tag = "10")]
    Int64List(Int64List),
    /// uint32_val = 11.
    #[prost(uint32, tag = "11")]
    Uint32Val(u32),
    /// uint32_list = 12.
    #[prost(message, tag = "12")]
    Uint32List(Uint32List),
    /// uint64_val = 13.
    #[prost(uint64, tag = "13")]
    Uint64Val(u64),
    /// uint64_list = 14.
    #[prost(message, tag = "14")]
    Uint64List(Uint64List),
    /// sint32_val = 15.
    #[prost(sint32, tag = "15")]
    Sint32Val(i32),
    /// sint32_list = 16.
    #[prost(message, tag = "16")]
    Sint32List(Sint32List),
    /// sint64_val = 17.
    #[prost(sint64, tag = "17")]
    Sint64Val(i64),
    /// sint64_list = 18.
    #[prost(message, tag = "18")]
    Sint64List(Sint64List),
    /// fixed32_val = 19.
    #[prost(fixed32, tag = "19")]
    Fixed32Val(u32),
    /// fixed32_list = 20.
    #[prost(message, tag = "20")]
    Fixed32List(Fixed32List),
    /// fixed64_val = 21.
    #[prost(fixed64, tag = "21")]
    Fixed64Val(u64),
    /// fixed64_list = 22.
    #[prost(message, tag = "22")]
    Fixed64List(Fixed64List),
    /// sfixed32_val = 23.
    #[prost(sfixed32, tag = "23")]
    Sfixed32Val(i32),
    /// sfixed32_list = 24.
    #[prost(message, tag = "24")]
    Sfixed32List(Sfixed32List),
    /// sfixed64_val = 25.
    #[prost(sfixed64, tag = "25")]
    Sfixed64Val(i64),
    /// sfixed64_list = 26.
    #[prost(message, tag = "26")]
    Sfixed64List(Sfixed64List),
    /// bool_val = 27.
    #[prost(bool, tag = "27")]
    BoolVal(bool),
    /// bool_list = 28.
    #[prost(message, tag = "28")]
    BoolList(BoolList),
    /// string_val = 29.
    #[prost(string, tag = "29")]
    StringVal(String),
    /// string_list = 30.
    #[prost(message, tag = "30")]
    StringList(StringList),
    /// bytes_val = 31.
    #[prost(bytes = "vec", tag = "31")]
    BytesVal(Vec<u8>),
    /// bytes_list = 32.
    #[prost(message, tag = "32")]
    BytesList(BytesList),
}

macro_rules! list {
    ($(#[$doc:meta] $name:ident, $kind:ident, $ty:ty;)*) => {$(
        #[$doc]
        #[derive(Clone, PartialEq, prost::Message)]
        pub struct $name {
            /// The values.
            #[prost($kind, repeated, tag = "1")]
            pub values: Vec<$ty>,
        }
    )*};
}
list! {
    /// `repeated double values = 1`.
    DoubleList, double, f64;
    /// `repeated float values = 1`.
    FloatList, float, f32;
    /// `repeated int32 values = 1`.
    Int32List, int32, i32;
    /// `repeated int64 values = 1`.
    Int64List, int64, i64;
    /// `repeated uint32 values = 1`.
    Uint32List, uint32, u32;
    /// `repeated uint64 values = 1`.
    Uint64List, uint64, u64;
    /// `repeated sint32 values = 1`.
    Sint32List, sint32, i32;
    /// `repeated sint64 values = 1`.
    Sint64List, sint64, i64;
    /// `repeated fixed32 values = 1`.
    Fixed32List, fixed32, u32;
    /// `repeated fixed64 values = 1`.
    Fixed64List, fixed64, u64;
    /// `repeated sfixed32 values = 1`.
    Sfixed32List, sfixed32, i32;
    /// `repeated sfixed64 values = 1`.
    Sfixed64List, sfixed64, i64;
    /// `repeated bool values = 1`.
    BoolList, bool, bool;
    /// `repeated string values = 1`.
    StringList, string, String;
}

/// `repeated bytes values = 1`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BytesList {
    /// The values.
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub values: Vec<Vec<u8>>,
}

/// The first message of an ET file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GlobalMetadata {
    /// The schema version.
    #[prost(string, tag = "1")]
    pub version: String,
    /// Attributes of the trace.
    #[prost(message, repeated, tag = "2")]
    pub attr: Vec<AttributeProto>,
}

/// What a node does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[allow(clippy::enum_variant_names)]
pub enum NodeType {
    /// INVALID_NODE = 0.
    InvalidNode = 0,
    /// METADATA_NODE = 1.
    MetadataNode = 1,
    /// MEM_LOAD_NODE = 2.
    MemLoadNode = 2,
    /// MEM_STORE_NODE = 3.
    MemStoreNode = 3,
    /// COMP_NODE = 4.
    CompNode = 4,
    /// COMM_SEND_NODE = 5.
    CommSendNode = 5,
    /// COMM_RECV_NODE = 6.
    CommRecvNode = 6,
    /// COMM_COLL_NODE = 7.
    CommCollNode = 7,
}

/// A collective's kind (the `comm_type` attribute).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
pub enum CollectiveCommType {
    /// ALL_REDUCE = 0.
    AllReduce = 0,
    /// REDUCE = 1.
    Reduce = 1,
    /// ALL_GATHER = 2.
    AllGather = 2,
    /// GATHER = 3.
    Gather = 3,
    /// SCATTER = 4.
    Scatter = 4,
    /// BROADCAST = 5.
    Broadcast = 5,
    /// ALL_TO_ALL = 6.
    AllToAll = 6,
    /// REDUCE_SCATTER = 7.
    ReduceScatter = 7,
    /// REDUCE_SCATTER_BLOCK = 8.
    ReduceScatterBlock = 8,
    /// BARRIER = 9.
    Barrier = 9,
}

/// One operation of the trace.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Node {
    /// Its id, unique in its file.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Its name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Its type.
    #[prost(enumeration = "NodeType", tag = "3")]
    pub r#type: i32,
    /// Nodes that must finish first (control).
    #[prost(uint64, repeated, tag = "4")]
    pub ctrl_deps: Vec<u64>,
    /// Nodes whose data it reads.
    #[prost(uint64, repeated, tag = "5")]
    pub data_deps: Vec<u64>,
    /// When it started in the traced run.
    #[prost(uint64, tag = "6")]
    pub start_time_micros: u64,
    /// How long it took in the traced run.
    #[prost(uint64, tag = "7")]
    pub duration_micros: u64,
    /// Its inputs.
    #[prost(message, optional, tag = "8")]
    pub inputs: Option<IoInfo>,
    /// Its outputs.
    #[prost(message, optional, tag = "9")]
    pub outputs: Option<IoInfo>,
    /// Its attributes.
    #[prost(message, repeated, tag = "10")]
    pub attr: Vec<AttributeProto>,
}

/// A node's inputs or outputs (`IOInfo`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct IoInfo {
    /// Values.
    #[prost(string, tag = "1")]
    pub values: String,
    /// Shapes.
    #[prost(string, tag = "2")]
    pub shapes: String,
    /// Types.
    #[prost(string, tag = "3")]
    pub types: String,
}

impl NodeType {
    /// The schema's name (`COMP_NODE`).
    pub fn proto_name(self) -> &'static str {
        match self {
            NodeType::InvalidNode => "INVALID_NODE",
            NodeType::MetadataNode => "METADATA_NODE",
            NodeType::MemLoadNode => "MEM_LOAD_NODE",
            NodeType::MemStoreNode => "MEM_STORE_NODE",
            NodeType::CompNode => "COMP_NODE",
            NodeType::CommSendNode => "COMM_SEND_NODE",
            NodeType::CommRecvNode => "COMM_RECV_NODE",
            NodeType::CommCollNode => "COMM_COLL_NODE",
        }
    }
}
