import { Agent, request } from 'undici';

// One keep-alive agent for every manager: connections are reused across sends.
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 64, pipelining: 1 });

export interface HttpResult {
  status: number;
  body: unknown;
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
): Promise<HttpResult> {
  const response = await request(url, {
    method,
    dispatcher: agent,
    // A content type only with a body: servers refuse an empty JSON body (e.g. on DELETE).
    headers: { apikey: apiKey, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.body.text();
  let parsed: unknown = text;
  try {
    parsed = text.length > 0 ? JSON.parse(text) : null;
  } catch {
    // Not JSON: keep the text for the failure detail.
  }
  return { status: response.statusCode, body: parsed };
}
