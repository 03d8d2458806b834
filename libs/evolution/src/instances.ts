import { callManager } from './http.ts';

/** Instance lifecycle calls of the Evolution API v2 used by the operator tooling. */
export async function createInstance(managerUrl: string, apiKey: string, instanceName: string, timeoutMs = 5000) {
  const { status, body } = await callManager('POST', `${managerUrl.replace(/\/+$/, '')}/instance/create`, apiKey, timeoutMs, {
    instanceName,
    qrcode: true,
    integration: 'WHATSAPP-BAILEYS',
  });
  if (status !== 201 && status !== 200) throw new Error(`instance manager refused to create the instance (HTTP ${status})`);
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
  if (status !== 200) throw new Error(`instance manager answered HTTP ${status} for the connection state`);
  return String((body as { instance?: { state?: unknown } }).instance?.state ?? 'unknown');
}
