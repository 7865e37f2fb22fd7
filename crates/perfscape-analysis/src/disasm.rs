//! The assembler of a source line range (PerfVisS's assembler window, seed 000 §2.1.2): the
//! x86-64 instructions an ELF executable's DWARF line table attributes to lines `first..=last`
//! of a source file, each with its line, in address order.
//!
//! Pure over the executable's bytes (the caller reads the file). The line table (`.debug_line`,
//! read with gimli) maps address ranges to (file, line): a row covers the addresses from its
//! own to the next row's of its sequence, as `objdump -l` and `addr2line` read it (of several
//! rows at one address the last one counts). A range is kept when its file has the file name
//! of the one asked for (the run's path is the measured machine's, the executable's the build
//! machine's: they share the name, not the directory) and its line lies in the range. The bytes
//! of each kept range are decoded with iced-x86 and written in AT&T syntax (GNU `as`, as
//! objdump prints them).

use iced_x86::{Decoder, DecoderOptions, Formatter, GasFormatter, Instruction as Decoded};
use object::{Object, ObjectSection};
use std::borrow::Cow;
use std::path::Path;

/// One instruction of a line range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// Its address in the executable.
    pub address: u64,
    /// Its bytes, in hex (`48 8b 05 ...`).
    pub bytes: String,
    /// The instruction in AT&T syntax.
    pub text: String,
    /// The source line the line table attributes it to.
    pub line: u32,
}

/// The instructions of a line range.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Disassembly {
    /// The line table's names of the files that matched (directory and name as compiled).
    pub files: Vec<String>,
    /// The instructions, by address.
    pub instructions: Vec<Instruction>,
}

/// Why no disassembly could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DisasmError {
    /// Not an ELF executable perfscape can read, or not x86-64.
    #[error("{0}")]
    Binary(String),
    /// The executable has no line table (built without `-g`).
    #[error("the executable has no DWARF line table (.debug_line): build it with -g")]
    NoLines,
    /// The DWARF data could not be read.
    #[error("its DWARF data could not be read: {0}")]
    Dwarf(String),
}

impl From<gimli::Error> for DisasmError {
    fn from(e: gimli::Error) -> Self {
        DisasmError::Dwarf(e.to_string())
    }
}

/// An address range of the line table and its line.
struct Span {
    start: u64,
    end: u64,
    line: u32,
}

/// The instructions of lines `first..=last` of the file named `file` in the executable `elf`
/// (see the module documentation).
///
/// # Errors
/// [`DisasmError`]: not an x86-64 ELF file, no line table, unreadable DWARF.
pub fn disassemble_lines(elf: &[u8], file: &str, first: u32, last: u32) -> Result<Disassembly, DisasmError> {
    let obj = object::File::parse(elf)
        .map_err(|e| DisasmError::Binary(format!("not an executable perfscape reads: {e}")))?;
    if obj.architecture() != object::Architecture::X86_64 {
        return Err(DisasmError::Binary(format!(
            "a {:?} executable: only x86-64 is disassembled",
            obj.architecture()
        )));
    }
    if obj.section_by_name(".debug_line").is_none() {
        return Err(DisasmError::NoLines);
    }
    let endian = if obj.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let load = |id: gimli::SectionId| -> Result<Cow<'_, [u8]>, gimli::Error> {
        Ok(match obj.section_by_name(id.name()) {
            Some(s) => s.uncompressed_data().unwrap_or(Cow::Borrowed(&[])),
            None => Cow::Borrowed(&[]),
        })
    };
    let sections = gimli::DwarfSections::load(load)?;
    let dwarf = sections.borrow(|s| gimli::EndianSlice::new(s, endian));
    let want = Path::new(file).file_name();
    let mut files: Vec<String> = Vec::new();
    let mut spans: Vec<Span> = Vec::new();
    let mut units = dwarf.units();
    while let Some(header) = units.next()? {
        let unit = dwarf.unit(header)?;
        let Some(program) = unit.line_program.clone() else {
            continue;
        };
        let mut rows = program.rows();
        // The previous row of the sequence: its address, line, and whether its file matches.
        let mut prev: Option<(u64, u32, bool)> = None;
        while let Some((header, row)) = rows.next_row()? {
            if let Some((start, line, matched)) = prev
                && row.address() > start
                && matched
                && (first..=last).contains(&line)
            {
                spans.push(Span {
                    start,
                    end: row.address(),
                    line,
                });
            }
            if row.end_sequence() {
                prev = None;
                continue;
            }
            let matched = match row.file(header) {
                Some(f) => {
                    let name = dwarf
                        .attr_string(&unit, f.path_name())?
                        .to_string_lossy()
                        .into_owned();
                    let ok = Path::new(&name).file_name() == want;
                    if ok {
                        let dir = match f.directory(header) {
                            Some(d) => dwarf.attr_string(&unit, d)?.to_string_lossy().into_owned(),
                            None => String::new(),
                        };
                        let full = if name.starts_with('/') || dir.is_empty() {
                            name
                        } else {
                            format!("{dir}/{name}")
                        };
                        if !files.contains(&full) {
                            files.push(full);
                        }
                    }
                    ok
                }
                None => false,
            };
            let line = row
                .line()
                .map_or(0, |l| u32::try_from(l.get()).unwrap_or(u32::MAX));
            prev = Some((row.address(), line, matched));
        }
    }
    spans.sort_by_key(|s| (s.start, s.end));
    let mut instructions = Vec::new();
    let mut formatter = GasFormatter::new();
    let mut text = String::new();
    let mut done_to = 0u64;
    for s in &spans {
        let start = s.start.max(done_to);
        if start >= s.end {
            continue;
        }
        let Some(sec) = obj
            .sections()
            .find(|sec| sec.address() <= start && start < sec.address() + sec.size())
        else {
            continue;
        };
        let Ok(data) = sec.data() else { continue };
        let off = (start - sec.address()) as usize;
        let end = ((s.end - sec.address()) as usize).min(data.len());
        if off >= end {
            continue;
        }
        let bytes = &data[off..end];
        let mut decoder = Decoder::with_ip(64, bytes, start, DecoderOptions::NONE);
        let mut ins = Decoded::default();
        while decoder.can_decode() {
            decoder.decode_out(&mut ins);
            text.clear();
            formatter.format(&ins, &mut text);
            let at = (ins.ip() - start) as usize;
            let raw = &bytes[at..(at + ins.len()).min(bytes.len())];
            instructions.push(Instruction {
                address: ins.ip(),
                bytes: raw
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                text: text.clone(),
                line: s.line,
            });
        }
        done_to = s.end;
    }
    Ok(Disassembly { files, instructions })
}
