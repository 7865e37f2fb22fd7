//! The `perftools.profiles` protocol buffer messages, written with `prost` derives from the
//! published specification: `proto/profile.proto` of github.com/google/pprof (commit
//! `963a80db3d677353229bc3e7655d11709e9bcaaf`, Apache-2.0). Field numbers and types are the
//! ones of that file; comments summarize it.
//!
//! String fields are indices into [`Profile::string_table`], whose entry 0 is always `""`.

/// A profile: sample types, samples, mappings, locations, functions and the string table.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Profile {
    /// What each entry of [`Sample::value`] measures (type and unit), e.g. `cpu`/`nanoseconds`.
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    /// The samples.
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    /// Address ranges of the binaries and libraries; `mapping[0]` is the main binary.
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    /// Program locations referenced by samples.
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    /// Functions referenced by locations.
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    /// The string table; entry 0 must be `""`.
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    /// Regexp (string index) of frames pprof drops.
    #[prost(int64, tag = "7")]
    pub drop_frames: i64,
    /// Regexp (string index) of frames pprof keeps.
    #[prost(int64, tag = "8")]
    pub keep_frames: i64,
    /// Collection time, nanoseconds since the Unix epoch.
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    /// Duration of the profile in nanoseconds.
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    /// Kind of events between sampled occurrences, e.g. `cpu`/`nanoseconds`.
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    /// Number of events between sampled occurrences.
    #[prost(int64, tag = "12")]
    pub period: i64,
    /// Free-form comments (string indices).
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    /// String index of the preferred sample type (default: the last one).
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
}

/// Type and unit of a value (both string indices).
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct ValueType {
    /// Type, e.g. `cpu`, `alloc_space` (string index).
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    /// Unit, e.g. `nanoseconds`, `bytes`, `count` (string index).
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

/// One sample: a stack (leaf first), one value per sample type, and labels.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Sample {
    /// Location ids; the leaf is at `location_id[0]`.
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    /// One value per [`Profile::sample_type`].
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    /// Labels (thread id, allocation size, ...).
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

/// A label: a key with a string or a numeric value.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Label {
    /// Key (string index).
    #[prost(int64, tag = "1")]
    pub key: i64,
    /// String value (string index), or 0.
    #[prost(int64, tag = "2")]
    pub str: i64,
    /// Numeric value.
    #[prost(int64, tag = "3")]
    pub num: i64,
    /// Unit of `num` (string index), or 0.
    #[prost(int64, tag = "4")]
    pub num_unit: i64,
}

/// A mapped binary or library.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Mapping {
    /// Unique nonzero id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Load address.
    #[prost(uint64, tag = "2")]
    pub memory_start: u64,
    /// End of the address range.
    #[prost(uint64, tag = "3")]
    pub memory_limit: u64,
    /// File offset of the first mapped address.
    #[prost(uint64, tag = "4")]
    pub file_offset: u64,
    /// File name (string index).
    #[prost(int64, tag = "5")]
    pub filename: i64,
    /// Build id (string index).
    #[prost(int64, tag = "6")]
    pub build_id: i64,
    /// Symbolic information present: function names.
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
    /// Symbolic information present: file names.
    #[prost(bool, tag = "8")]
    pub has_filenames: bool,
    /// Symbolic information present: line numbers.
    #[prost(bool, tag = "9")]
    pub has_line_numbers: bool,
    /// Symbolic information present: inline frames.
    #[prost(bool, tag = "10")]
    pub has_inline_frames: bool,
}

/// A program location: an address and its source lines (inlined frames first).
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Location {
    /// Unique nonzero id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Mapping id, or 0.
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    /// Instruction address, if known.
    #[prost(uint64, tag = "3")]
    pub address: u64,
    /// Source lines; with inlining, the last entry is the caller the others were inlined into.
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
    /// Several symbols map to this address (identical code folding).
    #[prost(bool, tag = "5")]
    pub is_folded: bool,
}

/// A source line of a location.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Line {
    /// Function id.
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    /// Line number.
    #[prost(int64, tag = "2")]
    pub line: i64,
    /// Column number.
    #[prost(int64, tag = "3")]
    pub column: i64,
}

/// A function.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Function {
    /// Unique nonzero id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Human-readable name (string index).
    #[prost(int64, tag = "2")]
    pub name: i64,
    /// System (e.g. mangled) name (string index).
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    /// Source file (string index).
    #[prost(int64, tag = "4")]
    pub filename: i64,
    /// First line of the function.
    #[prost(int64, tag = "5")]
    pub start_line: i64,
}
