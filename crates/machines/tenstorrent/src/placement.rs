//! Where DRAM reader kernels sit on a Tenstorrent grid, and which of their routes overlap
//! (tenstorrent-dram-bandwidth.txt): one reader per bank on the top worker rows, on the
//! left and right worker columns, or next to its bank, with the document's relocation when a
//! harvested row takes a reader's place ("we first shift them to the right and move upwards,
//! till we find a row that has not been allocated with any readers so far").
//!
//! # The relocation, as podsim implements it
//! Readers are placed bank by bank. A bank whose neighbour to the right is not a working core
//! (its row is harvested) tries, in order: shifts of 2, 3, ... columns to the right of the bank
//! (staying in the bank's half of the grid), and for each shift the rows above, nearest first
//! and wrapping round the top; a candidate is taken when it is a free working core in a row
//! with no reader of that half yet and its data route (bank to reader, on the NoC in use)
//! shares no link with a route placed before. When no such row is left, the row rule is
//! dropped; when still nothing fits, any free working core whose route overlaps nothing,
//! nearest first. The document's wording leaves the order open; this one follows it and keeps
//! every route apart for every one- and two-row harvest of a Wormhole (tested over all of
//! them).

use crate::TtError;
use std::collections::HashSet;

use podsim_topology::{Noc, TileKind, TtGrid};

/// A directed NoC link between neighbouring tiles.
pub type Link = ((u32, u32), (u32, u32));

/// Where readers go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// The top worker rows, left to right, top to bottom.
    TopRows,
    /// The leftmost and rightmost worker columns, top to bottom, alternating.
    Columns,
    /// The working core to the right of each bank's tile, relocated around harvested rows.
    NextToBank,
    /// Chosen by running the study with each of the others and keeping the one that reads
    /// fastest ([`crate::study::run`]); on its own, [`place`] takes it as next-to-bank.
    Auto,
}

impl Placement {
    /// Every placement, by name.
    pub const ALL: [(&'static str, Placement); 4] = [
        ("top-rows", Placement::TopRows),
        ("columns", Placement::Columns),
        ("next-to-bank", Placement::NextToBank),
        ("auto", Placement::Auto),
    ];
    /// Its name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, p)| *p == self)
            .map_or("auto", |(n, _)| n)
    }
    /// From its name.
    pub fn parse(s: &str) -> Option<Placement> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, p)| *p)
    }
}

/// The directed links of the data route from `bank` to `reader` on `noc`.
pub fn data_links(g: &TtGrid, noc: Noc, bank: (u32, u32), reader: (u32, u32)) -> Vec<Link> {
    let mut at = bank;
    g.noc_path(noc, bank, reader)
        .into_iter()
        .map(|t| {
            let l = (at, t);
            at = t;
            l
        })
        .collect()
}

/// Pairs of banks whose data routes to their readers share a link, with the first link they
/// share: (bank a, bank b, link), a < b.
pub fn overlaps(g: &TtGrid, noc: Noc, readers: &[(u32, u32)]) -> Vec<(usize, usize, Link)> {
    let routes: Vec<Vec<Link>> = readers
        .iter()
        .enumerate()
        .map(|(b, &r)| data_links(g, noc, g.bank_tile(b).unwrap_or(r), r))
        .collect();
    let mut out = Vec::new();
    for a in 0..routes.len() {
        let set: HashSet<&Link> = routes[a].iter().collect();
        for (b, rb) in routes.iter().enumerate().skip(a + 1) {
            if let Some(l) = rb.iter().find(|l| set.contains(l)) {
                out.push((a, b, *l));
            }
        }
    }
    out
}

fn worker(g: &TtGrid, t: (u32, u32)) -> bool {
    g.kind(t.0, t.1) == Some(TileKind::Worker)
}

