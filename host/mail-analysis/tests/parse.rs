//! `parse` on real-world encodings and layouts, and `parse`/`inspect` on hostile input.

use std::time::{Duration, Instant};

use outreach_mail_analysis::{Kind, inspect, parse};

fn crlf(s: &str) -> Vec<u8> {
    s.replace('\n', "\r\n").into_bytes()
}

#[test]
fn headers_ids_addresses_and_date() {
    let raw = crlf(
        "Received: from mx.example.com by mx.outreach.test; Tue, 4 Nov 2026 09:30:01 +0000\n\
         From: =?ISO-8859-1?Q?J=FCrgen_M=FCller?= <Juergen.Mueller@Example.DE>\n\
         To: Sales <sales@outreach.test>, other@outreach.test\n\
         Subject: =?UTF-8?B?QVc6IEt1cnplIEZyYWdlIHp1bSBWZXJ0cmllYg==?=\n\
         Date: Tue, 4 Nov 2026 10:30:00 +0100\n\
         Message-ID: <reply-1@example.de>\n\
         In-Reply-To: <step-42@outreach.test>\n\
         References: <step-41@outreach.test>\n <step-42@outreach.test>\n\
         X-Mailer: Outlook\n\
         Content-Type: text/plain; charset=utf-8\n\
         \n\
         Gerne, rufen Sie mich an.\n",
    );
    let p = parse(&raw);
    assert_eq!(p.message_id.as_deref(), Some("reply-1@example.de"));
    assert_eq!(p.in_reply_to.as_deref(), Some("step-42@outreach.test"));
    assert_eq!(
        p.references,
        vec!["step-41@outreach.test", "step-42@outreach.test"]
    );
    assert_eq!(p.from_email.as_deref(), Some("juergen.mueller@example.de"));
    assert_eq!(p.from_name.as_deref(), Some("Jürgen Müller"));
    assert_eq!(p.to, vec!["sales@outreach.test", "other@outreach.test"]);
    assert_eq!(p.subject, "AW: Kurze Frage zum Vertrieb");
    assert_eq!(p.date_ms, Some(1_793_784_600_000));
    let names: Vec<&str> = p.headers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "Received",
            "From",
            "To",
            "Subject",
            "Date",
            "Message-ID",
            "In-Reply-To",
            "References",
            "X-Mailer",
            "Content-Type"
        ]
    );
    assert_eq!(p.headers[1].1, "Jürgen Müller <Juergen.Mueller@Example.DE>");
    assert_eq!(p.headers[3].1, "AW: Kurze Frage zum Vertrieb");
    assert_eq!(
        p.headers[7].1,
        "<step-41@outreach.test> <step-42@outreach.test>"
    );
    assert_eq!(p.body_text, "Gerne, rufen Sie mich an.");
}

#[test]
fn quoted_printable_utf8() {
    let raw = crlf(
        "From: a@example.fr\nSubject: RE: Petite question\nContent-Type: text/plain; charset=UTF-8\n\
         Content-Transfer-Encoding: quoted-printable\n\n\
         Tr=C3=A8s int=C3=A9ressant, on peut s'appeler mardi ? Une tr=C3=A8s longue l=\nigne coup=C3=A9e.\n",
    );
    let p = parse(&raw);
    assert_eq!(
        p.body_text,
        "Très intéressant, on peut s'appeler mardi ? Une très longue ligne coupée."
    );
}

#[test]
fn base64_body() {
    // "Sí, me interesa. ¿Hablamos el jueves?"
    let raw = crlf(
        "From: a@example.es\nSubject: RE: Pregunta\nContent-Type: text/plain; charset=utf-8\n\
         Content-Transfer-Encoding: base64\n\nU8OtLCBtZSBpbnRlcmVzYS4gwr9IYWJsYW1vcyBlbCBqdWV2ZXM/\n",
    );
    assert_eq!(
        parse(&raw).body_text,
        "Sí, me interesa. ¿Hablamos el jueves?"
    );
}

