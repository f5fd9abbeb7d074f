//! A real SMTP server for the mail tests: a socket on loopback, the protocol
//! spoken by the `mailin` crate's session, every accepted mail recorded. It can
//! refuse mail with a temporary error to exercise retries.

use std::{
    io,
    net::IpAddr,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use mailin::{response, Handler, Response, SessionBuilder};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    net::TcpListener,
};

/// One accepted mail.
#[derive(Debug, Clone, Default)]
pub struct Delivered {
    pub from: String,
    pub to: Vec<String>,
    /// The message as sent: headers, a blank line, the body.
    pub data: String,
}

#[derive(Clone)]
struct Collector {
    current: Delivered,
    delivered: Arc<Mutex<Vec<Delivered>>>,
    refuse: Arc<AtomicUsize>,
}

impl Handler for Collector {
    fn mail(&mut self, _ip: IpAddr, _domain: &str, from: &str) -> Response {
        self.current = Delivered {
            from: from.to_string(),
            ..Default::default()
        };
        response::OK
    }

    fn rcpt(&mut self, to: &str) -> Response {
        // A temporary refusal of the recipient is what a full mailbox or
        // greylisting looks like. (mailin keeps a session that refused the end
        // of the data in its data state, so the refusal is made here.)
        if self
            .refuse
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return response::INTERNAL_ERROR;
        }
        self.current.to.push(to.to_string());
        response::OK
    }

    fn data(&mut self, buf: &[u8]) -> io::Result<()> {
        self.current.data.push_str(&String::from_utf8_lossy(buf));
        Ok(())
    }

    fn data_end(&mut self) -> Response {
        self.delivered.lock().unwrap().push(std::mem::take(&mut self.current));
        response::OK
    }
}

/// The running server.
pub struct SmtpReceiver {
    pub url: String,
    delivered: Arc<Mutex<Vec<Delivered>>>,
    refuse: Arc<AtomicUsize>,
}

impl SmtpReceiver {
    pub async fn start() -> SmtpReceiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("smtp://{}", listener.local_addr().unwrap());
        let delivered = Arc::new(Mutex::new(Vec::new()));
        let refuse = Arc::new(AtomicUsize::new(0));
        let collector = Collector {
            current: Delivered::default(),
            delivered: delivered.clone(),
            refuse: refuse.clone(),
        };
        tokio::spawn(async move {
            let builder = SessionBuilder::new("smtp.rapport.test");
            while let Ok((stream, peer)) = listener.accept().await {
                let mut session = builder.build(peer.ip(), collector.clone());
                tokio::spawn(async move {
                    let (read, mut write) = stream.into_split();
                    let mut reader = BufReader::new(read);
                    let mut out = Vec::new();
                    session.greeting().write_to(&mut out).unwrap();
                    write.write_all(&out).await.unwrap();
                    let mut line = Vec::new();
                    loop {
                        line.clear();
                        if reader.read_until(b'\n', &mut line).await.unwrap_or(0) == 0 {
                            break;
                        }
                        let reply = session.process(&line);
                        if matches!(reply.action, mailin::Action::NoReply) {
                            continue;
                        }
                        out.clear();
                        reply.write_to(&mut out).unwrap();
                        if write.write_all(&out).await.is_err() || matches!(reply.action, mailin::Action::Close) {
                            break;
                        }
                    }
                });
            }
        });
        SmtpReceiver { url, delivered, refuse }
    }

    /// Refuses the next `n` mails with a temporary error.
    pub fn refuse_next(&self, n: usize) {
        self.refuse.store(n, Ordering::SeqCst);
    }

    /// Waits until `n` mails arrived (up to 10 s) and returns them.
    pub async fn wait_for(&self, n: usize) -> Vec<Delivered> {
        for _ in 0..200 {
            let delivered = self.delivered.lock().unwrap().clone();
            if delivered.len() >= n {
                return delivered;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{n} mails did not arrive; got {:?}", self.delivered.lock().unwrap());
    }
}
