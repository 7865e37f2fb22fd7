//! What [`crate::format::OpenOptions`] holds besides the format and the parts: the progress
//! sink and the cache mode.

/// Receives progress while a run loads (implemented by the CLI's progress bar). Called from
/// worker threads.
pub trait ProgressSink: Sync {
    /// Loading starts; `total_files` files will be read.
    fn start(&self, total_files: u64);
    /// `files` more files were read.
    fn advance(&self, files: u64);
    /// Loading is over.
    fn finish(&self);
}

/// Whether [`crate::open`] uses the cache of loaded profiles (see [`crate::cache`]). The
/// library default is [`CacheMode::Off`] (a program, or a test, that opens the same files
/// twice gets two real loads); the `perfscape` CLI uses [`CacheMode::ReadWrite`] unless told
/// `--no-cache`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheMode {
    /// Read a valid cache; otherwise load the files and write the cache.
    ReadWrite,
    /// Load the files and (re)write the cache, whatever is cached.
    Refresh,
    /// Neither read nor write a cache (the default).
    #[default]
    Off,
}
