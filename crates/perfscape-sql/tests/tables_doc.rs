//! TABLES.md documents exactly the columns of every table, in schema order, with their types.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_sql::Table;
use std::path::Path;

#[test]
fn tables_md_lists_every_column() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../TABLES.md")).unwrap();
    for t in Table::ALL {
        let head = format!("\n## {}\n", t.name());
        let start = text
            .find(&head)
            .unwrap_or_else(|| panic!("TABLES.md has no section `## {}`", t.name()));
        let section = &text[start + head.len()..];
        let section = &section[..section.find("\n## ").unwrap_or(section.len())];
        let documented: Vec<(String, String)> = section
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| column") && !l.starts_with("|---"))
            .map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                (cells[1].to_string(), cells[2].to_string())
            })
            .collect();
        let schema = t.schema();
        let actual: Vec<(String, String)> = schema
            .fields()
            .iter()
            .map(|f| {
                let ty = f.data_type().to_string();
                (
                    f.name().clone(),
                    if f.is_nullable() {
                        format!("{ty}, nullable")
                    } else {
                        ty
                    },
                )
            })
            .collect();
        assert_eq!(documented, actual, "TABLES.md section {}", t.name());
    }
}
