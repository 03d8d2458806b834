// Every mail the gateway sends, in one place: the words of each notice (plain text; links are
// written out whole so any mail client, and the tests reading the catcher, can follow them).
// A notice says what happened and what to do if it was not you; it never carries a password,
// code or secret, and a link in it is the only copy of its token.

export interface MailContent {
  /** What kind of mail this is, for the metrics and the log (never the address). */
  kind: string;
  subject: string;
  text: string;
  html?: string;
}

const SIGNATURE = '\n\n— Chat Gateway\nYou get this mail because of an account for this address on the Chat Gateway dashboard.';
const NOT_YOU = 'If this was not you, reset your password now and set up your second factor again, then tell your organisation\'s owner.';

const hours = (ms: number) => (ms >= 2 * 3_600_000 ? `${Math.round(ms / 3_600_000)} hours` : `${Math.max(1, Math.round(ms / 60_000))} minutes`);

const mail = (kind: string, subject: string, lines: string[]): MailContent => ({ kind, subject, text: lines.join('\n') + SIGNATURE });

export const mails = {
  verifyEmail: (link: string, validMs: number) =>
    mail('verify_email', 'Confirm your email address', [
      'Welcome to Chat Gateway.',
      '',
      'Confirm that this address is yours by opening this link:',
      link,
      '',
      `The link works once, for ${hours(validMs)}. Until then the account can do nothing else.`,
      'If you did not sign up, ignore this mail: nothing happens without the link.',
    ]),

  signUpAttempt: (signInUrl: string, resetUrl: string) =>
    mail('sign_up_attempt', 'Someone tried to sign up with your address', [
      'Someone tried to create a Chat Gateway account with this email address, which already has one.',
      'No new account was made, and nothing changed on yours.',
      '',
      `If it was you, sign in: ${signInUrl}`,
      `or, if you forgot your password, reset it: ${resetUrl}`,
      '',
      'If it was not you, you need do nothing.',
    ]),

  passwordReset: (link: string, validMs: number, mfa: boolean) =>
    mail('password_reset', 'Reset your password', [
      'Someone (hopefully you) asked to reset the password of your Chat Gateway account.',
      '',
      'Choose a new password here:',
      link,
      '',
      `The link works once, for ${hours(validMs)}.${mfa ? ' You will also need a code from your authenticator app, or a recovery code.' : ''}`,
      'Setting a new password signs you out everywhere.',
      'If you did not ask for this, ignore this mail: your password stays as it is.',
    ]),

  passwordChanged: (how: 'changed' | 'reset') =>
    mail('password_changed', how === 'reset' ? 'Your password was reset' : 'Your password was changed', [
      how === 'reset'
        ? 'The password of your Chat Gateway account was reset with a link sent to this address. Every session of the account was ended.'
        : 'The password of your Chat Gateway account was changed from a signed-in session. Your other sessions were ended.',
      '',
      NOT_YOU,
    ]),

  secondFactorChanged: (replaced: boolean) =>
    mail('second_factor_changed', replaced ? 'Your second factor was replaced' : 'Two-factor authentication is on', [
      replaced
        ? 'A new authenticator app now signs in to your Chat Gateway account; the one before no longer works, nor do its recovery codes. Your other sessions were ended.'
        : 'Two-factor authentication is now on for your Chat Gateway account: signing in asks for a code from your authenticator app.',
      '',
      NOT_YOU,
    ]),

  apiKeyCreated: (organisation: string, keyName: string, keyId: string) =>
    mail('api_key_created', `A new API key for ${organisation}`, [
      `You created an API key for ${organisation}: "${keyName}" (${keyId}).`,
      'It can send messages on behalf of the organisation. The key itself was shown once, in the dashboard.',
      '',
      'If this was not you, revoke the key on the API keys page, then reset your password.',
    ]),

  roleChanged: (organisation: string, from: string, to: string) =>
    mail('role_changed', `Your role at ${organisation} changed`, [
      `Your role at ${organisation} changed from ${from} to ${to}. Sign in again for it to take effect.`,
      '',
      'If you did not expect this, ask an owner of the organisation.',
    ]),

  lockedOut: (lockedMs: number, resetUrl: string) =>
    mail('locked_out', 'Your account is locked for a while', [
      `Too many wrong passwords or codes in a row: your Chat Gateway account is locked for ${hours(lockedMs)}.`,
      '',
      `If these were your attempts, wait, or reset your password: ${resetUrl}`,
      'If they were not, someone is guessing: reset your password and keep two-factor authentication on.',
    ]),

  invitation: (organisation: string, role: string, link: string, days: number) =>
    mail('invitation', `You are invited to ${organisation} on Chat Gateway`, [
      `You are invited to join ${organisation} on Chat Gateway as ${role}.`,
      '',
      'Open this link to accept:',
      link,
      '',
      `The link works once, for ${days} days. If you do not know ${organisation}, ignore this mail.`,
    ]),
} as const;
