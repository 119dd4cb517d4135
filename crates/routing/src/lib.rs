//! placeholder-free stub
