//! Shared sessions (the seeds' telecollaboration): a WebSocket hub at `/api/ws` that relays
//! every browser's selection, cursor and presence to every other browser of the session, and
//! pushes server events (live samples) to all of them.
//!
//! Protocol: JSON text messages, `{"type": ...}`. A client sends `hello` (optional name),
//! `selection` (its whole view state) and `cursor` (its pointer over a view, as fractions of
//! the view's size). The server answers `welcome` (the client's id and colour, who is present,
//! the session's current selection), and broadcasts `presence`, `selection` and `cursor`
//! (with the sender's id) to everyone; clients ignore their own messages. Access is guarded by
//! the server's token like every other request.

use axum::extract::ws::{Message, WebSocket};
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use tokio::sync::broadcast;
use ts_rs::TS;

/// A browser in the session.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct Peer {
    /// Session-unique id.
    pub id: u32,
    /// Name given by the client (or `guest N`).
    pub name: String,
    /// CSS colour for its cursor.
    pub color: String,
}

/// A message from a browser.
#[derive(Debug, Clone, Deserialize, TS)]
#[ts(export)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    /// Introduces the client.
    Hello {
        /// Display name.
        name: Option<String>,
    },
    /// The client's whole view state (the front end's selection).
    Selection {
        /// The state, as the front end serializes it.
        state: serde_json::Value,
    },
    /// The client's pointer over a view.
    Cursor {
        /// Panel id (`heatmap`, `overview`, ...).
        view: String,
        /// Horizontal position as a fraction of the panel's width.
        x: f64,
        /// Vertical position as a fraction of the panel's height.
        y: f64,
    },
}

/// A message to the browsers.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// Sent once to a client that joined.
    Welcome {
        /// Its id.
        id: u32,
        /// Its colour.
        color: String,
        /// Everyone present (including it).
        peers: Vec<Peer>,
        /// The session's current selection (the last one any client sent), if any.
        selection: Option<serde_json::Value>,
    },
    /// Who is present, after someone joined, left or renamed.
    Presence {
        /// Everyone present.
        peers: Vec<Peer>,
    },
    /// A client changed its selection or view.
    Selection {
        /// Sender.
        from: u32,
        /// Its state.
        state: serde_json::Value,
    },
    /// A client moved its pointer.
    Cursor {
        /// Sender.
        from: u32,
        /// Panel id.
        view: String,
        /// Fraction of the panel's width.
        x: f64,
        /// Fraction of the panel's height.
        y: f64,
    },
    /// A server event (live mode): free-form JSON documented in API.md.
    Event {
        /// The event.
        event: serde_json::Value,
    },
}

const COLORS: [&str; 8] = [
    "#2563eb", "#db2777", "#16a34a", "#ea580c", "#7c3aed", "#0891b2", "#ca8a04", "#dc2626",
];

#[derive(Debug, Default)]
struct HubState {
    peers: Vec<Peer>,
    selection: Option<serde_json::Value>,
    next_id: u32,
}

/// The session hub: presence, the current selection, and the broadcast channel.
#[derive(Debug)]
pub struct Hub {
    tx: broadcast::Sender<String>,
    state: Mutex<HubState>,
    /// Messages pages missed because they read too slowly (see [`Hub::dropped`]).
    dropped: std::sync::atomic::AtomicU64,
}

impl Default for Hub {
    fn default() -> Self {
        Self {
            tx: broadcast::channel(1024).0,
            state: Mutex::new(HubState::default()),
            dropped: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

impl Hub {
    /// Sends a message to every connected browser.
    pub fn broadcast(&self, msg: &ServerMessage) {
        if let Ok(text) = serde_json::to_string(msg) {
            let _ = self.tx.send(text);
        }
    }

    /// Messages that pages reading too slowly missed, counted over every page: a page never
    /// slows the server or the producers of a live run; it keeps the 1,024 newest messages,
    /// and one that fell behind is told (`{"event":"lagged","dropped":N}`) and reads the series
    /// again.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Number of connected browsers.
    pub fn peer_count(&self) -> usize {
        self.state.lock().map(|s| s.peers.len()).unwrap_or(0)
    }

    fn peers(&self) -> Vec<Peer> {
        self.state.lock().map(|s| s.peers.clone()).unwrap_or_default()
    }

    fn join(&self) -> (Peer, Vec<Peer>, Option<serde_json::Value>) {
        let Ok(mut s) = self.state.lock() else {
            return (
                Peer {
                    id: 0,
                    name: "guest".into(),
                    color: COLORS[0].into(),
                },
                Vec::new(),
                None,
            );
        };
        s.next_id += 1;
        let id = s.next_id;
        let peer = Peer {
            id,
            name: format!("guest {id}"),
            color: COLORS[(id as usize - 1) % COLORS.len()].into(),
        };
        s.peers.push(peer.clone());
        (peer, s.peers.clone(), s.selection.clone())
    }

    fn leave(&self, id: u32) {
        if let Ok(mut s) = self.state.lock() {
            s.peers.retain(|p| p.id != id);
        }
        self.broadcast(&ServerMessage::Presence { peers: self.peers() });
    }

    fn on_message(&self, id: u32, msg: ClientMessage) {
        match msg {
            ClientMessage::Hello { name } => {
                if let (Some(name), Ok(mut s)) = (name, self.state.lock())
                    && let Some(p) = s.peers.iter_mut().find(|p| p.id == id)
                {
                    p.name = name.chars().take(40).collect();
                }
                self.broadcast(&ServerMessage::Presence { peers: self.peers() });
            }
            ClientMessage::Selection { state } => {
                if let Ok(mut s) = self.state.lock() {
                    s.selection = Some(state.clone());
                }
                self.broadcast(&ServerMessage::Selection { from: id, state });
            }
            ClientMessage::Cursor { view, x, y } => {
                if x.is_finite() && y.is_finite() {
                    self.broadcast(&ServerMessage::Cursor {
                        from: id,
                        view: view.chars().take(40).collect(),
                        x,
                        y,
                    });
                }
            }
        }
    }

    /// Serves one browser's WebSocket until it closes.
    pub async fn serve(&self, mut socket: WebSocket) {
        let mut rx = self.tx.subscribe();
        let (me, peers, selection) = self.join();
        let welcome = ServerMessage::Welcome {
            id: me.id,
            color: me.color.clone(),
            peers,
            selection,
        };
        let Ok(text) = serde_json::to_string(&welcome) else {
            return;
        };
        if socket.send(Message::Text(text.into())).await.is_err() {
            self.leave(me.id);
            return;
        }
        self.broadcast(&ServerMessage::Presence { peers: self.peers() });
        loop {
            tokio::select! {
                incoming = socket.recv() => match incoming {
                    Some(Ok(Message::Text(t))) => {
                        // A malformed message is ignored (and does not end the session).
                        if let Ok(msg) = serde_json::from_str::<ClientMessage>(&t) {
                            self.on_message(me.id, msg);
                        }
                    }
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => {}
                },
                out = rx.recv() => match out {
                    Ok(text) => {
                        if socket.send(Message::Text(text.into())).await.is_err() {
                            break;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        self.dropped.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                        let lagged = serde_json::json!({ "event": "lagged", "dropped": n });
                        let text = serde_json::to_string(&ServerMessage::Event { event: lagged }).unwrap_or_default();
                        if socket.send(Message::Text(text.into())).await.is_err() {
                            break;
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                },
            }
        }
        self.leave(me.id);
    }
}
