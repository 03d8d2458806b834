export { createMailer, type Mailer, type MailerOptions, type MailLogger } from './mailer.ts';
export { mails, type MailContent } from './templates.ts';
export { maskEmail } from './mask.ts';
