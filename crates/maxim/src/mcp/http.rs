//! The memory over streamable HTTP (feature `mcp-http`): [`HttpListener`] binds a loopback
//! address, [`serve_http`] serves the same tools there with rmcp's streamable HTTP service
//! (at [`MCP_PATH`]) until its shutdown future resolves, then ends the session exactly as
//! [`serve_stdio`](super::serve_stdio) does.
//!
//! The server has no authentication: any process on the machine that can reach the port can
//! read and write the memory. So it listens on a loopback address only ([`loopback_address`]
//! refuses any other), rmcp checks the `Host` header against the loopback names (a DNS
//! rebinding page cannot reach it) and a browser's `Origin` must be a loopback one.
//!
//! One hub serves every HTTP session: each session gets a clone of one [`MaximServer`], whose
//! tool calls lock the one [`SharedHub`](crate::SharedHub) in turn, so writes from several
//! clients interleave call by call and every write carries the server's source, trust and
//! partition, as over stdio.

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::server::run_session;
use super::{MAX_LINE_BYTES, MaximServer, McpConfig, ServeError};
use crate::hub::{MemoryHub, SessionReport};

/// The path the server answers MCP on; any other path gets `404`.
pub const MCP_PATH: &str = "/mcp";
/// How long open connections get to finish their replies once shutdown starts.
const GRACE: Duration = Duration::from_secs(5);
/// How long a client may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

type Service = StreamableHttpService<MaximServer, LocalSessionManager>;
type Body = BoxBody<Bytes, Infallible>;

/// The socket address `text` names, if it is a loopback one: an IP address and port
/// (`127.0.0.1:8848`, `[::1]:8848`) or `localhost:PORT` (as `127.0.0.1`). Port 0 lets the
/// system pick a free port.
///
/// Errors: [`ServeError::Address`] for text that is neither, [`ServeError::NotLoopback`] for
/// any other address (`0.0.0.0`, a LAN address): the server has no authentication.
///
/// ```
/// use maxim::mcp::loopback_address;
///
/// assert_eq!(loopback_address("localhost:8848")?.to_string(), "127.0.0.1:8848");
/// assert!(loopback_address("[::1]:0")?.ip().is_loopback());
/// assert!(loopback_address("0.0.0.0:8848").is_err());
/// # Ok::<(), maxim::mcp::ServeError>(())
/// ```
pub fn loopback_address(text: &str) -> Result<SocketAddr, ServeError> {
    let text = text.trim();
    let addr = if let Ok(addr) = text.parse::<SocketAddr>() {
        addr
    } else {
        let bad = || ServeError::Address(text.to_owned());
        let (host, port) = text.rsplit_once(':').ok_or_else(bad)?;
        if !host.eq_ignore_ascii_case("localhost") {
            return Err(bad());
        }
        SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port.parse().map_err(|_| bad())?)
    };
    if !addr.ip().is_loopback() {
        return Err(ServeError::NotLoopback(addr));
    }
    Ok(addr)
}

/// A bound loopback socket, ready for [`serve_http`]. Binding first lets a caller learn the
/// port (when it asked for port 0) and fail before the memory is opened.
#[derive(Debug)]
pub struct HttpListener {
    listener: std::net::TcpListener,
    addr: SocketAddr,
}

impl HttpListener {
    /// Binds `addr` (see [`loopback_address`]).
    ///
    /// Errors: the address is malformed or not loopback; it cannot be bound
    /// ([`ServeError::Bind`]: in use, or not allowed).
    pub fn bind(addr: &str) -> Result<Self, ServeError> {
        let addr = loopback_address(addr)?;
        let bind = |source| ServeError::Bind { addr, source };
        let listener = std::net::TcpListener::bind(addr).map_err(bind)?;
        listener.set_nonblocking(true).map_err(bind)?;
        let addr = listener.local_addr().map_err(bind)?;
        Ok(Self { listener, addr })
    }

    /// The bound address (with the port the system picked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL a client connects to: `http://ADDR/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.addr)
    }
}

