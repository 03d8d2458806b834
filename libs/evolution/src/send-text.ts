import type { TraceContext } from '@gw/tracing';
import { callManager, isLicenseRequired } from './http.ts';
import { LICENSE_REQUIRED_WORDS } from './instances.ts';

/** The outcome of one sendText call, classified for the delivery stage. */
export type SendTextResult =
  | { kind: 'accepted'; providerMessageId: string; providerStatus: string }
  /** Certainly not sent: the manager refused (e.g. the number is not on the network) or was unreachable. */
  | { kind: 'failed'; reason: 'unknown_number' | 'manager_rejected' | 'manager_license_required' | 'manager_error' | 'manager_unavailable' | 'circuit_open'; detail: string }
  /** The request may have been sent (timeout or connection lost mid-request): never resend blindly. */
  | { kind: 'ambiguous'; detail: string };

export interface SendTextRequest {
  managerUrl: string;
  apiKey: string;
  instance: string;
  /** E.164; Evolution wants digits only. */
  phone: string;
  text: string;
  /**
   * Evolution's sendText `delay` (ms): the manager shows "composing" to the recipient this long,
   * then "paused", then sends, and only then answers (whatsapp.baileys.service.ts
   * sendMessageWithTyping; docs/evolution-compatibility.md, "typing delay"). 0 or absent: none.
   */
  typingMs?: number;
  /** The call's budget beyond the typing delay: the call waits at most typingMs + timeoutMs. */
  timeoutMs: number;
  /** The trace of the send (the delivery stage's span of the decision): the call continues it. */
  trace?: TraceContext;
}

// Errors that happen before a byte of the request could reach the manager.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

function hasNonExistentNumber(body: unknown): boolean {
  const message = (body as { response?: { message?: unknown } } | null)?.response?.message;
  return Array.isArray(message) && message.some((m) => (m as { exists?: unknown })?.exists === false);
}

function summary(body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return (text ?? '').slice(0, 300);
}

export async function sendText(req: SendTextRequest): Promise<SendTextResult> {
  const url = `${req.managerUrl.replace(/\/+$/, '')}/message/sendText/${encodeURIComponent(req.instance)}`;
  const typingMs = Math.max(0, Math.round(req.typingMs ?? 0));
  try {
    const { status, body } = await callManager(
      'POST',
      url,
      req.apiKey,
      // The manager answers only after the typing delay: the call's timeout waits it out.
      req.timeoutMs + typingMs,
      { number: req.phone.replace(/^\+/, ''), text: req.text, ...(typingMs > 0 ? { delay: typingMs } : {}) },
      { trace: req.trace, route: '/message/sendText/{instance}' },
    );
    if (status === 200 || status === 201) {
      const key = (body as { key?: { id?: unknown }; status?: unknown } | null)?.key;
      if (typeof key?.id !== 'string') return { kind: 'ambiguous', detail: `manager answered ${status} without key.id` };
      const providerStatus = (body as { status?: unknown }).status;
      return { kind: 'accepted', providerMessageId: key.id, providerStatus: typeof providerStatus === 'string' ? providerStatus : 'PENDING' };
    }
    // Evolution 2.4's licence gate answers before the router: certainly not sent, and a healthy
    // manager (the breaker does not count it). The detail is the gateway's words, not the manager's body.
    if (isLicenseRequired(status, body)) return { kind: 'failed', reason: 'manager_license_required', detail: LICENSE_REQUIRED_WORDS };
    if (status === 400 && hasNonExistentNumber(body)) return { kind: 'failed', reason: 'unknown_number', detail: 'the number is not on the network' };
    if (status >= 400 && status < 500) return { kind: 'failed', reason: 'manager_rejected', detail: `manager answered ${status}: ${summary(body)}` };
    return { kind: 'failed', reason: 'manager_error', detail: `manager answered ${status}` };
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    if (NOT_SENT_CODES.has(code)) return { kind: 'failed', reason: 'manager_unavailable', detail: `manager unreachable (${code})` };
    return { kind: 'ambiguous', detail: `no answer from the manager (${code || 'error'})` };
  }
}
