//! A start phase with a deadline: it runs on a thread of its own, so that its worker can
//! stop waiting for a device that does not answer.
//!
//! A thread stuck inside a CUDA call (or any backend call) cannot be killed or interrupted:
//! the only way on is to leave it behind. When the deadline passes, the worker abandons the
//! call, handing it what must live until it returns (the reservations of the memory it
//! still reads); the worker retries the partition elsewhere from copies. When the stuck call
//! finally returns, its result is discarded, whatever it is, and the abandoned-call hook
//! runs on that thread (it frees the memory and lets the device be probed). The thread holds
//! the engine's shared state until then, so an engine dropped meanwhile leaves it behind.
//!
//! Without a deadline the start phase runs on the worker's own thread, as it always did.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::groth16::{PartialProof, StartTimings};

/// What a start phase returns, a panic included.
pub(crate) type StartOutput = std::thread::Result<Result<(PartialProof, StartTimings)>>;

/// Run, on the stuck call's thread, when an abandoned call returns.
pub(crate) type OnReturn = Box<dyn FnOnce() + Send>;

// One slot a start call: boxing the finished output would buy nothing.
#[allow(clippy::large_enum_variant)]
enum State {
    Running,
    Done(StartOutput),
    Abandoned(OnReturn),
    /// The output was taken, or the abandoned call's hook has run.
    Over,
}

struct Slot {
    state: Mutex<State>,
    done: Condvar,
}

/// A start phase running on its own thread.
pub(crate) struct StartCall {
    slot: Arc<Slot>,
}

impl StartCall {
    /// Runs `f` on a new thread named `name`. `f` should drop what it holds before it
    /// returns (a closure's captures do), so that the caller gets sole ownership back.
    pub(crate) fn spawn(
        name: String,
        f: impl FnOnce() -> StartOutput + Send + 'static,
    ) -> Result<StartCall> {
        let slot = Arc::new(Slot {
            state: Mutex::new(State::Running),
            done: Condvar::new(),
        });
        let theirs = slot.clone();
        std::thread::Builder::new()
            .name(name)
            .spawn(move || {
                let out = f();
                let mut state = theirs.state.lock().unwrap_or_else(|p| p.into_inner());
                match std::mem::replace(&mut *state, State::Over) {
                    State::Running => {
                        *state = State::Done(out);
                        theirs.done.notify_all();
                    }
                    State::Abandoned(on_return) => {
                        drop(state);
                        drop(out);
                        on_return();
                    }
                    State::Done(_) | State::Over => unreachable!("a start call finishes once"),
                }
            })
            .map_err(|e| Error::internal(format!("cannot start a start-phase thread: {e}")))?;
        Ok(StartCall { slot })
    }

    /// The call's output, if it returns within `deadline`.
    pub(crate) fn wait(&self, deadline: Duration) -> Option<StartOutput> {
        let end = Instant::now() + deadline;
        let mut state = self.slot.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if matches!(*state, State::Done(_)) {
                let State::Done(out) = std::mem::replace(&mut *state, State::Over) else {
                    unreachable!("matched just above")
                };
                return Some(out);
            }
            let now = Instant::now();
            if now >= end {
                return None;
            }
            state = self
                .slot
                .done
                .wait_timeout(state, end - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Gives up on a call that missed its deadline: its output is discarded, and
    /// `on_return` runs when it returns (at once, here, if it just did).
    pub(crate) fn abandon(self, on_return: OnReturn) {
        let mut state = self.slot.state.lock().unwrap_or_else(|p| p.into_inner());
        match std::mem::replace(&mut *state, State::Over) {
            State::Running => *state = State::Abandoned(on_return),
            State::Done(out) => {
                drop(state);
                drop(out);
                on_return();
            }
            State::Abandoned(_) | State::Over => unreachable!("a start call is abandoned once"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

    fn ok() -> StartOutput {
        Ok(Err(Error::internal("a result")))
    }

    #[test]
    fn a_call_within_its_deadline_returns_its_output() {
        let call = StartCall::spawn("t".into(), ok).unwrap();
        let out = call.wait(Duration::from_secs(600));
        assert!(matches!(out, Some(Ok(Err(_)))));
    }

    #[test]
    fn an_abandoned_call_runs_its_hook_when_it_returns() {
        let (go_tx, go_rx) = crossbeam_channel::bounded::<()>(1);
        let call = StartCall::spawn("t".into(), move || {
            let _ = go_rx.recv();
            ok()
        })
        .unwrap();
        let returned = Arc::new(AtomicBool::new(false));
        let (done_tx, done_rx) = crossbeam_channel::bounded::<()>(1);
        let flag = returned.clone();
        assert!(call.wait(Duration::from_millis(1)).is_none());
        call.abandon(Box::new(move || {
            flag.store(true, SeqCst);
            let _ = done_tx.send(());
        }));
        // The hook waits for the call, however late.
        assert!(!returned.load(SeqCst));
        go_tx.send(()).unwrap();
        done_rx.recv_timeout(Duration::from_secs(600)).unwrap();
        assert!(returned.load(SeqCst));
    }
}
