// The dashboard's one error handler: every failure becomes a page with a plain explanation and
// the right status, never a stack trace or internals. (The JSON API keeps its own handler and
// its ApiError bodies.)
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PageError } from '../sessions/guards.ts';
import { securityLog } from './security-log.ts';

const KNOWN: Record<string, { title: string; message: string }> = {
  FST_CSRF_INVALID_TOKEN: { title: 'Form expired', message: 'This form was opened in another session or has expired. Go back, reload the page and send it again.' },
  FST_CSRF_MISSING_SECRET: { title: 'Form expired', message: 'This form was opened in another session or has expired. Go back, reload the page and send it again.' },
  FST_ERR_CTP_BODY_TOO_LARGE: { title: 'Too large', message: 'What you sent is too large.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { title: 'Not a form', message: 'Send the page\'s own form.' },
};

export function pageErrorHandler(app: FastifyInstance) {
  return async function handle(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    if (error instanceof PageError) {
      if (error.statusCode === 401 || error.statusCode === 403) securityLog(request, 'request.refused', { status: error.statusCode, reason: error.title });
      return reply.code(error.statusCode).page('views/error', { title: error.title, message: error.message, link: error.link ?? null });
    }
    const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    const known = error.code ? KNOWN[error.code] : undefined;
    if (status === 401 || status === 403) securityLog(request, 'request.refused', { status, reason: error.code ?? 'refused' });
    if (status === 429) return reply.code(429).page('views/error', { title: 'Too many attempts', message: 'Too many attempts from here. Wait a minute and try again.', link: null });
    if (status >= 500) app.log.error({ err: { type: error.name, code: error.code } , route: request.routeOptions.url }, 'dashboard request failed');
    const fallback = status >= 500 ? { title: 'Something went wrong', message: 'The gateway could not finish this just now. Try again in a moment.' } : { title: 'Not accepted', message: 'The request was not accepted. Go back and check the form.' };
    return reply.code(status).page('views/error', { ...(known ?? fallback), link: null });
  };
}
