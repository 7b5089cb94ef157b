//! The C library's `write`, `writev` and `getenv`, defined here so that a
//! plugin's component imports no WASI interface.
//!
//! Rust's standard library on `wasm32-wasip2` writes stderr through wasi-libc's
//! `write`, and its panic hook reads `RUST_BACKTRACE` through `getenv`. Those
//! two paths pull about twenty WASI functions (streams, terminals, the
//! environment, exit) into every component, even one that never panics, and
//! the host pays for each of them, and for the extra core modules that
//! lowering them needs, on every call: a call instantiates the component
//! afresh. The linker takes a symbol from an object before it looks in
//! libc's archive, so these definitions replace libc's, and the WASI imports
//! behind them drop out of the component.
//!
//! Nothing a plugin can observe changes except where stderr goes: the host
//! gives plugins no environment (so `getenv` answering none is what libc
//! would answer) and discards stdout. Stderr is sent to the host's log at
//! error level a line at a time, and the host adds a trapped call's last
//! lines to its error, so a panic's message still reaches the operator.

use crate::bindings::outreach::plugin::log as wit;
use core::ffi::{c_char, c_int};
use std::sync::Mutex;

/// wasi-libc's `EBADF`.
const EBADF: c_int = 8;

/// A line longer than this is sent in pieces; the host keeps 4 KiB of a
/// message.
const MAX_LINE: usize = 4096;

/// The stderr bytes not yet ended by a newline.
static PENDING: Mutex<Vec<u8>> = Mutex::new(Vec::new());

unsafe extern "C" {
    fn __errno_location() -> *mut c_int;
}

/// One buffer of a `writev` call, as C lays it out.
#[repr(C)]
pub struct IoVec {
    base: *const u8,
    len: usize,
}

/// Appends `bytes` to the pending stderr line and logs each finished line.
fn write_stderr(bytes: &[u8]) {
    // A panic while the lock is held cannot leave the buffer half-updated in
    // a way that matters for log text, so a poisoned lock is used as is.
    let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    pending.extend_from_slice(bytes);
    while let Some(end) = pending.iter().position(|&b| b == b'\n') {
        let line: Vec<u8> = pending.drain(..=end).collect();
        send(&line[..end]);
    }
    if pending.len() >= MAX_LINE {
        let line = std::mem::take(&mut *pending);
        send(&line);
    }
}

fn send(line: &[u8]) {
    if !line.is_empty() {
        wit::log(wit::Level::Error, &String::from_utf8_lossy(line));
    }
}

/// `write(2)`: stderr goes to the host's log, stdout is discarded (as the
/// host would), and any other descriptor is refused: a plugin has no files.
///
/// # Safety
///
/// `buf` must point to `len` readable bytes, as C's `write` requires.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn write(fd: c_int, buf: *const u8, len: usize) -> isize {
    match fd {
        1 => {}
        2 if len > 0 => write_stderr(unsafe { core::slice::from_raw_parts(buf, len) }),
        2 => {}
        _ => {
            unsafe { *__errno_location() = EBADF };
            return -1;
        }
    }
    len as isize
}

/// `writev(2)`, as `write` of each buffer in turn.
///
/// # Safety
///
/// `iov` must point to `count` buffers, each as `write` requires.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn writev(fd: c_int, iov: *const IoVec, count: c_int) -> isize {
    if count <= 0 {
        return 0;
    }
    let buffers = unsafe { core::slice::from_raw_parts(iov, count as usize) };
    let mut total = 0;
    for b in buffers {
        let n = unsafe { write(fd, b.base, b.len) };
        if n < 0 {
            return n;
        }
        total += n;
    }
    total
}

/// `getenv(3)`: a plugin has no environment variables.
#[unsafe(no_mangle)]
pub extern "C" fn getenv(_name: *const c_char) -> *mut c_char {
    core::ptr::null_mut()
}
