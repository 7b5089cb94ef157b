//! glibc allocator settings for a server that should stay small on a small
//! machine (issue 9's P8: peak RSS of a 100,000-message send under 57 MB).
//!
//! glibc gives each thread that allocates concurrently an arena of its own,
//! up to eight per core, and a freed block returns to its arena, not to the
//! system. The server's threads (the tokio workers, one per SQLite
//! connection, blocking-pool threads) each left megabytes spread over their
//! arenas: capping them at two cut the send's peak by a fifth with no
//! measurable cost in throughput. Compiling the embedded plugins on a first
//! start frees tens of megabytes that glibc keeps; trimming after start-up
//! hands them back.
//!
//! RSS also counts the pages of the binary's own code the process has
//! touched, and the kernel maps code in 64 KB runs around each page used:
//! start-up (migrations, the OpenAPI document, Cranelift compiling plugins)
//! left about 39 MB of a 54 MB text mapped though the server then runs a
//! fraction of it. After start-up the read-only mappings of the executable
//! are paged out (`MADV_PAGEOUT`, Linux 5.4+; nothing is lost, the pages
//! are clean and come back from the file when used), so the resident code
//! is what the running server uses.

/// Caps the number of malloc arenas. Runs first in `main`, before any
/// thread exists; `MALLOC_ARENA_MAX` in the environment still wins.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only changes allocator settings; it is called
        // before other threads exist.
        #[allow(unsafe_code)]
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}

/// Returns the free memory at the top of every arena to the system.
pub fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim is thread-safe and only releases free memory.
    #[allow(unsafe_code)]
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Pages out the executable's read-only mappings (see the module docs).
/// Returns the bytes advised, for the log.
pub fn page_out_start_up_code() -> usize {
    #[cfg(target_os = "linux")]
    {
        let (Ok(exe), Ok(maps)) = (
            std::env::current_exe(),
            std::fs::read_to_string("/proc/self/maps"),
        ) else {
            return 0;
        };
        let exe = exe.to_string_lossy().into_owned();
        let mut advised = 0;
        for line in maps.lines() {
            // "start-end perms offset dev inode path"
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 6 || fields[5] != exe || fields[1].contains('w') {
                continue;
            }
            let Some((start, end)) = fields[0].split_once('-') else {
                continue;
            };
            let (Ok(start), Ok(end)) = (
                usize::from_str_radix(start, 16),
                usize::from_str_radix(end, 16),
            ) else {
                continue;
            };
            // SAFETY: the range is a whole mapping of this process's own
            // executable, read-only and file-backed; MADV_PAGEOUT only
            // drops clean pages that fault back in from the file.
            #[allow(unsafe_code)]
            let done = unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_PAGEOUT)
            };
            if done == 0 {
                advised += end - start;
            }
        }
        advised
    }
    #[cfg(not(target_os = "linux"))]
    0
}
