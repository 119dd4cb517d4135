//! The simulation driver: a model, its event queue, the clock, statistics and random streams.

use podsim_units::{SimDuration, SimTime};

use crate::{EventQueue, RngStreams, SimError, Stats};

/// A model: a state machine advanced by its own events.
pub trait Model {
    /// The events this model schedules for itself.
    type Event;
    /// Handle `event`, due at `ctx.now()`; schedule follow-ups through `ctx`.
    fn handle(
        &mut self,
        event: Self::Event,
        ctx: &mut Context<'_, Self::Event>,
    ) -> Result<(), SimError>;
}

/// What a model may do while handling an event.
pub struct Context<'a, E> {
    now: SimTime,
    queue: &'a mut EventQueue<E>,
    /// The simulation's statistics.
    pub stats: &'a mut Stats,
    rng: RngStreams,
}

impl<E> Context<'_, E> {
    /// The current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Schedule `event` `delay` after now, at the default priority (128).
    pub fn schedule(&mut self, delay: SimDuration, event: E) {
        self.queue.push(self.now + delay, DEFAULT_PRIORITY, event);
    }
    /// Schedule `event` `delay` after now at `priority` (lower runs first among equal times).
    pub fn schedule_with_priority(&mut self, delay: SimDuration, priority: u8, event: E) {
        self.queue.push(self.now + delay, priority, event);
    }
    /// Schedule `event` at the absolute time `at`, which must not be in the past.
    pub fn schedule_at(&mut self, at: SimTime, event: E) -> Result<(), SimError> {
        push_at(self.queue, self.now, at, event)
    }
    /// The random streams of this simulation.
    pub fn rng(&self) -> RngStreams {
        self.rng
    }
}

/// Push `event` at `at` unless that is before `now`.
fn push_at<E>(
    queue: &mut EventQueue<E>,
    now: SimTime,
    at: SimTime,
    event: E,
) -> Result<(), SimError> {
    if at < now {
        return Err(SimError::ScheduledInPast { at, now });
    }
    queue.push(at, DEFAULT_PRIORITY, event);
    Ok(())
}

/// The priority of events scheduled without one.
pub const DEFAULT_PRIORITY: u8 = 128;

/// Why a run stopped without an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// No event is left.
    Empty,
    /// The requested time was reached; later events stay pending.
    Reached(SimTime),
}

/// A model together with everything needed to run it.
pub struct Simulation<M: Model> {
    model: M,
    queue: EventQueue<M::Event>,
    now: SimTime,
    stats: Stats,
    rng: RngStreams,
    limit: Option<SimTime>,
    handled: u64,
}

impl<M: Model> Simulation<M> {
    /// A simulation of `model` at time zero with random streams from `seed`.
    pub fn new(model: M, seed: u64) -> Self {
        Simulation {
            model,
            queue: EventQueue::new(),
            now: SimTime::ZERO,
            stats: Stats::new(),
            rng: RngStreams::new(seed),
            limit: None,
            handled: 0,
        }
    }

    /// Fail with [`SimError::TimeLimit`] instead of handling any event later than `limit`.
    pub fn set_time_limit(&mut self, limit: Option<SimTime>) {
        self.limit = limit;
    }

    /// Schedule an initial event at `at` (which must not be before the current time).
    pub fn schedule_at(&mut self, at: SimTime, event: M::Event) -> Result<(), SimError> {
        push_at(&mut self.queue, self.now, at, event)
    }

    /// The current time: that of the last event handled.
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// The model.
    pub fn model(&self) -> &M {
        &self.model
    }
    /// The model, mutably.
    pub fn model_mut(&mut self) -> &mut M {
        &mut self.model
    }
    /// The statistics registry.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    /// The statistics registry, mutably (to register statistics before running).
    pub fn stats_mut(&mut self) -> &mut Stats {
        &mut self.stats
    }
    /// The random streams.
    pub fn rng(&self) -> RngStreams {
        self.rng
    }
    /// Events handled so far.
    pub fn events_handled(&self) -> u64 {
        self.handled
    }
    /// Events still pending.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// Handle the single earliest event; `Ok(None)` when none is left.
    pub fn step(&mut self) -> Result<Option<SimTime>, SimError> {
        let Some(t) = self.queue.peek_time() else {
            return Ok(None);
        };
        if let Some(limit) = self.limit {
            if t > limit {
                return Err(SimError::TimeLimit {
                    limit,
                    pending: self.queue.len(),
                });
            }
        }
        let Some((t, ev)) = self.queue.pop() else {
            return Ok(None);
        };
        self.now = t;
        self.handled += 1;
        let mut ctx = Context {
            now: t,
            queue: &mut self.queue,
            stats: &mut self.stats,
            rng: self.rng,
        };
        self.model.handle(ev, &mut ctx)?;
        Ok(Some(t))
    }

    /// Run until no event is left.
    pub fn run(&mut self) -> Result<Stop, SimError> {
        while self.step()?.is_some() {}
        Ok(Stop::Empty)
    }

    /// Run every event due at or before `until`, then set the clock to `until`.
    pub fn run_until(&mut self, until: SimTime) -> Result<Stop, SimError> {
        loop {
            match self.queue.peek_time() {
                None => return Ok(Stop::Empty),
                Some(t) if t > until => {
                    self.now = self.now.max(until);
                    return Ok(Stop::Reached(until));
                }
                Some(_) => {
                    self.step()?;
                }
            }
        }
    }
}
