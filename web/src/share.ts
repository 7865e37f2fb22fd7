// Shared sessions: joins the server's session hub (/api/ws), sends this browser's selection and
// pointer, applies the others' selection, and shows who is present and where their pointers are.

import type { ClientMessage } from './api/ClientMessage';
import type { Peer } from './api/Peer';
import type { JsonValue } from './api/serde_json/JsonValue';
import type { ServerMessage } from './api/ServerMessage';
import { FIELDS } from './schema';
import { fromShared, sharedPart, store } from './state';

/** Server events (a live run's samples, a dashboard file changed) are handed to this callback;
 * `{ event: 'connected' }` when the socket (re)opens, to catch up. */
export type EventHandler = (event: unknown) => void;

/** One handler handing every server event to each of `handlers` (the live run's, the
 * dashboards'); one failing does not stop the others. */
export function dispatch(handlers: readonly EventHandler[]): EventHandler {
  return (event) => {
    for (const h of handlers) {
      try {
        h(event);
      } catch (e) {
        console.error(e);
      }
    }
  };
}

/** Connects to the server's hub. With `shared`, joins the session (presence, selection,
 * cursors); without, only listens to server events (a live run's samples, dashboard files
 * that changed). */
export function joinSession(onEvent?: EventHandler, shared = true): void {
  const proto = window.location.protocol === 'https:' ? 'wss' : 'ws';
  const ws = new WebSocket(`${proto}://${window.location.host}/api/ws`);
  (window as unknown as { perfscapeSocket: WebSocket }).perfscapeSocket = ws;
  if (!shared) {
    // Catch up on what happened before the socket opened.
    ws.addEventListener('open', () => onEvent?.({ event: 'connected' }));
    ws.addEventListener('message', (ev) => {
      const m = JSON.parse(String(ev.data)) as ServerMessage;
      if (m.type === 'event') onEvent?.(m.event);
    });
    return;
  }
  const send = (m: ClientMessage) => ws.send(JSON.stringify(m));
  let me = 0;
  let applying = false;
  const peers = new Map<number, Peer>();
  const presence = document.createElement('span');
  presence.className = 'presence';
  presence.id = 'presence';
  document.querySelector('header .controls')?.prepend(presence);

  const showPresence = () => {
    presence.innerHTML = '';
    for (const p of peers.values()) {
      const chip = document.createElement('span');
      chip.className = 'peer';
      chip.style.background = p.color;
      chip.textContent = p.id === me ? `${p.name} (you)` : p.name;
      presence.appendChild(chip);
    }
  };

  // Another browser's state: its shared keys with valid values (the schema says which).
  const apply = (state: unknown) => {
    const patch = fromShared(state);
    applying = true;
    try {
      store.set(patch);
    } finally {
      applying = false;
    }
  };

  const cursorOf = (id: number, panel: HTMLElement): HTMLElement => {
    let c = document.getElementById(`cursor-${id}`);
    if (!c) {
      c = document.createElement('div');
      c.id = `cursor-${id}`;
      c.className = 'remote-cursor';
      const p = peers.get(id);
      c.style.borderColor = p?.color ?? '#000';
      c.dataset.name = p?.name ?? '';
    }
    if (c.parentElement !== panel) panel.appendChild(c);
    return c;
  };

  ws.addEventListener('message', (ev) => {
    const m = JSON.parse(String(ev.data)) as ServerMessage;
    switch (m.type) {
      case 'welcome':
        me = m.id;
        m.peers.forEach((p) => peers.set(p.id, p));
        showPresence();
        if (m.selection) apply(m.selection);
        onEvent?.({ event: 'connected' });
        break;
      case 'presence':
        peers.clear();
        m.peers.forEach((p) => peers.set(p.id, p));
        showPresence();
        document.querySelectorAll<HTMLElement>('.remote-cursor').forEach((c) => {
          if (!peers.has(Number(c.id.slice(7)))) c.remove();
        });
        break;
      case 'selection':
        if (m.from !== me) apply(m.state);
        break;
      case 'cursor': {
        if (m.from === me) break;
        const panel = document.getElementById(`panel-${m.view}`);
        if (!panel) break;
        const c = cursorOf(m.from, panel);
        c.style.left = `${m.x * 100}%`;
        c.style.top = `${m.y * 100}%`;
        break;
      }
      case 'event':
        onEvent?.(m.event);
        break;
    }
  });

  store.subscribe((s, changed) => {
    if (applying || ws.readyState !== WebSocket.OPEN || ![...changed].some((k) => FIELDS[k].shared)) return;
    send({ type: 'selection', state: sharedPart(s) as JsonValue });
  });

  let last = 0;
  document.addEventListener('mousemove', (e) => {
    const now = performance.now();
    if (now - last < 40 || ws.readyState !== WebSocket.OPEN) return;
    const panel = (e.target as HTMLElement | null)?.closest<HTMLElement>('.panel');
    if (!panel?.dataset.view) return;
    last = now;
    const r = panel.getBoundingClientRect();
    send({ type: 'cursor', view: panel.dataset.view, x: (e.clientX - r.left) / r.width, y: (e.clientY - r.top) / r.height });
  });
  (window as unknown as { perfscapeSession: object }).perfscapeSession = { peers, ws };
}
