//! Finds the new text of a reply: cuts the quoted history (attribution lines in
//! several languages, "Original Message" separators, Outlook header blocks, `>`
//! lines) and the signature (`-- ` and "Sent from my phone" lines).

use crate::util::regex;

/// The new text of a reply. Sign-offs such as "Best, Anna" are kept; they are part
/// of what the sender wrote and harmless to classification.
pub(crate) fn trim(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let lines: Vec<&str> = text.lines().collect();
    let mut end = history_start(&lines).unwrap_or(lines.len());
    // A rule line right above the history ("_____" in Outlook) belongs to it.
    while end > 0
        && lines[end - 1]
            .trim()
            .chars()
            .all(|c| matches!(c, '_' | '-' | '=' | '*' | ' ' | '\t'))
    {
        end -= 1;
    }
    let mut kept: Vec<&str> = Vec::with_capacity(end);
    for line in &lines[..end] {
        let t = line.trim_end();
        if t == "--" || t == "-- " || line.trim() == "--" || line.trim() == "__" {
            break;
        }
        if is_quoted(line) || is_mobile_footer(t) {
            continue;
        }
        kept.push(t);
    }
    // Blank-line runs collapsed, edges trimmed.
    let mut out = String::new();
    let mut blank = false;
    for line in kept {
        if line.trim().is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push('\n');
            blank = false;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line);
    }
    out
}

fn is_quoted(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with('>') || t.starts_with("|>")
}

fn is_mobile_footer(line: &str) -> bool {
    regex!(
        r"(?i)^\s*(sent from my \w+|sent from (outlook|yahoo mail|mail) for \w+|get outlook for \w+|sent from my iphone|von meinem \w+ gesendet|gesendet von meinem \w+|envoy[ée] de mon \w+|enviado desde mi \w+|inviato da(l mio)? \w+|verzonden (vanaf|met) (mijn )?\w+|enviado do meu \w+|enviado de meu \w+)\b.{0,40}$"
    )
    .is_match(line)
}

/// Index of the first line of the quoted history, if any.
fn history_start(lines: &[&str]) -> Option<usize> {
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if is_separator(t) || is_outlook_block(lines, i) {
            return Some(i);
        }
        // An attribution may wrap onto the next lines; the history starts here either way.
        if is_attribution(lines, i) {
            return Some(i);
        }
    }
    None
}

/// "-----Original Message-----" and its translations, forwarded-message markers,
/// and the bare underscore rule Outlook puts above its header block.
fn is_separator(t: &str) -> bool {
    regex!(
        r"(?i)^[-_=*\s]*(original message|ursprüngliche nachricht|originalnachricht|message d'origine|message original|mensaje original|messaggio originale|oorspronkelijk bericht|origineel bericht|mensagem original|forwarded message|weitergeleitete nachricht|message transféré|mensaje reenviado|messaggio inoltrato|doorgestuurd bericht|mensagem encaminhada|reply message|antwort nachricht)[-_=*\s]*:?$"
    )
    .is_match(t)
        || regex!(r"(?i)^(begin forwarded message|anfang der weitergeleiteten nachricht|début du message réexpédié|inicio del mensaje reenviado):").is_match(t)
}

/// An Outlook-style header block: a "From:" line followed within a few lines by
/// "Sent:"/"Date:" and "To:"/"Subject:" (and their translations).
fn is_outlook_block(lines: &[&str], i: usize) -> bool {
    let from = regex!(r"(?i)^\*?(from|von|de|da|van|från|fra|od|от)\s?\*?:");
    let when = regex!(
        r"(?i)^\*?(sent|date|gesendet|datum|envoyé|date d'envoi|enviado|enviado el|fecha|inviato|data|verzonden|verstuurd|enviada em|skickat|sendt|wysłano|отправлено)\s?\*?:"
    );
    let to_subj = regex!(
        r"(?i)^\*?(to|subject|an|betreff|à|a|objet|para|asunto|oggetto|aan|onderwerp|assunto|till|ämne|til|emne|do|temat|кому|тема)\s?\*?:"
    );
    let first = lines[i].trim().trim_start_matches(['_', '-', ' ']);
    if !from.is_match(first) {
        return false;
    }
    let next: Vec<&str> = lines[i + 1..]
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .take(4)
        .collect();
    next.iter().any(|l| when.is_match(l)) && next.iter().any(|l| to_subj.is_match(l))
}

