import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: Record<string, string>;
  /** The exact body, as signed. */
  body: string;
  json: any;
  at: number;
  /** The status this receiver answered. */
  answered: number;
}

/** A local webhook endpoint that records every request and answers 500 to the first `failFirst` of them. */
export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Only the requests it answered with 2xx. */
  accepted(): ReceivedWebhook[];
  failFirst: number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(failFirst = 0, path = '/hooks/tollgate'): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const receiver: WebhookReceiver = {
    url: '',
    received,
    failFirst,
    accepted: () => received.filter((r) => r.answered < 300),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const answered = receiver.failFirst > 0 ? 500 : 204;
      if (receiver.failFirst > 0) receiver.failFirst -= 1;
      received.push({
        headers: req.headers as Record<string, string>,
        body,
        json: body ? JSON.parse(body) : undefined,
        at: Date.now(),
        answered,
      });
      res.writeHead(answered).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}
