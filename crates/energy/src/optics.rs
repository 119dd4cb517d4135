//! The optical fabric's power: TPU v4's OCSes and the optics modules at the blocks' faces
//! (tpu-v4-isca2023.txt section 2.10: "OCSes and underlying optical components are ... <3% of
//! system power"; "the power and cost accounting includes the entire optical fabric, including
//! the optics modules, fiber, and OCS infrastructure").

/// One Palomar OCS (136 x 136 ports), watts: the Mission Apollo paper's figure (Urata, Liu et
/// al., arXiv 2208.10041: about 108 W against about 3 kW for an electrical packet switch of the
/// same radix), as SemiAnalysis's "Google Apollo" article quotes it; not checked against the
/// paper here.
pub const PALOMAR_OCS_W: f64 = 108.0;

/// One optics module of a 400 Gb/s link (TPU v4's ICI link moves 50 GB/s each way, Table 4),
/// watts: NVIDIA's twin-port OSFP (MMS4X00-NS: two 400 Gb/s single-mode engines at 17 W,
/// docs.nvidia.com/networking), per engine. An assumption for Google's own modules, which the
/// seed does not describe beyond their circulators (section 2.1: one fiber carries both
/// directions, so one module serves each block-side end of a link).
pub const OPTICS_400G_W: f64 = 17.0 / 2.0;