/// One reader tile per bank, in bank order.
pub fn place(g: &TtGrid, p: Placement, noc: Noc) -> Result<Vec<(u32, u32)>, TtError> {
    let banks = g.dram_banks();
    let (w, h) = (g.width(), g.cube().dims()[1]);
    let workers: Vec<(u32, u32)> = (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .filter(|&t| worker(g, t))
        .collect();
    let out: Vec<(u32, u32)> = match p {
        Placement::TopRows => workers.iter().copied().take(banks).collect(),
        Placement::Columns => {
            let left = workers.iter().map(|t| t.0).min().unwrap_or(0);
            let right = workers.iter().map(|t| t.0).max().unwrap_or(0);
            let col = |x: u32| workers.iter().copied().filter(move |t| t.0 == x);
            let mut v: Vec<(u32, u32)> = col(left)
                .zip(col(right))
                .flat_map(|(a, b)| [a, b])
                .collect();
            v.truncate(banks);
            v
        }
        Placement::NextToBank | Placement::Auto => {
            return next_to_bank(g, noc, Relocation::Document);
        }
    };
    if out.len() < banks {
        return Err(TtError::NoRoom {
            grid: g.label().to_string(),
            room: out.len(),
            banks,
        });
    }
    Ok(out)
}

/// What happens to a reader whose place next to its bank is not a working core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relocation {
    /// The document's rule: shift away from the bank along the NoC's first direction, then
    /// against its second, to a row with no reader of that half yet and no overlapping route.
    Document,
    /// No relocation: the full grid's next-to-bank placement taken in logical worker rows, as
    /// software unaware of the harvest would place it; the harvested chip maps logical row i
    /// to its i-th working row, so readers below a harvested row land a row or two off their
    /// banks (a reader whose logical row no longer exists takes the nearest free core).
    Logical,
}

impl Relocation {
    /// Every rule, by name.
    pub const ALL: [(&'static str, Relocation); 2] = [
        ("document", Relocation::Document),
        ("logical", Relocation::Logical),
    ];
    /// From its name.
    pub fn parse(s: &str) -> Option<Relocation> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, r)| *r)
    }
}

/// One reader per bank next to its bank on `noc`, moving readers displaced by harvested rows
/// by `rule`. "Next to" is one hop downstream of the bank on the NoC in use, so the data
/// route is a single link: on NoC 0 (east, then south) the core east of the bank, else the one
/// south of it (Grayskull's banks sit in rows without workers); on NoC 1 (north, then west)
/// west, else north. The relocation mirrors with the NoC: on NoC 0 it shifts east and moves up
/// (the document's "to the right and ... upwards"), on NoC 1 west and down.
pub fn next_to_bank(g: &TtGrid, noc: Noc, rule: Relocation) -> Result<Vec<(u32, u32)>, TtError> {
    let banks = g.dram_banks();
    let (w, h) = (g.width(), g.cube().dims()[1]);
    if rule == Relocation::Logical && !g.harvested_rows().is_empty() {
        return logical(g, noc);
    }
    let step = |v: u32, d: i64, n: u32| (i64::from(v) + d).rem_euclid(i64::from(n)) as u32;
    // +1 along x (and y) on NoC 0, -1 on NoC 1.
    let s: i64 = match noc {
        Noc::Noc0 => 1,
        Noc::Noc1 => -1,
    };
    let mut readers: Vec<Option<(u32, u32)>> = vec![None; banks];
    let mut used: HashSet<(u32, u32)> = HashSet::new();
    let mut links: HashSet<Link> = HashSet::new();
    // Banks with a working neighbour one hop downstream take it first.
    let mut relocate = Vec::new();
    for (b, r) in readers.iter_mut().enumerate() {
        let (x, y) = g.bank_tile(b).ok_or(TtError::PlacedBankTile)?;
        let t = [(step(x, s, w), y), (x, step(y, s, h))]
            .into_iter()
            .find(|&t| worker(g, t) && !used.contains(&t));
        match t {
            Some(t) => {
                used.insert(t);
                links.extend(data_links(g, noc, (x, y), t));
                *r = Some(t);
            }
            None => relocate.push(b),
        }
    }
    // The half a tile is in: left or right of the grid's middle.
    let half = |x: u32| x >= w / 2;
    for b in relocate {
        let bank = g.bank_tile(b).ok_or(TtError::PlacedBankTile)?;
        let hops = |t: (u32, u32)| data_links(g, noc, bank, t).len();
        let nearest = |used: &HashSet<(u32, u32)>| {
            (0..h)
                .flat_map(|y| (0..w).map(move |x| (x, y)))
                .filter(|&t| worker(g, t) && !used.contains(&t))
                .min_by_key(|&t| (hops(t), t.1, t.0))
        };
        let pick = match rule {
            Relocation::Logical => nearest(&used),
            Relocation::Document => {
                let taken_rows: HashSet<u32> = readers
                    .iter()
                    .flatten()
                    .filter(|t| half(t.0) == half(step(bank.0, s, w)))
                    .map(|t| t.1)
                    .collect();
                let fits = |t: (u32, u32)| {
                    worker(g, t)
                        && !used.contains(&t)
                        && data_links(g, noc, bank, t)
                            .iter()
                            .all(|l| !links.contains(l))
                };
                // Columns further along from the one next to the bank, in its half.
                let side = half(step(bank.0, s, w));
                let mut shifted = Vec::new();
                for dx in 2..i64::from(w) {
                    let x = step(bank.0, s * dx, w);
                    if half(x) != side {
                        break;
                    }
                    for dy in 1..i64::from(h) {
                        shifted.push((x, step(bank.1, -s * dy, h)));
                    }
                }
                shifted
                    .iter()
                    .copied()
                    .find(|&t| !taken_rows.contains(&t.1) && fits(t))
                    .or_else(|| shifted.iter().copied().find(|&t| fits(t)))
                    .or_else(|| {
                        (0..h)
                            .flat_map(|y| (0..w).map(move |x| (x, y)))
                            .filter(|&t| fits(t))
                            .min_by_key(|&t| (hops(t), t.1, t.0))
                    })
            }
        };
        let Some(t) = pick else {
            return Err(TtError::Overlap {
                grid: g.label().to_string(),
                bank: b,
            });
        };
        used.insert(t);
        links.extend(data_links(g, noc, bank, t));
        readers[b] = Some(t);
    }
    Ok(readers.into_iter().flatten().collect())
}

