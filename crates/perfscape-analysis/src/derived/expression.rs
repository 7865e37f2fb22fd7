//! Arithmetic expressions over a profile's metrics, the right-hand side of a derived metric
//! (`PAPI_TOT_INS / PAPI_TOT_CYC`, `TIME - CPU_TIME`, `"TAU_MPI_MESSAGE_SIZE" / (TIME / 1e6)`).
//!
//! The syntax is that of an SQL expression, parsed by `sqlparser` (the parser DataFusion uses,
//! so `perfscape sql` and derived metrics read names and numbers the same way): metric names
//! as identifiers, in double quotes when they hold other characters than letters, digits and
//! `_` (ParaProf's derived-metric dialog also quotes metric names); numbers; `+ - * /`, unary
//! minus and parentheses. A name matches a metric exactly, else ASCII case-insensitively.
//! Everything else (functions, comparisons, strings, columns `a.b`) is refused with its
//! position.

use perfscape_model::{Combine, Metric, MetricId, Unit};
use sqlparser::ast::{BinaryOperator, Expr, Spanned, UnaryOperator, Value};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;
use std::fmt;

/// Why an expression could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpressionError {
    /// The text is not an expression (the parser's message, with line and column).
    #[error("`{text}` is not an expression: {message}")]
    Syntax {
        /// The expression as given.
        text: String,
        /// What the parser expected, and where (line and column, from 1).
        message: String,
    },
    /// A part of the expression that derived metrics do not have (a function, a comparison,
    /// a string, ...), at a column (from 1).
    #[error(
        "`{text}`, column {column}: {what} is not allowed; a derived metric is made of metric names, numbers, + - * / and parentheses"
    )]
    Unsupported {
        /// The expression as given.
        text: String,
        /// The part refused, as written.
        what: String,
        /// Its column (from 1).
        column: u64,
    },
    /// A name that is not one of the profile's metrics.
    #[error("`{text}`, column {column}: no metric `{name}` in this profile (its metrics: {known})")]
    UnknownMetric {
        /// The expression as given.
        text: String,
        /// The name as written.
        name: String,
        /// Its column (from 1).
        column: u64,
        /// The profile's metric names, comma-separated.
        known: String,
    },
}

/// An operator of an [`Expression`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Metric(MetricId),
    Number(f64),
    Neg(Box<Node>),
    Binary(Op, Box<Node>, Box<Node>),
}

/// An arithmetic expression over the metrics of one profile (ids resolved when parsed).
#[derive(Debug, Clone, PartialEq)]
pub struct Expression {
    root: Node,
    text: String,
}

impl Expression {
    /// Parses `text` against `metrics` (a profile's [`perfscape_model::Profile::metrics`]).
    ///
    /// Errors: [`ExpressionError`] naming the column of what is wrong.
    pub fn parse(text: &str, metrics: &[Metric]) -> Result<Expression, ExpressionError> {
        let syntax = |message: String| ExpressionError::Syntax {
            text: text.to_string(),
            message,
        };
        let mut parser = Parser::new(&GenericDialect {})
            .try_with_sql(text)
            .map_err(|e| syntax(e.to_string()))?;
        let expr = parser.parse_expr().map_err(|e| syntax(e.to_string()))?;
        let next = parser.peek_token();
        if next.token != Token::EOF {
            return Err(syntax(format!(
                "expected the end of the expression, found `{}` at Line: {}, Column: {}",
                next.token, next.span.start.line, next.span.start.column
            )));
        }
        let root = convert(&expr, text, metrics)?;
        Ok(Expression {
            root,
            text: text.trim().to_string(),
        })
    }

    /// The value for one cell: `values[m]` is the cell's value of metric `m`. A division by
    /// zero, a NaN input or a result that is not finite gives NaN (no value).
    pub fn eval(&self, values: &[f64]) -> f64 {
        let v = eval(&self.root, values);
        if v.is_finite() { v } else { f64::NAN }
    }

    /// The metrics the expression reads, in order of first use.
    pub fn metrics(&self) -> Vec<MetricId> {
        let mut out = Vec::new();
        collect(&self.root, &mut out);
        out
    }

    /// How the derived values combine across threads and call paths: [`Combine::Sum`] when the
    /// expression is homogeneous linear (`a - b`, `2 * a`, `a / 1e6`: a sum of values gives the
    /// sum of results) over metrics that all add up; otherwise [`Combine::Mean`] (a ratio such
    /// as instructions per cycle: the mean of the threads' ratios, never their sum).
    pub fn combine(&self, metrics: &[Metric]) -> Combine {
        let additive = self
            .metrics()
            .iter()
            .all(|m| metrics[m.index()].combine == Combine::Sum);
        if additive && degree(&self.root) == Some(1) {
            Combine::Sum
        } else {
            Combine::Mean
        }
    }

