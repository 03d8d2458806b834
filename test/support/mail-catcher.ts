// The local mail catcher (maildev 3: an SMTP server, a web inbox and a REST API), started in this
// process on free ports for one test file, and read over its REST API as a person reads the inbox:
// tests never mock the mail path. `stop` closes both servers and deletes the mail it kept.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MailDev } from 'maildev';
import { freePort } from './ports.ts';

export interface CaughtMail {
  id: string;
  subject: string;
  text: string;
  to: { address: string }[];
  time: string;
}

export interface MailCatcher {
  /** What the gateway's SMTP_URL is set to. */
  smtpUrl: string;
  /** The web inbox (and its REST API under /api). */
  webUrl: string;
  /** Every mail to `address` (any case), oldest first. */
  inbox(address: string): Promise<CaughtMail[]>;
  /** Waits for a mail to `address` whose subject matches, and returns the newest such one. */
  waitFor(address: string, subject: RegExp, options?: { timeoutMs?: number; after?: number }): Promise<CaughtMail>;
  stop(): Promise<void>;
}

/** The first https?:// link in a mail's text (optionally one whose path starts with `pathPrefix`). */
export function linkIn(mail: CaughtMail, pathPrefix = ''): string {
  for (const [url] of mail.text.matchAll(/https?:\/\/\S+/g)) if (new URL(url).pathname.startsWith(pathPrefix)) return url;
  throw new Error(`no link ${pathPrefix} in the mail "${mail.subject}"`);
}

export async function startMailCatcher(): Promise<MailCatcher> {
  const [smtp, web] = [await freePort(), await freePort()];
  const directory = await mkdtemp(join(tmpdir(), 'gw-mail-'));
  const maildev = new MailDev({ smtp, web, ip: '127.0.0.1', webIp: '127.0.0.1', silent: true, mailDirectory: directory } as never);
  await maildev.start();
  const webUrl = `http://127.0.0.1:${web}`;

  const all = async (): Promise<CaughtMail[]> => {
    const response = await fetch(`${webUrl}/api/email`);
    if (!response.ok) throw new Error(`the mail catcher answered ${response.status}`);
    return (await response.json()) as CaughtMail[];
  };
  const inbox = async (address: string) => (await all()).filter((m) => m.to.some((t) => t.address.toLowerCase() === address.toLowerCase()));

  return {
    smtpUrl: `smtp://127.0.0.1:${smtp}`,
    webUrl,
    inbox,
    async waitFor(address, subject, options = {}) {
      const deadline = Date.now() + (options.timeoutMs ?? 10_000);
      for (;;) {
        const found = (await inbox(address)).filter((m) => subject.test(m.subject) && new Date(m.time).getTime() >= (options.after ?? 0) - 1000);
        if (found.length > 0) return found[found.length - 1]!;
        if (Date.now() > deadline) throw new Error(`no mail "${subject.source}" reached ${address}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      await maildev.stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
