// The one way the gateway sends mail: nodemailer over SMTP, configured by one URL (SMTP_URL) and a
// sender (MAIL_FROM). A notice that cannot be sent never breaks the request that triggered it:
// `send` never rejects; a failure is logged with the address masked and counted in
// `gateway_mail_failed_total`. `deliver` does the same without making the caller wait (sign-up
// and reset answer at once, and as fast, whether a mail goes out or not).
import nodemailer, { type Transporter } from 'nodemailer';
import { Counter, type Registry } from 'prom-client';
import { describeError } from '@gw/observability';
import { maskEmail } from './mask.ts';
import type { MailContent } from './templates.ts';

export interface MailLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface MailerOptions {
  smtpUrl: string;
  from: string;
  logger?: MailLogger;
  /** Where the sent and failed counters are registered (the service's metrics registry). */
  registry?: Registry;
}

export interface Mailer {
  /** Sends one mail; true when the SMTP server took it. Never rejects. */
  send(to: string, content: MailContent): Promise<boolean>;
  /** Sends in the background: the caller does not wait (see `settled`). */
  deliver(to: string, content: MailContent): void;
  /** Resolves once every background send started so far has ended (tests, shutdown). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

const SILENT: MailLogger = { info: () => {}, warn: () => {} };

export function createMailer(options: MailerOptions): Mailer {
  const logger = options.logger ?? SILENT;
  const registers = options.registry ? [options.registry] : [];
  const sent = new Counter({ name: 'gateway_mail_sent_total', help: 'Mails the SMTP server accepted, by kind', labelNames: ['kind'], registers });
  const failed = new Counter({ name: 'gateway_mail_failed_total', help: 'Mails that could not be sent (logged with the address masked), by kind', labelNames: ['kind'], registers });
  // Short timeouts: a mail server that hangs must not hold sockets (or a test) for minutes.
  const transport: Transporter = nodemailer.createTransport(options.smtpUrl, { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 } as never);
  const pending = new Set<Promise<boolean>>();

  const send = async (to: string, content: MailContent): Promise<boolean> => {
    try {
      await transport.sendMail({ from: options.from, to, subject: content.subject, text: content.text, ...(content.html ? { html: content.html } : {}) });
      sent.inc({ kind: content.kind });
      logger.info({ mail: content.kind, to: maskEmail(to) }, 'mail sent');
      return true;
    } catch (error) {
      failed.inc({ kind: content.kind });
      logger.warn({ mail: content.kind, to: maskEmail(to), err: describeError(error).replaceAll(to, maskEmail(to)) }, 'mail not sent');
      return false;
    }
  };

  return {
    send,
    deliver(to, content) {
      const sending = send(to, content);
      pending.add(sending);
      void sending.finally(() => pending.delete(sending));
    },
    async settled() {
      await Promise.all([...pending]);
    },
    async close() {
      await Promise.all([...pending]);
      transport.close();
    },
  };
}