    /// The unit of the results, from the metrics' units: a sum or difference of one unit
    /// keeps it, and so does a multiple; a quotient of one unit by itself is `ratio`; other
    /// combinations are named by their units (`B/µs`, `count/cycles`).
    pub fn unit(&self, metrics: &[Metric]) -> Unit {
        match unit_of(&self.root, metrics) {
            U::One => Unit::Other("ratio".into()),
            U::Of(u) => u,
            U::Text(t) => Unit::Other(t),
        }
    }
}

impl fmt::Display for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn unsupported(e: &Expr, text: &str) -> ExpressionError {
    ExpressionError::Unsupported {
        text: text.to_string(),
        what: format!("`{e}`"),
        column: e.span().start.column,
    }
}

fn convert(e: &Expr, text: &str, metrics: &[Metric]) -> Result<Node, ExpressionError> {
    Ok(match e {
        Expr::Identifier(ident) => {
            let id = metrics
                .iter()
                .position(|m| m.name == ident.value)
                .or_else(|| {
                    metrics
                        .iter()
                        .position(|m| m.name.eq_ignore_ascii_case(&ident.value))
                })
                .ok_or_else(|| ExpressionError::UnknownMetric {
                    text: text.to_string(),
                    name: ident.value.clone(),
                    column: ident.span.start.column,
                    known: metrics
                        .iter()
                        .map(|m| m.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
            Node::Metric(MetricId::from(id))
        }
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => match n.parse::<f64>() {
                Ok(x) if x.is_finite() => Node::Number(x),
                _ => return Err(unsupported(e, text)),
            },
            _ => return Err(unsupported(e, text)),
        },
        Expr::Nested(inner) => convert(inner, text, metrics)?,
        Expr::UnaryOp { op, expr } => match op {
            UnaryOperator::Minus => Node::Neg(Box::new(convert(expr, text, metrics)?)),
            UnaryOperator::Plus => convert(expr, text, metrics)?,
            _ => return Err(unsupported(e, text)),
        },
        Expr::BinaryOp { left, op, right } => {
            let op = match op {
                BinaryOperator::Plus => Op::Add,
                BinaryOperator::Minus => Op::Sub,
                BinaryOperator::Multiply => Op::Mul,
                BinaryOperator::Divide => Op::Div,
                _ => return Err(unsupported(e, text)),
            };
            Node::Binary(
                op,
                Box::new(convert(left, text, metrics)?),
                Box::new(convert(right, text, metrics)?),
            )
        }
        _ => return Err(unsupported(e, text)),
    })
}

fn eval(n: &Node, values: &[f64]) -> f64 {
    match n {
        Node::Metric(m) => values.get(m.index()).copied().unwrap_or(f64::NAN),
        Node::Number(x) => *x,
        Node::Neg(a) => -eval(a, values),
        Node::Binary(op, a, b) => {
            let (a, b) = (eval(a, values), eval(b, values));
            match op {
                Op::Add => a + b,
                Op::Sub => a - b,
                Op::Mul => a * b,
                Op::Div if b == 0.0 => f64::NAN,
                Op::Div => a / b,
            }
        }
    }
}

fn collect(n: &Node, out: &mut Vec<MetricId>) {
    match n {
        Node::Metric(m) if !out.contains(m) => out.push(*m),
        Node::Metric(_) | Node::Number(_) => {}
        Node::Neg(a) => collect(a, out),
        Node::Binary(_, a, b) => {
            collect(a, out);
            collect(b, out);
        }
    }
}

/// The degree of `n` as a homogeneous polynomial in the metrics (0 for constants, 1 for
/// `a`, `a - b`, `2 * a`), or `None` when it is not homogeneous of degree 0 or 1 (`a * b`,
/// `a / b`, `a + 1`).
fn degree(n: &Node) -> Option<u8> {
    match n {
        Node::Metric(_) => Some(1),
        Node::Number(_) => Some(0),
        Node::Neg(a) => degree(a),
        Node::Binary(op, a, b) => {
            let (a, b) = (degree(a)?, degree(b)?);
            match op {
                Op::Add | Op::Sub => (a == b).then_some(a),
                Op::Mul => (a + b <= 1).then_some(a + b),
                Op::Div => (b == 0).then_some(a),
            }
        }
    }
}

/// A unit while it is worked out: none (a plain number), a unit of the model, or a name.
#[derive(Debug, Clone, PartialEq)]
enum U {
    One,
    Of(Unit),
    Text(String),
}

impl U {
    fn text(&self) -> String {
        match self {
            U::One => "1".into(),
            U::Of(u) => u.symbol().to_string(),
            U::Text(t) => format!("({t})"),
        }
    }
}

fn unit_of(n: &Node, metrics: &[Metric]) -> U {
    match n {
        Node::Metric(m) => U::Of(metrics[m.index()].unit.clone()),
        Node::Number(_) => U::One,
        Node::Neg(a) => unit_of(a, metrics),
        Node::Binary(op, a, b) => {
            let (a, b) = (unit_of(a, metrics), unit_of(b, metrics));
            match op {
                Op::Add | Op::Sub if a == b => a,
                Op::Add | Op::Sub => U::Text(format!("{} + {}", a.text(), b.text())),
                Op::Mul => match (a, b) {
                    (U::One, x) | (x, U::One) => x,
                    (a, b) => U::Text(format!("{}·{}", a.text(), b.text())),
                },
                Op::Div => match (a, b) {
                    (a, b) if a == b => U::One,
                    (a, U::One) => a,
                    (a, b) => U::Text(format!("{}/{}", a.text(), b.text())),
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metrics() -> Vec<Metric> {
        vec![
            Metric::tau("TIME"),
            Metric::tau("CPU_TIME"),
            Metric::tau("PAPI_TOT_INS"),
            Metric::tau("PAPI_TOT_CYC"),
            Metric::tau("PAPI_NATIVE:L2 miss"),
        ]
    }

    #[test]
    fn evaluates_arithmetic_with_precedence() {
        let m = metrics();
        let e = Expression::parse("TIME - CPU_TIME * 2 / (1 + 1)", &m).unwrap();
        assert_eq!(e.eval(&[10.0, 4.0, 0.0, 0.0, 0.0]), 6.0);
        let e = Expression::parse("-time + \"PAPI_NATIVE:L2 miss\"", &m).unwrap();
        assert_eq!(e.eval(&[10.0, 0.0, 0.0, 0.0, 3.0]), -7.0);
        assert_eq!(e.metrics(), vec![MetricId(0), MetricId(4)]);
        let ipc = Expression::parse("PAPI_TOT_INS / PAPI_TOT_CYC", &m).unwrap();
        assert_eq!(ipc.eval(&[0.0, 0.0, 3.0e9, 2.0e9, 0.0]), 1.5);
        // Division by zero and NaN inputs give no value.
        assert!(ipc.eval(&[0.0, 0.0, 3.0, 0.0, 0.0]).is_nan());
        assert!(ipc.eval(&[0.0, 0.0, 0.0, 0.0, 0.0]).is_nan());
        assert!(ipc.eval(&[0.0, 0.0, f64::NAN, 1.0, 0.0]).is_nan());
        let big = Expression::parse("TIME * 1e308 * 10", &m).unwrap();
        assert!(big.eval(&[1.0, 0.0, 0.0, 0.0, 0.0]).is_nan());
    }

    #[test]
    fn rule_and_unit_follow_the_expression() {
        let m = metrics();
        let p = |t| Expression::parse(t, &m).unwrap();
        assert_eq!(p("TIME - CPU_TIME").combine(&m), Combine::Sum);
        assert_eq!(p("TIME - CPU_TIME").unit(&m), Unit::Microseconds);
        assert_eq!(p("-(TIME / 1e6) * 3").combine(&m), Combine::Sum);
        assert_eq!(p("CPU_TIME / TIME").combine(&m), Combine::Mean);
        assert_eq!(p("CPU_TIME / TIME").unit(&m), Unit::Other("ratio".into()));
        assert_eq!(p("TIME + 1").combine(&m), Combine::Mean);
        assert_eq!(p("TIME * TIME").combine(&m), Combine::Mean);
        assert_eq!(
            p("PAPI_TOT_INS / PAPI_TOT_CYC").unit(&m),
            Unit::Other("count/cycles".into())
        );
        let mut max = metrics();
        max[0] = Metric::tau("TIME").combined_by(Combine::Max);
        assert_eq!(
            Expression::parse("TIME * 2", &max).unwrap().combine(&max),
            Combine::Mean
        );
    }

    #[test]
    fn errors_name_what_and_where() {
        let m = metrics();
        let err = |t| Expression::parse(t, &m).unwrap_err().to_string();
        let e = err("TIME / FLOPS");
        assert!(e.contains("column 8") && e.contains("no metric `FLOPS`"), "{e}");
        assert!(e.contains("TIME, CPU_TIME"), "{e}");
        let e = err("sqrt(TIME)");
        assert!(e.contains("column 1") && e.contains("not allowed"), "{e}");
        let e = err("TIME > 3");
        assert!(e.contains("not allowed"), "{e}");
        let e = err("TIME /");
        assert!(e.contains("is not an expression"), "{e}");
        let e = err("TIME CPU_TIME");
        assert!(
            e.contains("end of the expression") && e.contains("Column: 6"),
            "{e}"
        );
        let e = err("'TIME' / 2");
        assert!(e.contains("not allowed"), "{e}");
        let e = err("");
        assert!(e.contains("is not an expression"), "{e}");
    }
}
