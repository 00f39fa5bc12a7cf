import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Worker } from 'bullmq';
import { closeWorker } from '../../src/lib/queue';
import { forwardingWorker } from '../../src/resources/forwarding/requests/pipeline';
import { startJobWorker } from '../../workers/resourceWorkers';
import { bearer, type TestApp } from './app';
import { form } from './fixtures';

// A local destination for forwarding requests (on 127.0.0.1 only), and the fixture that forwards
// to it with a worker of the test's own. Paths choose what it does:
//   …/status/<code>  answers that status, echoing what it got (card data included, to see it masked)
//   …/slow           answers after 3 s (past a short destination timeout)
//   …/redirect       302 to /landing (which must never be reached: redirects are not followed)
//   anything else    200, echoing what it got

export interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface Destination {
  readonly origin: string;
  readonly received: Received[];
  /** Requests that reached `path` (a prefix). */
  hits(path: string): Received[];
  close(): Promise<void>;
}

export async function startDestination(): Promise<Destination> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body });
      let parsed: any = null;
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = body;
      }
      const echo = JSON.stringify({ received: parsed, path });
      const card = typeof parsed?.card?.number === 'string' ? { 'X-Card-Number': parsed.card.number } : {};
      const status = /\/status\/(\d{3})/.exec(path);
      if (path.includes('/slow')) {
        const timer = setTimeout(() => res.writeHead(200).end('late'), 3000);
        res.on('close', () => clearTimeout(timer));
      } else if (path.includes('/redirect')) {
        res.writeHead(302, { Location: '/landing' }).end();
      } else {
        res.writeHead(status ? Number(status[1]) : 200, { 'Content-Type': 'application/json', ...card }).end(echo);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    received,
    hits: (path) => received.filter((r) => r.path.startsWith(path)),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Harness {
  destination: Destination;
  worker: Worker;
}

const harnesses = new WeakMap<TestApp, Promise<Harness>>();

/** The app's destination and forwarding worker, started at the first use and stopped with the app. */
export function forwardingHarness(app: TestApp): Promise<Harness> {
  let harness = harnesses.get(app);
  if (!harness) {
    harness = (async () => {
      const destination = await startDestination();
      const worker = startJobWorker(app.runtime, forwardingWorker);
      app.onClose(async () => {
        await closeWorker(worker, app.runtime.logger);
        await destination.close();
      });
      return { destination, worker };
    })();
    harnesses.set(app, harness);
  }
  return harness;
}

/** A card-number-only forward to the harness's destination (the app needs a destination for 127.0.0.1, as LOCAL_DESTINATIONS). */
export async function createForwardingRequest(app: TestApp, key: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const { destination } = await forwardingHarness(app);
  const res = await app
    .http()
    .post('/v1/forwarding/requests')
    .set(bearer(key))
    .type('form')
    .send(
      form({
        payment_method: 'pm_card_visa',
        url: `${destination.origin}/vault`,
        replacements: ['card_number'],
        request: { body: JSON.stringify({ card: { number: '' } }), headers: [{ name: 'Destination-Key', value: 'dk_test' }] },
        ...params,
      }),
    );
  if (res.status !== 200) throw new Error(`forwarding failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