/// rmcp's streamable HTTP settings for a loopback server: the `Host` header must name a
/// loopback host, a browser's `Origin` must be a loopback one, and a request body may be as
/// long as a stdio line ([`MAX_LINE_BYTES`]; a longer one gets `413`).
fn http_config() -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        .with_allowed_hosts(["localhost", "127.0.0.1", "::1"])
        .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"])
        .with_max_request_body_bytes(MAX_LINE_BYTES)
}

/// Serves `hub` over streamable HTTP on `listener` with `config` until `shutdown` resolves,
/// then ends the session (promotion, consolidation, persistence and journal compaction) and
/// closes the hub, as [`serve_stdio`](super::serve_stdio) does. Returns the session report.
///
/// `ready` is called with the URL once the server is about to accept connections and
/// `shutdown` has been polled once, so whatever `shutdown` installs on its first poll (the
/// signal handlers of [`shutdown_signal`]) is in place when the caller announces the URL.
/// On shutdown the server stops accepting, ends every MCP session, gives open connections
/// 5 s to finish their replies, and drops the rest. A tool call is never cut in
/// half: each runs to its end before the runtime looks at anything else.
///
/// Errors: a setting out of range, or a runtime that cannot start. A failure while serving
/// is logged and ends the session as a shutdown does.
pub fn serve_http<S, R>(
    hub: MemoryHub,
    config: McpConfig,
    listener: HttpListener,
    shutdown: S,
    ready: R,
) -> Result<SessionReport, ServeError>
where
    S: Future<Output = ()>,
    R: FnOnce(&str),
{
    let url = listener.url();
    run_session(hub, config, move |server| async move {
        let listener = tokio::net::TcpListener::from_std(listener.listener).map_err(|e| e.to_string())?;
        let service: Service =
            StreamableHttpService::new(move || Ok(server.clone()), Arc::default(), http_config());
        let mut shutdown = std::pin::pin!(shutdown);
        let stopped = std::future::poll_fn(|cx| Poll::Ready(shutdown.as_mut().poll(cx).is_ready())).await;
        ready(&url);
        if !stopped {
            accept(&listener, &service, shutdown).await;
        }
        Ok(())
    })
}

