import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface SmtpStandIn {
  url: string;
  /** Every message accepted, parsed, in order of arrival. */
  messages: ParsedMail[];
  /**
   * Refuses the next `n` messages (to `to` only, when given): by default with a temporary error (451), as a busy
   * server would; 5xx for good.
   */
  refuseNext(n: number, code?: number, to?: string): void;
  close(): Promise<void>;
}

/** A real SMTP server on loopback (smtp-server), no TLS or auth: what the email channel talks to in tests. */
export async function startSmtpStandIn(): Promise<SmtpStandIn> {
  const messages: ParsedMail[] = [];
  let refusals = 0;
  let refusalCode = 451;
  let refusalTo: string | undefined;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const recipients = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
      if (refusals > 0 && (refusalTo === undefined || recipients.includes(refusalTo))) {
        refusals--;
        stream.resume();
        stream.on('end', () =>
          callback(
            Object.assign(new Error(refusalCode >= 500 ? 'Mailbox unavailable' : 'Try again later'), {
              responseCode: refusalCode,
            }),
          ),
        );
        return;
      }
      simpleParser(stream)
        .then((m) => {
          messages.push(m);
          callback();
        })
        .catch((e: Error) => callback(e));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    refuseNext(n, code = 451, to) {
      refusals = n;
      refusalCode = code;
      refusalTo = to?.toLowerCase();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