/// An attribution line ("On <date>, <name> wrote:" and its translations), which
/// may wrap onto up to two further lines.
fn is_attribution(lines: &[&str], i: usize) -> bool {
    let starts = regex!(r"(?i)^(on|am|le|el|il|op|em|den|dne|w dniu|в|il giorno|el día)\b");
    let verb = regex!(
        r"(?i)\b(wrote|writes|schrieb|schreef|a écrit|a ecrit|escribió|escribio|ha scritto|scrisse|escreveu|skrev|kirjoitti|napisał|napisała|napsal|написал|написала|yazdı)\b"
    );
    let ends = |s: &str| verb.is_match(s) && s.trim_end().ends_with(':');
    let first = lines[i].trim();
    if !starts.is_match(first) && !first.contains('@') {
        // Not an attribution unless it also ends like one and is followed by quotes.
        return ends(first) && first.len() < 200 && next_is_quote(lines, i + 1);
    }
    let mut joined = String::new();
    for (n, line) in lines[i..].iter().take(3).enumerate() {
        // A wrapped attribution never spans a blank line or a finished sentence.
        if n > 0 && (line.trim().is_empty() || joined.ends_with(['.', '!', '?'])) {
            return false;
        }
        if !joined.is_empty() {
            joined.push(' ');
        }
        joined.push_str(line.trim());
        if joined.len() > 300 {
            return false;
        }
        if ends(&joined) {
            return true;
        }
    }
    false
}

fn next_is_quote(lines: &[&str], from: usize) -> bool {
    lines[from.min(lines.len())..]
        .iter()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| is_quoted(l))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_gmail_attribution_wrapped() {
        let t = "Sounds good, call me.\n\nOn Tue, Nov 4, 2026 at 10:02 AM Mark Weber <\nmark@example.com> wrote:\n> Hi Anna,\n> quick question";
        assert_eq!(trim(t), "Sounds good, call me.");
    }

    #[test]
    fn languages() {
        let cases = [
            "Gerne.\n\nAm 04.11.2026 um 10:02 schrieb Mark Weber <mark@example.com>:\n> Hallo",
            "Gerne.\n\nLe mar. 4 nov. 2026 à 10:02, Mark Weber <mark@example.com> a écrit :\n> Bonjour",
            "Gerne.\n\nEl mar, 4 nov 2026 a las 10:02, Mark Weber (<mark@example.com>) escribió:\n> Hola",
            "Gerne.\n\nIl giorno mar 4 nov 2026 alle ore 10:02 Mark Weber <mark@example.com> ha scritto:\n> Ciao",
            "Gerne.\n\nOp di 4 nov. 2026 om 10:02 schreef Mark Weber <mark@example.com>:\n> Hoi",
            "Gerne.\n\nEm ter., 4 de nov. de 2026 às 10:02, Mark Weber <mark@example.com> escreveu:\n> Olá",
            "Gerne.\n\n-----Ursprüngliche Nachricht-----\nVon: Mark\nGesendet: Dienstag\nAn: Anna\nBetreff: Frage",
            "Gerne.\n\n-----Original Message-----\nFrom: Mark",
            "Gerne.\n\n________________________________\nFrom: Mark Weber <mark@example.com>\nSent: Tuesday, November 4, 2026 10:02 AM\nTo: Anna\nSubject: Quick question",
            "Gerne.\n\nDe : Mark Weber <mark@example.com>\nEnvoyé : mardi 4 novembre 2026 10:02\nÀ : Anna\nObjet : Question",
            "Gerne.\n-- \nAnna Schmidt\nCEO",
            "Gerne.\n\nSent from my iPhone",
            "Gerne.\n\nVon meinem iPhone gesendet",
        ];
        for c in cases {
            assert_eq!(trim(c), "Gerne.", "{c}");
        }
    }

    #[test]
    fn keeps_interleaved_answers_and_plain_text() {
        let t = "> Would Tuesday work?\nYes, Tuesday works.\n> And pricing?\nSend it over.";
        assert_eq!(trim(t), "Yes, Tuesday works.\nSend it over.");
        let plain = "On second thought, let's talk next week.\nThanks!";
        assert_eq!(trim(plain), plain);
        // A sentence starting like an attribution, right above a real one.
        let t = "Op dit moment niet.\n\nOp di 3 nov. 2026 om 09:00 schreef Mark <m@x.nl>:\n> Hoi";
        assert_eq!(trim(t), "Op dit moment niet.");
    }
}
