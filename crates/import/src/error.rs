//! [`ImportError`]: what is wrong with another tool's file, and where.

use std::fmt;

/// Where in a file an error is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A line, counted from 1.
    Line(usize),
    /// A byte offset, counted from 0 (binary files: Chakra traces).
    Byte(usize),
    /// A node of a Chakra trace: its id, and its name where the message gives it.
    Node {
        /// The node's id.
        id: u64,
        /// The node's name.
        name: Option<String>,
    },
}

/// Whether the input is at fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file says something podsim cannot import: the user can fix the input.
    Input,
    /// podsim failed to write what it imported (a bug: please report it).
    Internal,
}

/// An error in another tool's file: the file, where in it (a line, byte or node), the keys
/// concerned, and what is wrong with what was expected. It displays on one line as
/// `FILE[, line N | : byte N | : node N (`NAME`)][: `KEY`[/`KEY`]]: WHAT`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ImportError {
    /// The file, as the user named it (several files joined by `, ` when the fault is between
    /// them).
    pub file: String,
    /// Where in the file, if one place is at fault.
    pub at: Option<Location>,
    /// The keys (attributes, fields) concerned, as the file spells them.
    pub keys: Vec<String>,
    /// What is wrong, and what was expected.
    pub what: String,
    /// Whether the input is at fault.
    pub kind: ErrorKind,
}

impl ImportError {
    /// An input error in `file`.
    pub fn new(file: impl Into<String>, what: impl Into<String>) -> Self {
        ImportError {
            file: file.into(),
            at: None,
            keys: Vec::new(),
            what: what.into(),
            kind: ErrorKind::Input,
        }
    }

    /// At line `line` (from 1).
    pub fn line(mut self, line: usize) -> Self {
        self.at = Some(Location::Line(line));
        self
    }

    /// At byte `byte` (from 0).
    pub fn byte(mut self, byte: usize) -> Self {
        self.at = Some(Location::Byte(byte));
        self
    }

    /// At a Chakra node, named.
    pub fn node(mut self, id: u64, name: &str) -> Self {
        self.at = Some(Location::Node {
            id,
            name: Some(name.to_string()),
        });
        self
    }

    /// At a Chakra node, by id alone.
    pub fn node_id(mut self, id: u64) -> Self {
        self.at = Some(Location::Node { id, name: None });
        self
    }

    /// About `key`.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.keys.push(key.into());
        self
    }

    /// podsim's own failure, not the input's.
    pub fn internal(mut self) -> Self {
        self.kind = ErrorKind::Internal;
        self
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        match &self.at {
            None => {}
            Some(Location::Line(n)) => write!(f, ", line {n}")?,
            Some(Location::Byte(n)) => write!(f, ": byte {n}")?,
            Some(Location::Node { id, name: None }) => write!(f, ": node {id}")?,
            Some(Location::Node {
                id,
                name: Some(name),
            }) => write!(f, ": node {id} (`{name}`)")?,
        }
        if !self.keys.is_empty() {
            let keys: Vec<String> = self.keys.iter().map(|k| format!("`{k}`")).collect();
            write!(f, ": {}", keys.join("/"))?;
        }
        write!(f, ": {}", self.what)
    }
}

/// The result of an import.
pub type Result<T, E = ImportError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_file_place_keys_and_what() {
        let e = ImportError::new("a.yml", "`x` is not a whole number")
            .line(2)
            .key("npus_count");
        assert_eq!(
            e.to_string(),
            "a.yml, line 2: `npus_count`: `x` is not a whole number"
        );
        let e = ImportError::new("n.json", "expected a number")
            .key("bandwidth")
            .key("latency");
        assert_eq!(
            e.to_string(),
            "n.json: `bandwidth`/`latency`: expected a number"
        );
        let e = ImportError::new("t.et", "no `comm_size`").node(3, "ar");
        assert_eq!(e.to_string(), "t.et: node 3 (`ar`): no `comm_size`");
        let e = ImportError::new("t.et", "bad").byte(7);
        assert_eq!(e.to_string(), "t.et: byte 7: bad");
        assert_eq!(e.kind, ErrorKind::Input);
        assert_eq!(e.internal().kind, ErrorKind::Internal);
    }
}
