//! The assembler view: the instructions of a source line range (see [`crate::disasm`]) with
//! each line's heat in the run (the run has per-line values; no profile perfscape reads keeps
//! per-instruction ones yet).

use crate::disasm::disassemble_lines;
use crate::error::ViewError;
use crate::lines::{TableFile, line_summary, line_values};
use crate::params::Values;
use perfscape_model::Profile;
use serde::Serialize;

/// Most lines one request may span.
pub const MAX_DISASM_LINES: u32 = 2000;

/// One instruction.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InstructionJson {
    /// Address, in hex.
    pub address: String,
    /// Its bytes, in hex.
    pub bytes: String,
    /// The instruction (AT&T syntax).
    pub text: String,
    /// Its source line.
    pub line: u32,
    /// The line's total across threads in the run (the metric's rule); `null` without samples.
    pub line_total: Option<f64>,
}

/// `GET /api/disasm`: the instructions of lines `first..=last` of a file.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DisasmResponse {
    /// The file, as the run names it.
    pub file: String,
    /// First line.
    pub first: u32,
    /// Last line.
    pub last: u32,
    /// The executable read.
    pub binary: String,
    /// The line table's names of the matching files.
    pub files: Vec<String>,
    /// The instructions, by address.
    pub instructions: Vec<InstructionJson>,
    /// Unit of `line_total`.
    pub unit: String,
}

/// The assembler of lines `first..=last` of `file` in the executable `elf` (read by the caller
/// from `binary`).
///
/// # Errors
/// [`ViewError::Invalid`] for a range that is empty, starts at 0 or spans more than
/// [`MAX_DISASM_LINES`], or an executable that cannot be disassembled (named with why).
pub fn disasm_view(
    profile: &Profile,
    file: &TableFile,
    binary: &str,
    elf: &[u8],
    first: u32,
    last: u32,
    values: Values,
) -> Result<DisasmResponse, ViewError> {
    if first == 0 || last < first || last - first >= MAX_DISASM_LINES {
        return Err(ViewError::invalid(format!(
            "lines {first}-{last}: expected 1 <= first <= last, at most {MAX_DISASM_LINES} lines"
        )));
    }
    let d = disassemble_lines(elf, &file.name, first, last)
        .map_err(|e| ViewError::invalid(format!("{binary}: {e}")))?;
    let total = |line: u32| -> Option<f64> {
        let l = file.line(line)?;
        let s = line_summary(profile, &line_values(profile, &l.events, values), values);
        (s.threads > 0 && s.total.is_finite()).then_some(s.total)
    };
    Ok(DisasmResponse {
        file: file.name.clone(),
        first,
        last,
        binary: binary.to_string(),
        files: d.files,
        instructions: d
            .instructions
            .into_iter()
            .map(|i| InstructionJson {
                address: format!("{:x}", i.address),
                line_total: total(i.line),
                bytes: i.bytes,
                text: i.text,
                line: i.line,
            })
            .collect(),
        unit: values.unit(profile.metrics()),
    })
}
