//! Checked reading of what a host passes in, and writing of what goes back out. Every check
//! names the argument, so a host developer reads which one was wrong.

use std::mem::size_of;

use super::boundary::{Failure, FfiResult};

/// A shared reference to a handle, or an error naming `arg` when it is NULL.
///
/// # Safety
/// A non-NULL `p` must be a live handle of type `T` this library handed out.
pub(crate) unsafe fn handle<'a, T>(p: *const T, arg: &str) -> FfiResult<&'a T> {
    p.as_ref().ok_or_else(|| Failure::arg(arg, "is NULL"))
}

/// The out-pointer `p`, checked non-NULL.
pub(crate) fn out<'a, T>(p: *mut T, arg: &str) -> FfiResult<&'a mut std::mem::MaybeUninit<T>> {
    // SAFETY: the host promises a non-NULL out-pointer points at writable memory for a T;
    // MaybeUninit because it need not be initialized.
    unsafe { p.cast::<std::mem::MaybeUninit<T>>().as_mut() }
        .ok_or_else(|| Failure::arg(arg, "is NULL"))
}

/// `len` elements of `T` at `p` as a slice. NULL is accepted only with `len == 0`.
///
/// # Safety
/// A non-NULL `p` must point at `len` readable, initialized `T`s that stay unchanged for the
/// call.
pub(crate) unsafe fn slice<'a, T>(p: *const T, len: usize, arg: &str) -> FfiResult<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::arg(
            arg,
            format!("is NULL but its length is {len}"),
        ));
    }
    if len
        .checked_mul(size_of::<T>())
        .map_or(true, |b| b > isize::MAX as usize)
    {
        return Err(Failure::arg(arg, format!("has an impossible length {len}")));
    }
    if (p as usize) % std::mem::align_of::<T>() != 0 {
        return Err(Failure::arg(
            arg,
            format!("is not aligned to {} bytes", std::mem::align_of::<T>()),
        ));
    }
    Ok(std::slice::from_raw_parts(p, len))
}

/// `count` items of `item` bytes each at `p`, as bytes.
///
/// # Safety
/// As [`slice`], for `count * item` bytes.
pub(crate) unsafe fn bytes<'a>(
    p: *const u8,
    count: usize,
    item: usize,
    arg: &str,
) -> FfiResult<&'a [u8]> {
    let len = count
        .checked_mul(item)
        .ok_or_else(|| Failure::arg(arg, format!("has an impossible length {count}")))?;
    slice(p, len, arg)
}

/// A writable byte buffer, or an error naming `arg`. NULL is accepted only with `len == 0`.
///
/// # Safety
/// A non-NULL `p` must point at `len` writable bytes.
pub(crate) unsafe fn buffer<'a>(p: *mut u8, len: usize, arg: &str) -> FfiResult<&'a mut [u8]> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(Failure::arg(
            arg,
            format!("is NULL but its length is {len}"),
        ));
    }
    if len > isize::MAX as usize {
        return Err(Failure::arg(arg, format!("has an impossible length {len}")));
    }
    Ok(std::slice::from_raw_parts_mut(p, len))
}

/// Writes `data` into the host's buffer `(buf, len)` and its size into `*needed`; fails with
/// `CUZK_STATUS_BUFFER_TOO_SMALL` (having still set `*needed`) when it does not fit. The
/// shared shape of every variable-size output.
///
/// # Safety
/// As [`buffer`]; `needed` NULL or writable.
pub(crate) unsafe fn write_sized(
    data: &[u8],
    buf: *mut u8,
    len: usize,
    needed: *mut usize,
    buf_arg: &str,
) -> FfiResult<()> {
    let needed = out(needed, "needed")?;
    needed.write(data.len());
    let buf = buffer(buf, len, buf_arg)?;
    if buf.len() < data.len() {
        return Err(Failure::buffer_too_small(buf_arg, buf.len(), data.len()));
    }
    buf[..data.len()].copy_from_slice(data);
    Ok(())
}

