import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { unixSeconds } from '../../../lib/clock';
import { hasIdShape } from '../../../lib/ids';
import { LATEST_API_VERSION } from '../../../kernel/versions';
import type { Deps } from '../../../kernel/route';
import { renderDelivery, type EventRow } from '../../../events/render';
import { signatureHeader } from '../../../events/signature';
import { ackEvent, eventsAfter, insertResponse, selectSession, type SessionRow } from './queries';
import { SOCKET_PATH } from './service';

// The websocket `stripe listen` opens (the CLI's pkg/websocket): authenticated by the session id
// in its `Websocket-Id` header. Each of the account's events after the session's cursor goes out
// as a "webhook_event" twice, at the event's own version (`endpoint.api_version` null) and at the
// latest (the CLI forwards the one `--latest` picks), signed with the session's secret. The
// cursor moves on the CLI's "event_ack", so a reconnect replays what wasn't acknowledged.

const POLL_MS = 250;
const BATCH = 50;
const MAX_FRAME_BYTES = 1 << 20;

type Sent = Record<string, unknown>;

function refuse(socket: Duplex, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** Serves the CLI's websocket on `server`; other upgrade requests are refused. */
export function attachStripecliSockets(server: Server, deps: Deps): { close(): void } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  const stops = new Set<() => void>();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    void (async () => {
      const path = (req.url ?? '').split('?')[0];
      const id = req.headers['websocket-id'];
      if (path !== SOCKET_PATH) return refuse(socket, 404, 'Not Found');
      if (typeof id !== 'string' || !hasIdShape('cli', id)) return refuse(socket, 401, 'Unauthorized');
      const [session] = await deps.sql.query<SessionRow>(selectSession(id));
      if (!session) return refuse(socket, 401, 'Unauthorized');
      const secret = await deps.encryption.open(session.secret);
      wss.handleUpgrade(req, socket, head, (ws) => stops.add(serve(ws, session, secret, deps, stops)));
    })().catch((err: unknown) => {
      deps.logger.error({ err }, 'stripecli socket upgrade failed');
      refuse(socket, 500, 'Internal Server Error');
    });
  });
  return {
    close() {
      for (const stop of stops) stop();
      wss.close();
    },
  };
}

function serve(ws: WebSocket, session: SessionRow, secret: string, deps: Deps, stops: Set<() => void>): () => void {
  let cursor = session.eventCursor;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const send = (message: Sent) => ws.send(JSON.stringify(message));

  const webhookEvent = (row: EventRow, apiVersion: string | null): Sent => {
    const payload = JSON.stringify(renderDelivery(row, deps.versions, { connected: false, apiVersion: apiVersion ?? undefined }));
    return {
      type: 'webhook_event',
      webhook_id: `wh_${row.id}`,
      webhook_conversation_id: `whc_${row.id}`,
      event_payload: payload,
      http_headers: {
        'Content-Type': 'application/json; charset=utf-8',
        'Stripe-Signature': signatureHeader(payload, secret, unixSeconds(deps.clock)),
        'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      },
      endpoint: { api_version: apiVersion },
    };
  };

  const poll = async () => {
    if (session.feature === 'webhooks') {
      const rows = await deps.sql.query<EventRow & { seq: string }>(eventsAfter(session.accountId, cursor, BATCH));
      for (const row of rows) {
        if (closed) return;
        send(webhookEvent(row, null));
        send(webhookEvent(row, LATEST_API_VERSION));
        cursor = row.seq;
      }
    }
  };
  const loop = () => {
    if (closed) return;
    poll()
      .catch((err: unknown) => deps.logger.error({ err, session: session.id }, 'stripecli socket poll failed'))
      .finally(() => {
        if (!closed) timer = setTimeout(loop, POLL_MS);
      });
  };

  const stop = () => {
    closed = true;
    clearTimeout(timer);
    stops.delete(stop);
    ws.terminate();
  };

  ws.on('message', (data, isBinary) => {
    let message: Record<string, unknown>;
    try {
      message = isBinary ? {} : JSON.parse(data.toString());
    } catch {
      return ws.close(1007, 'invalid JSON');
    }
    if (message === null || typeof message !== 'object') return ws.close(1007, 'invalid message');
    const text = (v: unknown) => (typeof v === 'string' ? v : null);
    void (async () => {
      if (message.type === 'event_ack' && text(message.event_id)) {
        await deps.sql.query(ackEvent(session.id, text(message.event_id)!));
      } else if (message.type === 'webhook_response' && text(message.webhook_id)?.startsWith('wh_')) {
        const eventId = text(message.webhook_id)!.slice(3);
        const status = Number.isInteger(message.status) ? (message.status as number) : 0;
        const body = (text(message.body) ?? '').slice(0, 64 * 1024);
        await deps.sql.query(insertResponse(session.id, eventId, unixSeconds(deps.clock), text(message.forward_url), status, body));
      } else {
        ws.close(1008, 'unknown message type');
      }
    })().catch((err: unknown) => deps.logger.error({ err, session: session.id }, 'stripecli socket message failed'));
  });
  ws.on('close', stop);
  ws.on('error', stop);
  loop();
  return stop;
}
