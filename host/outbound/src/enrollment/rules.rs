//! Rule 1 of spec/1 "Enroll rules": the address must parse (RFC 5322, the
//! `email_address` crate through the suppression list's parser) and must
//! not be role-based.

use crate::suppression::address;

/// Local parts that name a function rather than a person. Mail to them
/// reaches a shared inbox or nobody, hurts reputation, and is what spam
/// filters look for in cold outreach. Compared case-insensitively, ignoring
/// a `+tag`.
pub const ROLE_LOCAL_PARTS: [&str; 40] = [
    "abuse",
    "accounting",
    "accounts",
    "admin",
    "administrator",
    "billing",
    "careers",
    "contact",
    "customerservice",
    "do-not-reply",
    "donotreply",
    "enquiries",
    "feedback",
    "finance",
    "hello",
    "help",
    "hostmaster",
    "hr",
    "info",
    "inquiries",
    "jobs",
    "legal",
    "mailer-daemon",
    "marketing",
    "media",
    "newsletter",
    "no-reply",
    "noreply",
    "office",
    "postmaster",
    "press",
    "privacy",
    "root",
    "sales",
    "security",
    "service",
    "support",
    "team",
    "webmaster",
    "hi",
];

/// A checked address: lowercased, and its domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    pub email: String,
    pub domain: String,
}

/// The checked address, or `None` when malformed or role-based.
pub fn check(raw: &str) -> Option<Address> {
    let target = address::parse_address(raw)?;
    let local = target.email.split('@').next().unwrap_or_default();
    let base = local.split('+').next().unwrap_or(local);
    if ROLE_LOCAL_PARTS.contains(&base) {
        return None;
    }
    Some(Address {
        email: target.email,
        domain: target.domain,
    })
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn people_pass_and_roles_and_malformed_addresses_do_not() {
        assert_eq!(
            check(" Jane.Doe@Acme.com ").unwrap().email,
            "jane.doe@acme.com"
        );
        assert_eq!(check("jane+x@acme.com").unwrap().domain, "acme.com");
        assert!(check("information@acme.com").is_some());
        for bad in [
            "info@acme.com",
            "Sales@acme.com",
            "admin+eu@acme.com",
            "noreply@acme.com",
            "no-reply@acme.com",
            "@acme.com",
            "jane",
            "jane@localhost",
            "",
        ] {
            assert!(check(bad).is_none(), "{bad}");
        }
    }
}
