import { Agent, request } from 'undici';
import { ATTR_HTTP_RESPONSE_STATUS_CODE, failSpan, httpClientAttributes, httpSpanName, inSpan, SpanKind, withTraceHeaders, type TraceContext } from '@gw/tracing';

// One keep-alive agent for every manager: connections are reused across sends.
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 64, pipelining: 1 });

export interface HttpResult {
  status: number;
  body: unknown;
}

export interface CallOptions {
  /** The trace the call belongs to (a new one when absent): the call is a client span in it, and the manager gets its traceparent. */
  trace?: TraceContext;
  /** The path's template, for the span's name (e.g. /message/sendText/{instance}); the path itself may name an instance. */
  route?: string;
}

/**
 * Evolution 2.4 refuses every business route until the server is activated in its manager UI:
 * HTTP 503 `{error: 'service not activated', code: 'LICENSE_REQUIRED', register_url, message, ...}`
 * (tag 2.4.0-rc2, src/licensing/runtime.ts gateMiddleware, mounted before the router in src/main.ts).
 */
export function isLicenseRequired(status: number, body: unknown): boolean {
  return status === 503 && (body as { code?: unknown } | null)?.code === 'LICENSE_REQUIRED';
}

type LicenseListener = (operation: string) => void;
const licenseListeners = new Set<LicenseListener>();

/**
 * Calls `listener` with the operation (the route template, e.g. /message/sendText/{instance}) each
 * time a manager answers LICENSE_REQUIRED; a process counts them (gateway_manager_license_required_total).
 * Returns the unsubscribe.
 */
export function onManagerLicenseRequired(listener: LicenseListener): () => void {
  licenseListeners.add(listener);
  return () => licenseListeners.delete(listener);
}

function notifyLicenseRequired(operation: string): void {
  for (const listener of licenseListeners) {
    try {
      listener(operation);
    } catch {
      // A counter must never fail the call it counts.
    }
  }
}

/**
 * One call to a manager, bounded as a whole by `timeoutMs` (connecting, the answer's head and its
 * body together): the delivery resolver relies on no call outliving its attempt by more than that.
 */
export async function callManager(
  method: 'GET' | 'POST' | 'DELETE' | 'PUT',
  url: string,
  apiKey: string,
  timeoutMs: number,
  body?: unknown,
  options: CallOptions = {},
): Promise<HttpResult> {
  const spec = { kind: SpanKind.CLIENT, attributes: httpClientAttributes(method, url, options.route) };
  return inSpan('@gw/evolution', httpSpanName(method, options.route), spec, options.trace, async ({ span, trace }) => {
    const response = await request(url, {
      method,
      dispatcher: agent,
      // A content type only with a body: servers refuse an empty JSON body (e.g. on DELETE).
      headers: withTraceHeaders({ apikey: apiKey, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, trace),
      body: body === undefined ? undefined : JSON.stringify(body),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, response.statusCode);
    if (response.statusCode >= 500) failSpan(span, String(response.statusCode));
    const text = await response.body.text();
    let parsed: unknown = text;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : null;
    } catch {
      // Not JSON: keep the text for the failure detail.
    }
    if (isLicenseRequired(response.statusCode, parsed)) notifyLicenseRequired(options.route ?? method);
    return { status: response.statusCode, body: parsed };
  });
}