#[test]
fn latin1_and_windows_1252() {
    let mut raw = crlf(
        "From: a@example.de\nSubject: x\nContent-Type: text/plain; charset=ISO-8859-1\nContent-Transfer-Encoding: 8bit\n\n",
    );
    raw.extend_from_slice(b"Gr\xfc\xdfe aus K\xf6ln, \xe0 bient\xf4t\r\n");
    assert_eq!(parse(&raw).body_text, "Grüße aus Köln, à bientôt");

    let mut raw = crlf(
        "From: a@example.com\nSubject: x\nContent-Type: text/plain; charset=\"windows-1252\"\n\n",
    );
    raw.extend_from_slice(b"\x93Quoted\x94 \x96 it costs \x80100 \x85\r\n");
    assert_eq!(
        parse(&raw).body_text,
        "\u{201c}Quoted\u{201d} \u{2013} it costs \u{20ac}100 \u{2026}"
    );

    // The same through quoted-printable, the way Outlook sends it.
    let raw = crlf(
        "From: a@example.com\nSubject: x\nContent-Type: text/plain; charset=windows-1252\nContent-Transfer-Encoding: quoted-printable\n\nIt=92s =80100.\n",
    );
    assert_eq!(parse(&raw).body_text, "It\u{2019}s \u{20ac}100.");
}

#[test]
fn multipart_alternative_prefers_plain_text() {
    let raw = crlf(
        "From: a@example.com\nSubject: Re: Quick question\nMIME-Version: 1.0\n\
         Content-Type: multipart/alternative; boundary=\"b1\"\n\n\
         --b1\nContent-Type: text/plain; charset=utf-8\n\nYes, send the deck.\n\n\
         On Tue, Nov 4, 2026 at 10:02 AM Mark <mark@outreach.test> wrote:\n> Hi\n\n\
         --b1\nContent-Type: text/html; charset=utf-8\n\n<div>HTML version</div>\n--b1--\n",
    );
    let p = parse(&raw);
    assert_eq!(p.body_text, "Yes, send the deck.");
    assert!(p.full_text.starts_with("Yes, send the deck.") && p.full_text.contains("> Hi"));
    assert!(!p.full_text.contains("HTML version"));
}

#[test]
fn html_only_reply_is_converted_and_trimmed() {
    let raw = crlf(
        "From: a@example.com\nSubject: Re: Quick question\nContent-Type: text/html; charset=utf-8\n\n\
         <html><head><style>.x{}</style></head><body><div dir=\"ltr\">Let&#39;s talk Thursday.<br>Anna</div>\
         <div class=\"gmail_quote\"><div class=\"gmail_attr\">On Tue, Mark wrote:<br></div>\
         <blockquote>Hi Anna, quick question</blockquote></div></body></html>\n",
    );
    let p = parse(&raw);
    assert_eq!(p.body_text, "Let's talk Thursday.\nAnna");
    assert!(p.full_text.contains("quick question"));
}

#[test]
fn quoted_history_is_trimmed_in_several_languages() {
    let cases = [
        (
            "Klingt gut.\n\nAm Di., 4. Nov. 2026 um 10:02 Uhr schrieb Mark Weber <mark@outreach.test>:\n> Hallo Frau Vogel",
            "Klingt gut.",
        ),
        (
            "Avec plaisir.\n\nLe mar. 4 nov. 2026 à 10:02, Mark Weber <mark@outreach.test> a écrit :\n> Bonjour",
            "Avec plaisir.",
        ),
        (
            "Claro que sí.\n\nEl mar, 4 nov 2026 a las 10:02, Mark Weber (<mark@outreach.test>) escribió:\n> Hola",
            "Claro que sí.",
        ),
        (
            "Volentieri.\n\nIl giorno mar 4 nov 2026 alle ore 10:02 Mark Weber <mark@outreach.test> ha scritto:\n> Ciao",
            "Volentieri.",
        ),
        (
            "Prima.\n\nOp di 4 nov. 2026 om 10:02 schreef Mark Weber <mark@outreach.test>:\n> Hoi",
            "Prima.",
        ),
        (
            "Com certeza.\n\nEm ter., 4 de nov. de 2026 às 10:02, Mark Weber <mark@outreach.test> escreveu:\n> Olá",
            "Com certeza.",
        ),
        (
            "Sure.\n\n-----Original Message-----\nFrom: Mark Weber\nSent: Tuesday\nTo: Anna\nSubject: Quick question\n\nHi",
            "Sure.",
        ),
        (
            "Sure.\n\nFrom: Mark Weber <mark@outreach.test>\nSent: Tuesday, November 4, 2026 10:02 AM\nTo: Anna\nSubject: Quick question",
            "Sure.",
        ),
        (
            "Gerne.\n\nVon: Mark Weber <mark@outreach.test>\nGesendet: Dienstag, 4. November 2026 10:02\nAn: Anna\nBetreff: Kurze Frage",
            "Gerne.",
        ),
        ("Sure.\n-- \nAnna Vogel | CEO | +49 30 1234", "Sure."),
    ];
    for (body, want) in cases {
        let raw = crlf(&format!(
            "From: a@example.com\nSubject: Re: x\nContent-Type: text/plain; charset=utf-8\n\n{body}\n"
        ));
        assert_eq!(parse(&raw).body_text, want, "{body}");
    }
}

