//! Errors of SQL queries and of exporting tables.

use std::path::PathBuf;

/// Why a query or an export failed. Messages name the position in the query (`line L,
/// column C`) when the engine knows it.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// A statement other than a query: DDL (`CREATE`, `DROP`), DML (`INSERT`, `COPY`),
    /// `SET` and the like. Sessions are read only.
    #[error("refused: only queries are allowed (SELECT, WITH, EXPLAIN, VALUES); {0}")]
    Refused(String),
    /// The query could not be parsed or planned (unknown table or column, type mismatch, ...).
    #[error("{0}")]
    Query(String),
    /// The query ran longer than the session's time limit and was cancelled.
    #[error("the query ran longer than the time limit of {seconds} s and was cancelled")]
    TimeLimit {
        /// The limit, seconds.
        seconds: f64,
    },
    /// The query needed more memory than the session's limit.
    #[error("the query needed more than the memory limit of {limit_bytes} bytes: {message}")]
    MemoryLimit {
        /// The limit, bytes.
        limit_bytes: usize,
        /// The engine's message (which operator, how much).
        message: String,
    },
    /// Execution failed for another reason.
    #[error("the query failed: {0}")]
    Execution(String),
    /// A file could not be written (export).
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Arrow, Parquet, CSV or JSON writing failed (export).
    #[error("{path}: {message}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
}

impl SqlError {
    /// The error of a failed plan or execution, with the query position when the engine has
    /// one, and DataFusion's "not supported" verdicts on writes as [`SqlError::Refused`].
    pub(crate) fn from_datafusion(e: datafusion::error::DataFusionError, limit_bytes: usize) -> SqlError {
        use datafusion::error::DataFusionError as D;
        let position = e
            .diagnostic()
            .and_then(|d| d.span)
            .map(|s| format!(" (at line {}, column {})", s.start.line, s.start.column));
        let inner = e.find_root();
        match inner {
            D::ResourcesExhausted(m) => SqlError::MemoryLimit {
                limit_bytes,
                message: m.clone(),
            },
            D::Plan(m)
                if [
                    "DDL not supported",
                    "DML not supported",
                    "Statement not supported",
                ]
                .iter()
                .any(|p| m.starts_with(p)) =>
            {
                SqlError::Refused(m.clone())
            }
            D::SQL(e, _) => SqlError::Query(format!(
                "syntax error: {}",
                match e.as_ref() {
                    datafusion::sql::sqlparser::parser::ParserError::ParserError(m)
                    | datafusion::sql::sqlparser::parser::ParserError::TokenizerError(m) => m.clone(),
                    other => other.to_string(),
                }
            )),
            D::Plan(_) | D::SchemaError(..) | D::NotImplemented(_) => {
                SqlError::Query(format!("{}{}", inner, position.unwrap_or_default()))
            }
            _ => SqlError::Execution(format!("{}{}", inner, position.unwrap_or_default())),
        }
    }
}
