export interface HttpResult {
  status: number;
  body: any;
  headers: Headers;
}

/** POST /api/send-message with the given key, body and headers; the body is sent as given when a string. */
export async function send(
  baseUrl: string,
  apiKey: string | null,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const response = await fetch(`${baseUrl}/api/send-message`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep text
  }
  return { status: response.status, body: parsed, headers: response.headers };
}