#[test]
fn missing_and_broken_fields_do_not_fail() {
    let p = parse(b"");
    assert_eq!(p, Default::default());
    let p = parse(b"no headers at all, just text");
    assert!(p.from_email.is_none());
    let p = parse(b"From: not an address\r\nDate: yesterday-ish\r\nContent-Type: text/plain; charset=x-does-not-exist\r\n\r\nhello\r\n");
    assert_eq!(p.date_ms, None);
    assert_eq!(p.body_text, "hello");
}

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    let spent = start.elapsed();
    println!("{what}: {spent:?}");
    // Generous for debug builds on a slow machine; it catches runaway work.
    assert!(spent < Duration::from_secs(20), "{what} took {spent:?}");
    out
}

fn parse_and_inspect(raw: &[u8]) -> Kind {
    let p = parse(raw);
    inspect(raw, &p).kind
}

#[test]
fn a_5_mb_message_is_capped() {
    let mut raw = crlf(
        "From: a@example.com\nSubject: big\nContent-Type: multipart/mixed; boundary=\"b\"\n\n--b\nContent-Type: text/plain\n\nHello there, let's talk.\n--b\nContent-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n\n",
    );
    let line = b"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0\r\n";
    while raw.len() < 5 * 1024 * 1024 {
        raw.extend_from_slice(line);
    }
    raw.extend_from_slice(b"--b--\r\n");
    let p = timed("5 MB attachment", || parse(&raw));
    assert_eq!(p.body_text, "Hello there, let's talk.");
    assert_eq!(
        timed("5 MB inspect", || inspect(&raw, &p)).kind,
        Kind::Reply
    );

    // 5 MB of text in one part: analysed up to the cap.
    let mut raw = crlf("From: a@example.com\nSubject: big text\n\n");
    while raw.len() < 5 * 1024 * 1024 {
        raw.extend_from_slice(
            b"All work and no play makes Jack a dull boy. 550 5.1.1 user unknown\r\n",
        );
    }
    let p = timed("5 MB text", || parse(&raw));
    assert!(p.full_text.len() <= outreach_mail_analysis::MAX_TEXT_BYTES);
    timed("5 MB text inspect", || inspect(&raw, &p));
    // One 5 MB line without a line break.
    let raw = [
        b"From: a@example.com\r\nSubject: x\r\n\r\n".as_slice(),
        &vec![b'a'; 5 * 1024 * 1024],
    ]
    .concat();
    timed("5 MB line", || parse_and_inspect(&raw));
}

#[test]
fn deep_nesting_does_not_overflow() {
    // 20,000 nested multiparts.
    let mut raw = String::from("From: a@example.com\r\nSubject: nest\r\n");
    for i in 0..20_000 {
        raw.push_str(&format!(
            "Content-Type: multipart/mixed; boundary=\"b{i}\"\r\n\r\n--b{i}\r\n"
        ));
    }
    raw.push_str("Content-Type: text/plain\r\n\r\ndeep\r\n");
    timed("nested multipart", || parse_and_inspect(raw.as_bytes()));

    // 20,000 nested messages.
    let mut raw = String::from("From: a@example.com\r\nSubject: nest\r\n");
    for _ in 0..20_000 {
        raw.push_str(
            "Content-Type: message/rfc822\r\n\r\nFrom: b@example.com\r\nSubject: inner\r\n",
        );
    }
    raw.push_str("Content-Type: text/plain\r\n\r\ndeep\r\n");
    timed("nested message/rfc822", || {
        parse_and_inspect(raw.as_bytes())
    });

    // Nested base64-encoded messages (the parser recurses into those).
    let mut inner = b"From: c@example.com\r\nSubject: core\r\n\r\ncore\r\n".to_vec();
    for _ in 0..6 {
        let enc = base64(&inner);
        inner = format!("From: b@example.com\r\nSubject: layer\r\nContent-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\r\n{enc}\r\n").into_bytes();
    }
    timed("nested base64 messages", || parse_and_inspect(&inner));
}

