//! The pending-event set: a timing wheel for the near future and a heap for the far future.
//!
//! Events are delivered in increasing `(time, priority, insertion sequence)`: earlier time first;
//! at equal times the lower priority number first; at equal time and priority, the event pushed
//! first. Keys are unique (the sequence number is), so the order is total and does not depend
//! on how the structure happens to be laid out.
//!
//! Layout: time is cut into slots of `2^slot_shift` ps. The wheel holds one unsorted bucket per
//! slot for the `slots` slots starting at the current one; events beyond that horizon wait in a
//! binary heap and move into the wheel as the horizon passes over them. When the current slot
//! is reached its bucket is sorted once (already-ordered buckets, the common case when all events
//! in a slot share a time, sort in linear time) and then drained from the end; events pushed into
//! the slot being drained go to a small side heap that is merged on every pop.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use podsim_units::SimTime;

/// The number of bits of the sequence number; 2^56 events per run is the limit.
const SEQ_BITS: u32 = 56;

/// A scheduled event with its ordering key.
#[derive(Debug)]
struct Entry<E> {
    time: u64,
    /// `priority << 56 | sequence`.
    order: u64,
    event: E,
}

impl<E> Entry<E> {
    fn key(&self) -> (u64, u64) {
        (self.time, self.order)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

/// A deterministic priority queue of timed events (see the module docs for the order).
#[derive(Debug)]
pub struct EventQueue<E> {
    slot_shift: u32,
    mask: u64,
    /// Absolute index (time >> slot_shift) of the slot being drained.
    cur: u64,
    slots: Vec<Vec<Entry<E>>>,
    /// One bit per wheel slot: set when the bucket is non-empty.
    occupied: Vec<u64>,
    in_wheel: usize,
    /// The current slot's events, sorted with the earliest at the end.
    front: Vec<Entry<E>>,
    /// Events pushed into the current slot after it was sorted.
    late: BinaryHeap<Reverse<Entry<E>>>,
    overflow: BinaryHeap<Reverse<Entry<E>>>,
    len: usize,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// A queue with 1.024 ns slots and a 4096-slot (about 4.2 µs) wheel: suited to clocks
    /// between roughly 100 MHz and 4 GHz.
    pub fn new() -> Self {
        Self::with_geometry(10, 12)
    }

    /// A queue whose slots are `2^slot_shift` ps wide and whose wheel has `2^log2_slots` slots.
    /// Both are clamped to sane ranges (`slot_shift` <= 40, `log2_slots` in 6..=20).
    pub fn with_geometry(slot_shift: u32, log2_slots: u32) -> Self {
        let slot_shift = slot_shift.min(40);
        let n = 1usize << log2_slots.clamp(6, 20);
        EventQueue {
            slot_shift,
            mask: (n - 1) as u64,
            cur: 0,
            slots: (0..n).map(|_| Vec::new()).collect(),
            occupied: vec![0; n / 64],
            in_wheel: 0,
            front: Vec::new(),
            late: BinaryHeap::new(),
            overflow: BinaryHeap::new(),
            len: 0,
            seq: 0,
        }
    }

    /// How many events are pending.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Schedule `event` at `time` with `priority` (lower runs first among equal times).
    pub fn push(&mut self, time: SimTime, priority: u8, event: E) {
        let order = (u64::from(priority) << SEQ_BITS) | (self.seq & ((1 << SEQ_BITS) - 1));
        self.seq += 1;
        self.len += 1;
        let entry = Entry {
            time: time.as_ps(),
            order,
            event,
        };
        self.place(entry);
    }

    fn place(&mut self, entry: Entry<E>) {
        let slot = entry.time >> self.slot_shift;
        if slot <= self.cur {
            self.late.push(Reverse(entry));
        } else if slot - self.cur <= self.mask {
            let i = (slot & self.mask) as usize;
            self.slots[i].push(entry);
            self.occupied[i / 64] |= 1 << (i % 64);
            self.in_wheel += 1;
        } else {
            self.overflow.push(Reverse(entry));
        }
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.fill_front();
        let a = self.front.last().map(|e| e.key());
        let b = self.late.peek().map(|e| e.0.key());
        match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y).0),
            (Some(x), None) => Some(x.0),
            (None, Some(y)) => Some(y.0),
            (None, None) => None,
        }
        .map(SimTime::from_ps)
    }

    /// Remove and return the earliest pending event with its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.fill_front();
        let take_late = match (self.front.last(), self.late.peek()) {
            (Some(f), Some(l)) => l.0.key() < f.key(),
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (None, None) => return None,
        };
        let e = if take_late {
            self.late.pop().map(|r| r.0)
        } else {
            self.front.pop()
        }?;
        self.len -= 1;
        Some((SimTime::from_ps(e.time), e.event))
    }

    /// Make sure the earliest event is in `front` or `late`, advancing the wheel if needed.
    fn fill_front(&mut self) {
        if !self.front.is_empty() || !self.late.is_empty() || self.len == 0 {
            return;
        }
        let next = if self.in_wheel > 0 {
            self.next_occupied()
        } else {
            // The wheel is empty: jump straight to the first overflow slot.
            self.overflow
                .peek()
                .map(|r| r.0.time >> self.slot_shift)
                .unwrap_or(self.cur)
        };
        self.cur = next;
        let i = (next & self.mask) as usize;
        if self.occupied[i / 64] & (1 << (i % 64)) != 0 {
            self.occupied[i / 64] &= !(1 << (i % 64));
            std::mem::swap(&mut self.front, &mut self.slots[i]);
            self.in_wheel -= self.front.len();
            // Earliest at the end. Buckets are mostly in push order already, which the sort
            // recognises as a single run.
            #[allow(clippy::unnecessary_sort_by)]
            // measured: faster than sort_unstable_by_key here
            self.front.sort_unstable_by(|a, b| b.key().cmp(&a.key()));
        }
        // Bring overflow events inside the new horizon into the wheel (or the current slot).
        while let Some(r) = self.overflow.peek() {
            if (r.0.time >> self.slot_shift) - self.cur > self.mask {
                break;
            }
            if let Some(Reverse(e)) = self.overflow.pop() {
                self.place(e);
            }
        }
    }

    /// The absolute index of the first non-empty wheel slot after the current one.
    fn next_occupied(&self) -> u64 {
        let n = self.slots.len();
        let start = ((self.cur + 1) & self.mask) as usize;
        let words = self.occupied.len();
        let (mut w, bit) = (start / 64, start % 64);
        // First word, masked below `bit`.
        let mut word = self.occupied[w] & (!0u64 << bit);
        for _ in 0..=words {
            if word != 0 {
                let pos = w * 64 + word.trailing_zeros() as usize;
                let dist = (pos + n - start) % n;
                return self.cur + 1 + dist as u64;
            }
            w = (w + 1) % words;
            word = self.occupied[w];
        }
        self.cur + 1
    }
}
