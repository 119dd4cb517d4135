//! Link heatmaps of whole-machine runs (`collective --heatmap`, `workload --heatmap`, the HTML
//! report): [`podsim_report::link_heatmap`].

pub(crate) use podsim_report::link_heatmap::{Layout, draw};
