//! A capturing SMTP server for tests (feature `testing`): it speaks enough
//! of RFC 5321 for lettre (EHLO, AUTH PLAIN/LOGIN, MAIL, RCPT, DATA, RSET,
//! NOOP, QUIT), keeps every accepted message, and refuses on purpose what
//! tests ask it to: recipients whose local part starts with `bounce` get
//! 550, those starting with `defer` get 451, and a login with a password
//! other than the expected one gets 535.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// One accepted message.
#[derive(Debug, Clone)]
pub struct Captured {
    pub from: String,
    pub to: Vec<String>,
    /// The message as received (dot-unstuffed), CRLF line ends.
    pub data: String,
}

impl Captured {
    /// The first header `name` (case-insensitive), unfolded.
    pub fn header(&self, name: &str) -> Option<String> {
        let head = self.data.split("\r\n\r\n").next()?;
        let mut value: Option<String> = None;
        for line in head.split("\r\n") {
            if let Some(v) = value.as_mut() {
                if line.starts_with([' ', '\t']) {
                    v.push(' ');
                    v.push_str(line.trim());
                    continue;
                }
                break;
            }
            if let Some((n, v)) = line.split_once(':')
                && n.eq_ignore_ascii_case(name)
            {
                value = Some(v.trim().to_owned());
            }
        }
        value
    }
}

#[derive(Clone)]
pub struct CaptureServer {
    pub port: u16,
    pub messages: Arc<Mutex<Vec<Captured>>>,
    /// The password AUTH accepts (any username).
    pub password: Arc<Mutex<String>>,
    /// How long each message's final answer waits (a slow receiver).
    pub delay: Arc<Mutex<std::time::Duration>>,
}

impl CaptureServer {
    /// Listens on 127.0.0.1 and a free port, accepting the password `password`.
    pub async fn start(password: &str) -> CaptureServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let server = CaptureServer {
            port: listener.local_addr().expect("addr").port(),
            messages: Arc::default(),
            password: Arc::new(Mutex::new(password.to_owned())),
            delay: Arc::default(),
        };
        let s = server.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let s = s.clone();
                tokio::spawn(async move {
                    let _ = session(socket, s).await;
                });
            }
        });
        server
    }

    pub fn messages(&self) -> Vec<Captured> {
        self.messages.lock().expect("lock").clone()
    }

    pub fn set_delay(&self, delay: std::time::Duration) {
        *self.delay.lock().expect("lock") = delay;
    }

    pub fn set_password(&self, password: &str) {
        *self.password.lock().expect("lock") = password.to_owned();
    }
}

fn plain_password(b64: &str) -> String {
    use base64::Engine;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&raw).into_owned();
    text.rsplit('\0').next().unwrap_or_default().to_owned()
}

async fn session(socket: tokio::net::TcpStream, s: CaptureServer) -> std::io::Result<()> {
    let (read, mut write) = socket.into_split();
    let mut lines = BufReader::new(read);
    write.write_all(b"220 capture ESMTP\r\n").await?;
    let (mut from, mut to) = (String::new(), Vec::new());
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let cmd = line.trim_end().to_owned();
        let upper = cmd.to_ascii_uppercase();
        let reply: String = if upper.starts_with("EHLO") || upper.starts_with("HELO") {
            "250-capture\r\n250-AUTH PLAIN LOGIN\r\n250-8BITMIME\r\n250 SMTPUTF8".into()
        } else if upper.starts_with("AUTH PLAIN") {
            let given = match cmd.split_whitespace().nth(2) {
                Some(b64) => plain_password(b64),
                None => {
                    write.write_all(b"334 \r\n").await?;
                    line.clear();
                    lines.read_line(&mut line).await?;
                    plain_password(&line)
                }
            };
            if given == *s.password.lock().expect("lock") {
                "235 2.7.0 Authentication successful".into()
            } else {
                "535 5.7.8 Authentication credentials invalid".into()
            }
        } else if upper.starts_with("MAIL FROM:") {
            from = cmd[10..].trim().trim_matches(['<', '>']).to_owned();
            to.clear();
            "250 2.1.0 Ok".into()
        } else if upper.starts_with("RCPT TO:") {
            let addr = cmd[8..]
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .trim_matches(['<', '>'])
                .to_owned();
            if addr.starts_with("bounce") {
                "550 5.1.1 User unknown".into()
            } else if addr.starts_with("defer") {
                "451 4.3.0 Try again later".into()
            } else {
                to.push(addr);
                "250 2.1.5 Ok".into()
            }
        } else if upper == "DATA" {
            write
                .write_all(b"354 End data with <CR><LF>.<CR><LF>\r\n")
                .await?;
            let mut data = String::new();
            loop {
                line.clear();
                if lines.read_line(&mut line).await? == 0 {
                    return Ok(());
                }
                if line == ".\r\n" || line == ".\n" {
                    break;
                }
                let l = line.strip_prefix('.').unwrap_or(&line);
                data.push_str(l);
            }
            let delay = *s.delay.lock().expect("lock");
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            s.messages.lock().expect("lock").push(Captured {
                from: from.clone(),
                to: std::mem::take(&mut to),
                data,
            });
            "250 2.0.0 Ok: queued".into()
        } else if upper == "QUIT" {
            write.write_all(b"221 2.0.0 Bye\r\n").await?;
            return Ok(());
        } else if upper.starts_with("RSET") || upper.starts_with("NOOP") {
            "250 2.0.0 Ok".into()
        } else {
            "502 5.5.2 Command not recognized".into()
        };
        write.write_all(reply.as_bytes()).await?;
        write.write_all(b"\r\n").await?;
    }
}
