//! Files of domains, CSV or TSV, read the one way spec/2 "CSV import rules"
//! give: the column named domain, domains, website, url or site, otherwise
//! the first; URLs reduced to the bare domain by the pool's normalisation.
//! `outreach domains import` and `POST /v1/lists/import-csv` both read
//! through here, so a file means the same to both.

use std::io::Read;

use outreach_domain_analysis::domain::normalise;

/// Column names that hold the domain.
pub const DOMAIN_COLUMNS: &[&str] = &["domain", "domains", "website", "url", "site"];

/// The delimiter of a file whose start is `head`: the most frequent of tab,
/// semicolon and comma on its first line outside quotes (a comma when the
/// line has none, a file of one column).
pub fn sniff_delimiter(head: &[u8]) -> u8 {
    let first = head.split(|b| *b == b'\n').next().unwrap_or(&[]);
    let mut counts = [0usize; 3];
    let mut quoted = false;
    for b in first {
        match b {
            b'"' => quoted = !quoted,
            b'\t' if !quoted => counts[0] += 1,
            b';' if !quoted => counts[1] += 1,
            b',' if !quoted => counts[2] += 1,
            _ => {}
        }
    }
    // Ties go to the comma, then the tab.
    let best = [(counts[2], b','), (counts[0], b'\t'), (counts[1], b';')]
        .into_iter()
        .fold((0, b','), |best, c| if c.0 > best.0 { c } else { best });
    best.1
}

/// One record of the file.
#[derive(Debug, PartialEq, Eq)]
pub enum DomainCell {
    /// The header line, or a line with only empty cells.
    Skip,
    Domain(String),
    /// The cell is not a domain the pool accepts.
    Malformed,
}

/// The records of a file, one at a time, with the bytes each took.
pub struct DomainRows<R: Read> {
    reader: csv::Reader<R>,
    /// The domain column, once the first record is read.
    column: Option<usize>,
    at: u64,
}

impl<R: Read> DomainRows<R> {
    /// Reads `input` (quoted cells, doubled quotes and line breaks inside
    /// quotes handled by the `csv` crate; rows may differ in length).
    pub fn new(input: R, delimiter: u8) -> Self {
        let reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .delimiter(delimiter)
            .from_reader(input);
        DomainRows {
            reader,
            column: None,
            at: 0,
        }
    }

    /// The next record and its size in bytes; `None` at the end.
    pub fn next_row(&mut self) -> csv::Result<Option<(u64, DomainCell)>> {
        let mut record = csv::ByteRecord::new();
        if !self.reader.read_byte_record(&mut record)? {
            return Ok(None);
        }
        let end = self.reader.position().byte();
        let bytes = end - self.at;
        self.at = end;
        // Invalid UTF-8 is read lossily: the domain either survives it or
        // is refused by the normalisation. A byte-order mark only ever
        // starts the first cell.
        let cells: Vec<String> = record
            .iter()
            .map(|c| {
                String::from_utf8_lossy(c)
                    .trim_start_matches('\u{feff}')
                    .trim()
                    .to_string()
            })
            .collect();
        Ok(Some((bytes, self.cell(&cells))))
    }

    fn cell(&mut self, cells: &[String]) -> DomainCell {
        if cells.iter().all(|c| c.is_empty()) {
            return DomainCell::Skip;
        }
        if self.column.is_none() {
            let named = cells
                .iter()
                .position(|c| DOMAIN_COLUMNS.contains(&c.to_lowercase().as_str()));
            self.column = Some(named.unwrap_or(0));
            // A header names the column; a first line whose first cell is a
            // domain is data, anything else a header.
            if named.is_some() || normalise(cells.first().map_or("", String::as_str)).is_err() {
                return DomainCell::Skip;
            }
        }
        let cell = cells
            .get(self.column.unwrap_or(0))
            .map_or("", String::as_str);
        match normalise(cell) {
            Ok(d) => DomainCell::Domain(d),
            Err(_) => DomainCell::Malformed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<DomainCell> {
        let mut rows = DomainRows::new(text.as_bytes(), sniff_delimiter(text.as_bytes()));
        let mut out = Vec::new();
        while let Some((_, cell)) = rows.next_row().unwrap() {
            out.push(cell);
        }
        out
    }

    #[test]
    fn the_delimiter_is_the_most_frequent_outside_quotes() {
        assert_eq!(sniff_delimiter(b"name\tdomain\n"), b'\t');
        assert_eq!(sniff_delimiter(b"name;domain;x,y\n"), b';');
        assert_eq!(sniff_delimiter(b"\"a\tb\tc\",domain\n"), b',');
        assert_eq!(sniff_delimiter(b"domain\nacme.com\n"), b',');
    }

    #[test]
    fn the_named_column_wins_and_a_headerless_file_starts_with_data() {
        use DomainCell::*;
        assert_eq!(
            read("\u{feff}Company,Website\nAcme,https://www.acme.com/about\nBad,not a domain\n,\n"),
            vec![Skip, Domain("acme.com".into()), Malformed, Skip]
        );
        assert_eq!(
            read("acme.com\nbeta.io\n"),
            vec![Domain("acme.com".into()), Domain("beta.io".into())]
        );
        assert_eq!(
            read("Name\tNotes\nwww.acme.com\t\"a, b\"\n"),
            vec![Skip, Domain("acme.com".into())]
        );
    }
}
