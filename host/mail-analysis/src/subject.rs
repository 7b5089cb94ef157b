//! Subject normalisation and the thread key of spec/1 ("stable hash joining
//! replies, keyed on sender and subject").

use sha2::{Digest, Sha256};

use crate::util::regex;

/// Reduces a subject to what stays the same across a conversation, so a reply
/// ("Re:", "AW:", "SV:"...) and the message it answers land in one thread.
///
/// Strips any run of reply and forward prefixes in the common languages (`Re`,
/// `Fwd`, `Fw`, `AW`, `WG`, `SV`, `VS`, `TR`, `RV`, `RES`, `ENC`, `Antw`, `Odp`,
/// `R`, `Rif`, `I`, `Doorst`, `Vs`, `Réf`, `Ynt`, `Πρθ`, `回复`, `转发`, ...,
/// also with counters like `Re[2]:` or `Re^3:`), and Exchange's auto-reply
/// prefixes (`Automatic reply:`, `Out of Office:`, `Abwesenheitsnotiz:`...);
/// keeps `[tags]`; collapses whitespace; lowercases.
pub fn normalise_subject(subject: &str) -> String {
    strip_subject_prefixes(subject)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The subject without its reply, forward and auto-reply prefixes, case and
/// inner spacing kept: what an inbox shows as a conversation's subject.
pub fn strip_subject_prefixes(subject: &str) -> &str {
    let prefix = regex!(
        r"(?i)^\s*(re|r|rif|i|aw|antw|antwort|wg|fw|fwd|fwd?\.?|tr|trans|sv|vs|vb|rv|res|enc|odp|pd|doorst|ynt|iltr|réf|ref|πρθ|σχετ|на|回复|回覆|转发|轉寄|答复|automatic reply|auto reply|autoreply|auto-reply|out of office|out of the office|abwesenheitsnotiz|automatische antwort|réponse automatique|respuesta automática|risposta automatica|automatisch antwoord|resposta automática)\s*(\[\d+\]|\^\d+|\(\d+\))?\s*[:：]\s*"
    );
    let mut s = subject.trim();
    // Bounded: each pass removes at least one character.
    while let Some(m) = prefix.find(s) {
        if m.end() == 0 {
            break;
        }
        s = &s[m.end()..];
    }
    s.trim_end()
}

/// The stable thread key of spec/1: the first 32 hex characters of
/// SHA-256(lowercased, trimmed sender address + "\n" + [`normalise_subject`]), so
/// a conversation that moves between send accounts stays one thread.
pub fn thread_id(sender_email: &str, subject: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(sender_email.trim().to_lowercase().as_bytes());
    hasher.update(b"\n");
    hasher.update(normalise_subject(subject).as_bytes());
    let mut hex = hex::encode(hasher.finalize());
    hex.truncate(32);
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_prefix_runs_in_many_languages() {
        let cases = [
            ("Re: Quick question", "quick question"),
            ("RE: RE: Fwd: Quick  question", "quick question"),
            ("AW: WG: Kurze Frage", "kurze frage"),
            ("SV: VS: Hej", "hej"),
            ("TR: RE: Petite question", "petite question"),
            ("RV: Una pregunta", "una pregunta"),
            ("R: I: Domanda", "domanda"),
            ("Antw: Korte vraag", "korte vraag"),
            ("Odp: Pytanie", "pytanie"),
            ("Re[2]: Re^3: hello", "hello"),
            ("Re : FW : hello", "hello"),
            ("Fwd: [Acme] Pricing", "[acme] pricing"),
            ("[Acme] Re: Pricing", "[acme] re: pricing"),
            ("Automatic reply: Quick question", "quick question"),
            ("Réponse automatique : Petite question", "petite question"),
            ("  Quick\tquestion  ", "quick question"),
            ("Re:", ""),
            ("Regarding our call", "regarding our call"),
            ("Antwort: Frage", "frage"),
        ];
        for (input, want) in cases {
            assert_eq!(normalise_subject(input), want, "{input}");
        }
    }

    #[test]
    fn thread_id_is_stable_and_ignores_prefixes_and_case() {
        let a = thread_id("Anna@Example.com", "Quick question");
        assert_eq!(
            a,
            thread_id("anna@example.com ", "RE: AW: quick   QUESTION")
        );
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, thread_id("bob@example.com", "Quick question"));
        // Pinned: the key is stored in the database, so it must never drift.
        assert_eq!(
            thread_id("anna@example.com", "Quick question"),
            "e14698a4677dd8f9aa9ad60f7476f5c4"
        );
    }
}
