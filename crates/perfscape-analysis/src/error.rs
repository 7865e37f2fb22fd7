//! [`ViewError`]: why a view cannot be computed for the parameters given.

/// Why a view cannot be computed for the parameters given. The server answers
/// [`ViewError::Invalid`] with 400 and [`ViewError::NotFound`] with 404.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ViewError {
    /// A parameter is malformed, out of range or does not fit the others; the message names
    /// the parameter and what it accepts.
    #[error("{0}")]
    Invalid(String),
    /// The parameters name an event, thread or sample that does not exist.
    #[error("{0}")]
    NotFound(String),
}

impl ViewError {
    /// A [`ViewError::Invalid`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::Invalid(message.into())
    }

    /// A [`ViewError::NotFound`].
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::NotFound(message.into())
    }
}