/// Reads a host struct that starts with a `size_t size` field, sized as the host knows it.
/// NULL or `size == 0` gives the all-zero struct (every field at its default). A host
/// compiled against an older header passes a smaller size, and the fields it does not know
/// read as zero; a newer one passes a larger size, accepted when the bytes past this
/// library's struct are all zero (fields left at their defaults), as Linux does for
/// `clone3` and `openat2`.
///
/// # Safety
/// A non-NULL `p` must point at `(*p).size` readable bytes. `T` must be plain data for which
/// all-zero bytes, and any bytes, are valid (integers and nullable pointers only).
pub(crate) unsafe fn read_sized<T: Copy>(p: *const T, arg: &str) -> FfiResult<T> {
    let mut value: T = std::mem::zeroed();
    if p.is_null() {
        return Ok(value);
    }
    let size = std::ptr::read_unaligned(p.cast::<usize>());
    if size == 0 {
        return Ok(value);
    }
    if size < size_of::<usize>() {
        return Err(Failure::arg(
            arg,
            format!("has size {size}, smaller than its own size field"),
        ));
    }
    if size > isize::MAX as usize {
        return Err(Failure::arg(arg, format!("has an impossible size {size}")));
    }
    let ours = size_of::<T>();
    if size > ours {
        let tail = std::slice::from_raw_parts(p.cast::<u8>().add(ours), size - ours);
        if tail.iter().any(|&b| b != 0) {
            return Err(Failure::arg(
                arg,
                format!(
                    "has size {size} and sets fields past the {ours} bytes this library \
                     knows (a newer header than the library?)"
                ),
            ));
        }
    }
    std::ptr::copy_nonoverlapping(
        p.cast::<u8>(),
        (&mut value as *mut T).cast::<u8>(),
        size.min(ours),
    );
    Ok(value)
}

/// Writes `value`, a struct that starts with a `size_t size` field, into the host's struct
/// `p`, whose `size` the host has set to the size it knows: only that many bytes are written
/// (a host built against an older header gets the fields it knows), and `size` is set to
/// the bytes written.
///
/// # Safety
/// A non-NULL `p` must point at `(*p).size` writable bytes. `T` must be plain data with no
/// padding.
pub(crate) unsafe fn write_sized_struct<T: Copy>(value: &T, p: *mut T, arg: &str) -> FfiResult<()> {
    if p.is_null() {
        return Err(Failure::arg(arg, "is NULL"));
    }
    let size = std::ptr::read_unaligned(p.cast::<usize>());
    if size < size_of::<usize>() {
        return Err(Failure::arg(
            arg,
            format!("has size {size}: set its `size` field to sizeof(the struct) first"),
        ));
    }
    let n = size.min(size_of::<T>());
    std::ptr::copy_nonoverlapping((value as *const T).cast::<u8>(), p.cast::<u8>(), n);
    std::ptr::write_unaligned(p.cast::<usize>(), n);
    Ok(())
}

/// A NUL-terminated C string as bytes (not necessarily UTF-8).
///
/// # Safety
/// A non-NULL `p` must point at a NUL-terminated string.
pub(crate) unsafe fn c_str<'a>(p: *const std::ffi::c_char, arg: &str) -> FfiResult<&'a [u8]> {
    if p.is_null() {
        return Err(Failure::arg(arg, "is NULL"));
    }
    Ok(std::ffi::CStr::from_ptr(p).to_bytes())
}

/// A NUL-terminated path, or `None` for NULL. Paths must be UTF-8 (they are printed in
/// messages and logs as given); anything else is an error naming `arg`.
///
/// # Safety
/// A non-NULL `p` must point at a NUL-terminated string.
pub(crate) unsafe fn c_path(
    p: *const std::ffi::c_char,
    arg: &str,
) -> FfiResult<Option<std::path::PathBuf>> {
    if p.is_null() {
        return Ok(None);
    }
    let s = std::str::from_utf8(c_str(p, arg)?).map_err(|_| Failure::arg(arg, "is not UTF-8"))?;
    Ok(Some(std::path::PathBuf::from(s)))
}