/// [`Relocation::Logical`]: every reader at the full grid's placement in logical rows.
fn logical(g: &TtGrid, noc: Noc) -> Result<Vec<(u32, u32)>, TtError> {
    let full = g.unharvested();
    let placed = next_to_bank(&full, noc, Relocation::Document)?;
    let rows = |g: &TtGrid| -> Vec<u32> {
        (0..g.cube().dims()[1])
            .filter(|&y| (0..g.width()).any(|x| worker(g, (x, y))))
            .collect()
    };
    let (full_rows, now_rows) = (rows(&full), rows(g));
    let mut used = HashSet::new();
    let mut out = Vec::with_capacity(placed.len());
    for (b, &(x, y)) in placed.iter().enumerate() {
        let bank = g.bank_tile(b).ok_or(TtError::PlacedBankTile)?;
        let t = full_rows
            .iter()
            .position(|&r| r == y)
            .and_then(|i| now_rows.get(i))
            .map(|&r| (x, r))
            .filter(|&t| worker(g, t) && !used.contains(&t))
            .or_else(|| {
                (0..g.cube().dims()[1])
                    .flat_map(|y| (0..g.width()).map(move |x| (x, y)))
                    .filter(|&t| worker(g, t) && !used.contains(&t))
                    .min_by_key(|&t| (data_links(g, noc, bank, t).len(), t.1, t.0))
            })
            .ok_or_else(|| TtError::NoFreeCore {
                grid: g.label().to_string(),
                bank: b,
            })?;
        used.insert(t);
        out.push(t);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Next to their banks on a full Wormhole every data route is one hop and none overlap; on
    /// the top two rows the NoC 0 routes of banks 2 and 10 share links (the document's
    /// example).
    #[test]
    fn top_rows_overlap_next_to_bank_does_not() {
        let g = TtGrid::wormhole(0).unwrap();
        let next = place(&g, Placement::NextToBank, Noc::Noc0).unwrap();
        assert_eq!(next.len(), 12);
        assert!(overlaps(&g, Noc::Noc0, &next).is_empty());
        for (b, &r) in next.iter().enumerate() {
            assert_eq!(
                data_links(&g, Noc::Noc0, g.bank_tile(b).unwrap(), r).len(),
                1
            );
        }
        let top = place(&g, Placement::TopRows, Noc::Noc0).unwrap();
        assert_eq!(top[0], (1, 1));
        let o = overlaps(&g, Noc::Noc0, &top);
        assert!(o.iter().any(|&(a, b, _)| (a, b) == (2, 10)), "{o:?}");
        let cols = place(&g, Placement::Columns, Noc::Noc0).unwrap();
        assert!(cols.iter().all(|t| t.0 == 1 || t.0 == 9));
        assert!(!overlaps(&g, Noc::Noc0, &cols).is_empty());
    }

    /// Every choice of one or two harvested worker rows on a Wormhole (10 + 45 grids): the
    /// relocation finds a working core for every bank, no two readers share a tile, and no
    /// two data routes share a link.
    #[test]
    fn relocation_keeps_routes_apart_for_every_harvest() {
        let rows = [1u32, 2, 3, 4, 5, 7, 8, 9, 10, 11];
        let mut choices: Vec<Vec<u32>> = rows.iter().map(|&r| vec![r]).collect();
        for (i, &a) in rows.iter().enumerate() {
            for &b in &rows[i + 1..] {
                choices.push(vec![a, b]);
            }
        }
        assert_eq!(choices.len(), 55);
        let mut naive_overlaps = 0;
        for harvest in choices {
            let g = TtGrid::wormhole(0)
                .unwrap()
                .with_harvested_rows(&harvest)
                .unwrap();
            let noc = Noc::Noc0;
            {
                let r = next_to_bank(&g, noc, Relocation::Document)
                    .unwrap_or_else(|e| panic!("{harvest:?} {noc:?}: {e}"));
                assert_eq!(r.len(), 12, "{harvest:?}");
                let distinct: HashSet<_> = r.iter().collect();
                assert_eq!(distinct.len(), 12, "{harvest:?}");
                assert!(r.iter().all(|&t| worker(&g, t)), "{harvest:?}");
                assert!(
                    overlaps(&g, noc, &r).is_empty(),
                    "{harvest:?} {noc:?}: {r:?}"
                );
                let naive = next_to_bank(&g, noc, Relocation::Logical).unwrap();
                naive_overlaps += usize::from(!overlaps(&g, noc, &naive).is_empty());
            }
        }
        // Moving displaced readers to the nearest free core instead overlaps routes for
        // some harvests: the relocation rule is what keeps them apart.
        assert!(naive_overlaps > 0);
    }

    /// Grayskull's eight banks sit in rows 0 and 6, which hold no workers: next to a bank is
    /// the core below it on NoC 0 (above it on NoC 1), a single hop, no overlaps.
    #[test]
    fn grayskull_readers_sit_below_their_banks() {
        let g = TtGrid::grayskull();
        for noc in [Noc::Noc0, Noc::Noc1] {
            let r = place(&g, Placement::NextToBank, noc).unwrap();
            assert_eq!(r.len(), 8);
            for (b, &t) in r.iter().enumerate() {
                let (x, y) = g.bank_tile(b).unwrap();
                let want = match noc {
                    Noc::Noc0 => (x, y + 1),
                    Noc::Noc1 => (x, (y + 11) % 12),
                };
                assert_eq!(t, want, "bank {b} {noc:?}");
            }
            assert!(overlaps(&g, noc, &r).is_empty());
        }
    }

    /// With row 5 harvested the readers of banks 2 and 10 (both banks on row 5) move right
    /// and up, to row 4: the nearest row above with no reader yet (the document's rule; its
    /// diagram's harvested rows are not in the text).
    #[test]
    fn harvested_row_readers_move_right_then_up() {
        let g = TtGrid::wormhole(0)
            .unwrap()
            .with_harvested_rows(&[5])
            .unwrap();
        let r = place(&g, Placement::NextToBank, Noc::Noc0).unwrap();
        assert_eq!(r[2], (2, 4));
        assert_eq!(r[10], (7, 4));
    }
}
