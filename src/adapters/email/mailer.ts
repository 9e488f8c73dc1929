import { createTransport } from 'nodemailer';
import { isLoopbackHost, type EmailConfig } from '../../infrastructure/config/config';

export const MAILER = Symbol('Mailer');

export interface OutgoingEmail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Threads a call's messages together in mail clients. */
  messageId: string;
  references?: string;
}

/** Sends one email; throws when the server refused it or could not be reached (the outbox then retries). */
export interface Mailer {
  send(m: OutgoingEmail): Promise<void>;
}

/** How long one SMTP conversation may take before it counts as failed, so a silent server cannot hold a delivery. */
const SMTP_TIMEOUT_MS = 20_000;

/**
 * Nodemailer over TOLLGATE_SMTP_URL, pooled (a burst of requests reuses connections). `smtps://` is TLS from the
 * start; `smtp://` to any host but this machine must upgrade with STARTTLS (`requireTLS`): the emails carry action
 * links and the URL a password, which an attacker on the path could otherwise read by stripping the upgrade. A relay
 * that has no TLS is named with `?requireTLS=false` in the URL. The URL is never put in a message.
 */
export function smtpMailer(config: EmailConfig): Mailer {
  const transport = createTransport({
    url: config.smtpUrl,
    requireTLS: !isLoopbackHost(new URL(config.smtpUrl).hostname.replace(/^\[|\]$/g, '')),
    pool: true,
    maxConnections: 2,
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
    // Attachments and alternatives from files or URLs never: every part is built here from strings.
    disableFileAccess: true,
    disableUrlAccess: true,
  } as Parameters<typeof createTransport>[0]);
  return {
    async send(m) {
      await transport.sendMail({
        from: config.from,
        to: m.to,
        subject: m.subject,
        text: m.text,
        html: m.html,
        messageId: m.messageId,
        ...(m.references ? { references: m.references } : {}),
        headers: {
          // Out-of-office and other robots must not answer: replies are not read.
          'Auto-Submitted': 'auto-generated',
          'X-Auto-Response-Suppress': 'All',
        },
      });
    },
  };
}
