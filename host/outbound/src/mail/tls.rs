//! TLS over a socket the outbound policy opened: implicit TLS for SMTP
//! (`ssl`) and IMAP port 993, and IMAP's STARTTLS upgrade. lettre's own
//! STARTTLS needs none of this, but it cannot start TLS on a stream it did
//! not open, so implicit TLS wraps the stream here before lettre sees it.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use lettre::transport::smtp::client::AsyncTokioStream;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// One client configuration for the process: Mozilla's roots and the ring
/// provider named explicitly, so it never depends on a process-wide default
/// provider having been installed.
fn config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .expect("ring supports the default protocol versions")
                .with_root_certificates(roots)
                .with_no_client_auth();
            Arc::new(config)
        })
        .clone()
}

/// Runs the TLS handshake on `tcp`, verifying the certificate for `host`
/// (also sent as SNI; an IP literal is checked against the certificate's
/// IP addresses). The error text is the reason to show the customer.
pub(crate) async fn handshake(tcp: TcpStream, host: &str) -> Result<TlsStream<TcpStream>, String> {
    let bare = host.trim().trim_start_matches('[').trim_end_matches(']');
    let name = ServerName::try_from(bare.to_owned())
        .map_err(|e| format!("{host} is not a valid TLS server name: {e}"))?;
    TlsConnector::from(config())
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS handshake with {host} failed: {e}"))
}

/// A connection that is plain or TLS, so the IMAP client keeps one type across
/// STARTTLS, and lettre can be handed an implicit-TLS stream it did not open.
#[derive(Debug)]
pub(crate) enum MailStream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for MailStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            MailStream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            MailStream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for MailStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            MailStream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            MailStream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            MailStream::Plain(s) => Pin::new(s).poll_flush(cx),
            MailStream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            MailStream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            MailStream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

impl AsyncTokioStream for MailStream {
    fn peer_addr(&self) -> io::Result<SocketAddr> {
        match self {
            MailStream::Plain(s) => s.peer_addr(),
            MailStream::Tls(s) => s.get_ref().0.peer_addr(),
        }
    }
}
