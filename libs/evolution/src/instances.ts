import { callManager } from './http.ts';

/**
 * The manager answered, but not with success: its HTTP status, so a caller can tell "no such
 * instance" (404) from a refusal. The message names the status, never the URL or the apikey.
 */
export class ManagerHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ManagerHttpError';
  }
}

/** Instance lifecycle calls of the Evolution API v2 used by the operator tooling and the dashboard. */
export async function createInstance(managerUrl: string, apiKey: string, instanceName: string, timeoutMs = 5000, options: { qrcode?: boolean } = {}) {
  const { status, body } = await callManager('POST', `${managerUrl.replace(/\/+$/, '')}/instance/create`, apiKey, timeoutMs, {
    instanceName,
    // true: the manager starts pairing at once and answers with the first QR code.
    qrcode: options.qrcode ?? true,
    integration: 'WHATSAPP-BAILEYS',
  });
  if (status !== 201 && status !== 200) throw new ManagerHttpError(status, `instance manager refused to create the instance (HTTP ${status})`);
  const hash = (body as { hash?: unknown }).hash;
  const token = typeof hash === 'string' ? hash : (hash as { apikey?: string } | undefined)?.apikey;
  return { instanceName, token: token ?? null, body };
}

export async function connectionState(managerUrl: string, apiKey: string, instanceName: string, timeoutMs = 5000): Promise<string> {
  const { status, body } = await callManager(
    'GET',
    `${managerUrl.replace(/\/+$/, '')}/instance/connectionState/${encodeURIComponent(instanceName)}`,
    apiKey,
    timeoutMs,
  );
  if (status !== 200) throw new ManagerHttpError(status, `instance manager answered HTTP ${status} for the connection state`);
  return String((body as { instance?: { state?: unknown } }).instance?.state ?? 'unknown');
}

const base = (managerUrl: string) => managerUrl.replace(/\/+$/, '');

/** Starts pairing: the QR as a base64 PNG data URI and its raw code, and a pairing code when a number is given. */
export async function connectInstance(managerUrl: string, apiKey: string, instanceName: string, number?: string, timeoutMs = 5000) {
  const query = number ? `?number=${encodeURIComponent(number.replace(/^\+/, ''))}` : '';
  const { status, body } = await callManager('GET', `${base(managerUrl)}/instance/connect/${encodeURIComponent(instanceName)}${query}`, apiKey, timeoutMs);
  if (status !== 200) throw new ManagerHttpError(status, `instance manager answered HTTP ${status} to connect`);
  const answer = body as { base64?: unknown; code?: unknown; pairingCode?: unknown; instance?: { state?: unknown } };
  return {
    qr_base64: typeof answer.base64 === 'string' ? answer.base64 : null,
    qr_code: typeof answer.code === 'string' ? answer.code : null,
    pairing_code: typeof answer.pairingCode === 'string' ? answer.pairingCode : null,
    state: typeof answer.instance?.state === 'string' ? answer.instance.state : 'connecting',
  };
}

export async function logoutInstance(managerUrl: string, apiKey: string, instanceName: string, timeoutMs = 5000): Promise<void> {
  const { status } = await callManager('DELETE', `${base(managerUrl)}/instance/logout/${encodeURIComponent(instanceName)}`, apiKey, timeoutMs);
  if (status !== 200) throw new ManagerHttpError(status, `instance manager answered HTTP ${status} to logout`);
}

/** Evolution refuses (400) to delete a connected instance: log it out first. A 404 means there is no such instance (any more). */
export async function deleteInstance(managerUrl: string, apiKey: string, instanceName: string, timeoutMs = 5000): Promise<void> {
  const { status } = await callManager('DELETE', `${base(managerUrl)}/instance/delete/${encodeURIComponent(instanceName)}`, apiKey, timeoutMs);
  if (status !== 200) throw new ManagerHttpError(status, `instance manager answered HTTP ${status} to delete`);
}

/** Points the instance's webhook at `url` for the given Evolution events. */
export async function setWebhook(managerUrl: string, apiKey: string, instanceName: string, url: string, events: string[], timeoutMs = 5000): Promise<void> {
  const { status } = await callManager('POST', `${base(managerUrl)}/webhook/set/${encodeURIComponent(instanceName)}`, apiKey, timeoutMs, {
    webhook: { enabled: true, url, byEvents: false, base64: false, events },
  });
  if (status !== 200 && status !== 201) throw new ManagerHttpError(status, `instance manager answered HTTP ${status} to webhook/set`);
}