/// Accepts connections until `shutdown`, then ends every MCP session and waits up to
/// [`GRACE`] for the connections to close.
async fn accept<S: Future<Output = ()>>(
    listener: &tokio::net::TcpListener,
    service: &Service,
    mut shutdown: Pin<&mut S>,
) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            () = shutdown.as_mut() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(connection(stream, service.clone()));
                }
                Err(e) => {
                    // Out of file descriptors, most likely: wait instead of spinning.
                    tracing::warn!("accepting an HTTP connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    tracing::info!(open = connections.len(), "the MCP HTTP server is shutting down");
    service.config.cancellation_token.cancel();
    let drained = tokio::time::timeout(GRACE, async { while connections.join_next().await.is_some() {} });
    if drained.await.is_err() {
        tracing::warn!(
            open = connections.len(),
            "HTTP connections still open after the grace period are dropped"
        );
    }
}

/// Serves one HTTP/1.1 connection until it closes, or until shutdown, when it finishes the
/// reply in progress and closes.
async fn connection(stream: tokio::net::TcpStream, service: Service) {
    let stop = service.config.cancellation_token.clone();
    let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
        let service = service.clone();
        async move { Ok::<_, Infallible>(route(&service, request).await) }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(HEADER_TIMEOUT);
    let mut conn = std::pin::pin!(builder.serve_connection(TokioIo::new(stream), handler));
    let result = tokio::select! {
        result = conn.as_mut() => result,
        () = stop.cancelled() => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result {
        tracing::debug!("an HTTP connection ended: {e}");
    }
}

/// MCP at [`MCP_PATH`], `404` elsewhere. A POST's body is read here first (at most
/// [`MAX_LINE_BYTES`], else `413`), and one that is not a JSON-RPC message gets `400` with the
/// JSON-RPC error ([`invalid_message`]), as JSON-RPC and the MCP specification prescribe
/// (rmcp alone would answer a bare `415`); a message goes on to rmcp.
async fn route(service: &Service, request: Request<Incoming>) -> Response<Body> {
    if request.uri().path() != MCP_PATH {
        return plain(StatusCode::NOT_FOUND, "maxim serves MCP at /mcp\n".into());
    }
    if request.method() != hyper::Method::POST {
        return service.handle(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match Limited::new(body, MAX_LINE_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.is::<LengthLimitError>() => {
            return plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("a request body may hold at most {MAX_LINE_BYTES} bytes\n"),
            );
        }
        Err(e) => return plain(StatusCode::BAD_REQUEST, format!("cannot read the request body: {e}\n")),
    };
    if let Err(e) = serde_json::from_slice::<ClientJsonRpcMessage>(&bytes) {
        return invalid_message(&bytes, &e);
    }
    service.handle(Request::from_parts(parts, Full::new(bytes))).await
}

/// `400` with the JSON-RPC error for a body that is not a client message: `-32700` (parse
/// error, id null) for one that is not JSON, `-32600` (invalid request, with its id when it
/// has one) for JSON that is not a JSON-RPC message.
fn invalid_message(bytes: &[u8], e: &serde_json::Error) -> Response<Body> {
    let (code, what, id) = if e.is_data() {
        let id = serde_json::from_slice::<serde_json::Value>(bytes)
            .ok()
            .and_then(|v| v.get("id").cloned())
            .filter(|id| id.is_string() || id.is_number());
        (-32600, "Invalid request", id)
    } else {
        (-32700, "Parse error", None)
    };
    let error = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": format!("{what}: {e}") },
    });
    let mut response = plain(StatusCode::BAD_REQUEST, error.to_string());
    response
        .headers_mut()
        .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
    response
}

/// A response with `status` and the text `body`.
fn plain(status: StatusCode, body: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response
}

/// Resolves on ctrl-c (SIGINT) or, on Unix, SIGTERM. Both handlers are installed on the first
/// poll; one that cannot be installed is logged and never fires.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    let interrupt = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!("cannot listen for ctrl-c: {e}");
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        () = terminate => tracing::info!("SIGTERM: ending the MCP session"),
        () = interrupt => tracing::info!("ctrl-c: ending the MCP session"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_addresses_are_accepted_and_others_refused() {
        for ok in
            ["127.0.0.1:8848", " 127.0.0.1:0 ", "[::1]:8848", "localhost:8848", "LOCALHOST:1", "127.1.2.3:9"]
        {
            assert!(loopback_address(ok).is_ok(), "{ok}");
        }
        assert_eq!(loopback_address("localhost:0").unwrap(), "127.0.0.1:0".parse().unwrap());
        for far in ["0.0.0.0:8848", "[::]:8848", "192.168.1.2:8848", "[::ffff:127.0.0.1]:8848", "8.8.8.8:80"]
        {
            let err = loopback_address(far).unwrap_err();
            assert!(matches!(err, ServeError::NotLoopback(_)), "{far}: {err}");
            assert!(err.to_string().contains("no authentication"), "{err}");
        }
        for bad in
            ["", "8848", "127.0.0.1", "localhost", "localhost:http", "example.com:80", "127.0.0.1:99999"]
        {
            assert!(matches!(loopback_address(bad), Err(ServeError::Address(_))), "{bad:?}");
        }
    }

    #[test]
    fn a_listener_on_port_0_learns_its_port_and_a_taken_port_is_refused() {
        let first = HttpListener::bind("127.0.0.1:0").unwrap();
        let port = first.local_addr().port();
        assert_ne!(port, 0);
        assert_eq!(first.url(), format!("http://127.0.0.1:{port}/mcp"));
        let err = HttpListener::bind(&format!("127.0.0.1:{port}")).unwrap_err();
        assert!(matches!(err, ServeError::Bind { .. }), "{err}");
        assert!(err.to_string().contains(&port.to_string()), "{err}");
    }
}
