//! [`ApiError`]: an HTTP status and a message, answered as `{"error": "..."}`.

use crate::api::ErrorResponse;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use perfscape_analysis::ViewError;

/// An API error: HTTP status and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    /// HTTP status code.
    pub status: u16,
    /// What went wrong.
    pub message: String,
}

impl ApiError {
    /// 400 Bad Request.
    pub fn bad(message: impl Into<String>) -> Self {
        Self {
            status: 400,
            message: message.into(),
        }
    }

    /// 404 Not Found.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self {
            status: 404,
            message: message.into(),
        }
    }

    /// 410 Gone (a sample thinned out of a live run's window).
    pub fn gone(message: impl Into<String>) -> Self {
        Self {
            status: 410,
            message: message.into(),
        }
    }

    /// 403 Forbidden (a request from another site's page).
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self {
            status: 403,
            message: message.into(),
        }
    }

    /// 500 Internal Server Error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            status: 500,
            message: format!("internal error: {}", message.into()),
        }
    }

    /// 503 Service Unavailable (the run did not load, no sample yet, not enough memory).
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self {
            status: 503,
            message: message.into(),
        }
    }
}

impl From<ViewError> for ApiError {
    fn from(e: ViewError) -> Self {
        match e {
            ViewError::NotFound(m) => ApiError::not_found(m),
            other => ApiError::bad(other.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(ErrorResponse { error: self.message })).into_response()
    }
}