#[test]
fn header_bomb_is_capped() {
    let mut raw = String::from("From: a@example.com\r\nSubject: bomb\r\n");
    for i in 0..200_000 {
        raw.push_str(&format!("X-Bomb-{i}: {}\r\n", "v".repeat(10)));
    }
    raw.push_str("\r\nhello\r\n");
    let p = timed("header bomb", || parse(raw.as_bytes()));
    assert!(p.headers.len() <= outreach_mail_analysis::MAX_HEADERS);
    timed("header bomb inspect", || inspect(raw.as_bytes(), &p));
    // One enormous folded header.
    let mut raw = String::from("From: a@example.com\r\nSubject: x\r\nX-Long: a");
    for _ in 0..300_000 {
        raw.push_str("\r\n b");
    }
    raw.push_str("\r\n\r\nbody\r\n");
    let p = timed("long header", || parse(raw.as_bytes()));
    assert!(p.headers.iter().all(|(_, v)| v.len() <= 16 * 1024));
}

#[test]
fn garbage_bytes_never_panic() {
    // A deterministic pseudo-random generator, so a failure is reproducible.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let pieces: [&[u8]; 12] = [
        b"Content-Type: multipart/mixed; boundary=x\r\n",
        b"--x\r\n",
        b"Content-Type: message/delivery-status\r\n",
        b"Content-Transfer-Encoding: base64\r\n",
        b"Content-Transfer-Encoding: quoted-printable\r\n",
        b"=?utf-8?q?=C3=?=",
        b"\r\n\r\n",
        b"Final-Recipient: rfc822; <\r\n",
        b"Status: 5.\r\n",
        b"From: <>\r\n",
        b"\xff\xfe\x00\x80",
        b"Content-Type: text/html\r\n\r\n<<<&#x110000;<!--",
    ];
    for round in 0..3000 {
        let mut raw = Vec::new();
        let len = (next() % 4000) as usize;
        while raw.len() < len {
            if next() % 3 == 0 {
                raw.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
            } else {
                raw.push((next() & 0xff) as u8);
            }
        }
        let p = parse(&raw);
        let _ = inspect(&raw, &p);
        if round % 1000 == 0 {
            println!("garbage round {round}");
        }
    }
}

fn base64(data: &[u8]) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for (i, chunk) in data.chunks(3).enumerate() {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for j in 0..4 {
            if j <= chunk.len() {
                out.push(T[((n >> (18 - 6 * j)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
        if i % 19 == 18 {
            out.push_str("\r\n");
        }
    }
    out
}

#[test]
fn return_dates_end_to_end() {
    let day = |y: i64, m: i64, d: i64| {
        // Days since the epoch, computed independently of the crate (python: date(y,m,d).toordinal() - 719163).
        let table = [(2026, 12, 7, 20794), (2005, 5, 5, 12908)];
        table
            .iter()
            .find(|t| (t.0, t.1, t.2) == (y, m, d))
            .map(|t| t.3 * 86_400_000i64)
    };
    let raw = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/corpora/negatives/autoreply-ooo-null-return-path.eml"
    ))
    .unwrap();
    let got = inspect(&raw, &parse(&raw));
    assert_eq!(got.kind, Kind::AutoReply);
    assert_eq!(got.return_date_ms, day(2026, 12, 7));
    // The subject names the date: "Away until May 5" (sent 29 April 2005).
    let raw = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/corpora/sisimai/bsd/rfc3834-01.eml"
    ))
    .unwrap();
    assert_eq!(inspect(&raw, &parse(&raw)).return_date_ms, day(2005, 5, 5));
}
