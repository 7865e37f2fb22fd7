//! The read-only check: a query is parsed first and refused unless it is one statement that
//! only reads (`SELECT`/`WITH`/`VALUES`, `EXPLAIN` of one, `DESCRIBE`, `SHOW TABLES`,
//! `SHOW COLUMNS`). DataFusion's own `SQLOptions` check the plan again afterwards.

use crate::error::SqlError;
use datafusion::sql::parser::{DFParser, Statement};
use datafusion::sql::sqlparser::ast::Statement as Sql;

/// Ok when `sql` is one read-only statement.
///
/// # Errors
/// [`SqlError::Query`] when it does not parse (with the line and column), and
/// [`SqlError::Refused`] naming what is not allowed.
pub(crate) fn check(sql: &str) -> Result<(), SqlError> {
    let statements = DFParser::parse_sql(sql).map_err(|e| SqlError::from_datafusion(e, 0))?;
    if statements.len() != 1 {
        return Err(SqlError::Refused(format!(
            "one statement at a time; this text has {}",
            statements.len()
        )));
    }
    statements.front().map_or(Ok(()), statement)
}

fn statement(s: &Statement) -> Result<(), SqlError> {
    match s {
        Statement::Statement(s) => match s.as_ref() {
            Sql::Query(_) | Sql::ExplainTable { .. } | Sql::ShowTables { .. } | Sql::ShowColumns { .. } => {
                Ok(())
            }
            Sql::Explain { statement, .. } => match statement.as_ref() {
                Sql::Query(_) => Ok(()),
                other => Err(refused(other)),
            },
            other => Err(refused(other)),
        },
        Statement::Explain(e) => statement(&e.statement),
        Statement::CreateExternalTable(_) => Err(SqlError::Refused(
            "CREATE EXTERNAL TABLE reads files; the tables are the runs given".into(),
        )),
        Statement::CopyTo(_) => Err(SqlError::Refused(
            "COPY writes files; use `perfscape sql --format parquet --out FILE` or `perfscape export`".into(),
        )),
        Statement::Reset(_) => Err(SqlError::Refused("RESET changes the session".into())),
    }
}

/// The refusal of a statement, named by its first words.
fn refused(s: &Sql) -> SqlError {
    let text = s.to_string();
    let words: Vec<&str> = text.split_whitespace().take(2).collect();
    SqlError::Refused(format!("{} is not a query", words.join(" ")))
}
