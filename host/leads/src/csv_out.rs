//! CSV downloads (funnel export, bulk export): written with the `csv`
//! crate, every cell neutralised against formula injection.

use axum::http::header;
use axum::response::{IntoResponse, Response};

use outreach_core::error::ApiResult;

/// A CSV file ready to send as an attachment.
#[derive(Debug)]
pub struct CsvFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

impl IntoResponse for CsvFile {
    fn into_response(self) -> Response {
        (
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{}\"", self.name),
                ),
            ],
            self.bytes,
        )
            .into_response()
    }
}

/// A cell a spreadsheet would run as a formula (it starts with `=`, `+`,
/// `-` or `@`, or with a tab or carriage return that some programs skip
/// before looking) gets a leading apostrophe, which spreadsheets show as
/// text (OWASP "CSV Injection").
pub fn neutralise(cell: &str) -> std::borrow::Cow<'_, str> {
    match cell.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{cell}").into(),
        _ => cell.into(),
    }
}

/// Writes `header` and `rows`, every cell neutralised.
pub fn file(
    name: &str,
    header: &[&str],
    rows: impl IntoIterator<Item = Vec<String>>,
) -> ApiResult<CsvFile> {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(header).map_err(anyhow::Error::from)?;
    for row in rows {
        out.write_record(row.iter().map(|c| neutralise(c).into_owned()))
            .map_err(anyhow::Error::from)?;
    }
    let bytes = out.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(CsvFile {
        name: name.to_string(),
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_are_neutralised_and_others_kept() {
        for cell in ["=1+1", "+33 1 23", "-2", "@SUM(A1)", "\t=x", "\r=x"] {
            assert_eq!(neutralise(cell), format!("'{cell}"));
        }
        for cell in ["acme.com", "", "1-2", "a=b", "'quoted"] {
            assert_eq!(neutralise(cell), cell);
        }
    }

    #[test]
    fn quotes_and_separators_survive_a_round_trip() {
        let f = file(
            "t.csv",
            &["A", "B"],
            [vec!["x, \"y\"\nz".to_string(), "=cmd".to_string()]],
        )
        .unwrap();
        let mut r = csv::Reader::from_reader(&f.bytes[..]);
        let row = r.records().next().unwrap().unwrap();
        assert_eq!(&row[0], "x, \"y\"\nz");
        assert_eq!(&row[1], "'=cmd");
    }
}
