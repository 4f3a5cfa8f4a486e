//! The CUDA driver through cudarc's raw (`result`) API, by concern: finding the driver and
//! the devices (`probe`), device memory and typed addresses (`buffer`), one device's context
//! (`context`), host↔device copies through pinned buffers (`transfer`) and launching a
//! kernel (`launch`). The kernels' typed wrappers are in `gpu/kernels.rs`.

mod buffer;
mod context;
mod launch;
mod probe;
mod transfer;

pub(crate) use buffer::{DevBuf, DevPtr};
pub use buffer::{DeviceG1Points, DeviceG2Points, DevicePoints};
pub use context::GpuContext;
pub(crate) use context::{alloc_if_room, Event, Scratch};
pub(crate) use launch::{Args, Grid, Kernel};
pub(crate) use probe::check;
pub use probe::{discover, memory_info};
pub(crate) use transfer::{Staging, STAGE_MIN};
