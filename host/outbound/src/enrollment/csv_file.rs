//! The file of `enroll-csv`: CSV or TSV with a header row. One column holds
//! the address (named email, e-mail, email_address or contact_email), an
//! optional `domain` column the company domain, and every other non-empty
//! cell goes into the contact's metadata under its header.

use serde_json::{Map, Value};

use super::service::Candidate;

/// The largest file accepted.
pub const MAX_FILE_BYTES: usize = 5 * 1024 * 1024;

const EMAIL_HEADERS: [&str; 4] = ["email", "e-mail", "email_address", "contact_email"];

/// The contacts of the file, in file order, and how many data rows it had.
#[derive(Debug)]
pub struct CsvContacts {
    pub contacts: Vec<Candidate>,
    pub total_in_file: u64,
}

/// Tab-separated when the header line has more tabs than commas.
fn delimiter(bytes: &[u8]) -> u8 {
    let header = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    let count = |c: u8| header.iter().filter(|b| **b == c).count();
    if count(b'\t') > count(b',') {
        b'\t'
    } else {
        b','
    }
}

/// Parses the file; the error is the 400 detail.
pub fn parse(bytes: &[u8]) -> Result<CsvContacts, String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter(bytes))
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| format!("The file is not valid CSV: {e}"))?
        .iter()
        .map(|h| h.trim().to_owned())
        .collect();
    let find = |names: &[&str]| {
        headers
            .iter()
            .position(|h| names.contains(&h.to_ascii_lowercase().as_str()))
    };
    let email_col = find(&EMAIL_HEADERS).ok_or_else(|| {
        format!(
            "The file has no email column (a header named {})",
            EMAIL_HEADERS.join(", ")
        )
    })?;
    let domain_col = find(&["domain"]);
    let mut contacts = Vec::new();
    let mut total = 0;
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(format!("The file is not valid CSV: {e}")),
        }
        if record.iter().all(str::is_empty) {
            continue;
        }
        total += 1;
        let mut metadata = Map::new();
        for (i, cell) in record.iter().enumerate() {
            if i == email_col || Some(i) == domain_col || cell.is_empty() {
                continue;
            }
            if let Some(h) = headers.get(i).filter(|h| !h.is_empty()) {
                metadata.insert(h.clone(), Value::String(cell.to_owned()));
            }
        }
        contacts.push(Candidate {
            original: record.get(email_col).unwrap_or_default().to_owned(),
            domain: domain_col.and_then(|i| record.get(i)).map(str::to_owned),
            metadata: Value::Object(metadata).to_string(),
        });
    }
    Ok(CsvContacts {
        contacts,
        total_in_file: total,
    })
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn columns_are_found_by_name_and_the_rest_is_metadata() {
        let file = "\u{feff}First Name,E-Mail,Domain,Title\n\
                    Jane,jane@acme.com,acme.com,\"CTO, EU\"\n\
                    \n\
                    Joe,joe@beta.io\n";
        let c = parse(file.as_bytes()).unwrap();
        assert_eq!(c.total_in_file, 2);
        assert_eq!(c.contacts[0].original, "jane@acme.com");
        assert_eq!(c.contacts[0].domain.as_deref(), Some("acme.com"));
        assert_eq!(
            c.contacts[0].metadata,
            r#"{"First Name":"Jane","Title":"CTO, EU"}"#
        );
        assert_eq!(c.contacts[1].domain, None);
    }

    #[test]
    fn tab_separated_files_and_other_email_headers() {
        let c = parse(b"contact_email\tcompany\nann@x.com\tX Corp\n").unwrap();
        assert_eq!(c.contacts[0].original, "ann@x.com");
        assert_eq!(c.contacts[0].metadata, r#"{"company":"X Corp"}"#);
        let c = parse(b"Email_Address\nann@x.com\n").unwrap();
        assert_eq!(c.total_in_file, 1);
    }

    #[test]
    fn a_file_without_an_email_column_is_refused() {
        let e = parse(b"name,domain\nJane,acme.com\n").unwrap_err();
        assert!(e.contains("no email column"), "{e}");
    }
}
