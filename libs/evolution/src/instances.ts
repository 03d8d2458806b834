import { callManager, isLicenseRequired } from './http.ts';

/** What a manager's refusal means, where the gateway acts on it or shows it in words. */
export type ManagerErrorCode = 'license_required' | 'name_in_use' | 'not_found' | 'not_closed' | 'http_error';

/** What a customer reads for `license_required` (the dashboard, gatewayctl and the send API say the same). */
export const LICENSE_REQUIRED_WORDS =
  'The instance manager (Evolution API) is not activated yet: open its /manager page and activate its licence there, then try again.';

/**
 * The manager answered, but not with success: its HTTP status, so a caller can tell "no such
 * instance" (404) from a refusal, and a `code` for the refusals the gateway explains. The message
 * names the status, never the URL or the apikey.
 */
export class ManagerHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: ManagerErrorCode = 'http_error',
  ) {
    super(message);
    this.name = 'ManagerHttpError';
  }
}

/** The error for a non-success answer to `what`; the licence gate's 503 gets its own words. */
function refusal(status: number, body: unknown, what: string): ManagerHttpError {
  if (isLicenseRequired(status, body)) return new ManagerHttpError(status, `instance manager answered HTTP 503 LICENSE_REQUIRED to ${what}: ${LICENSE_REQUIRED_WORDS}`, 'license_required');
  return new ManagerHttpError(status, `instance manager answered HTTP ${status} to ${what}`, status === 404 ? 'not_found' : 'http_error');
}

const base = (managerUrl: string) => managerUrl.replace(/\/+$/, '');
const path = (name: string) => encodeURIComponent(name);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `GET /instance/connect` from `close` connects and then `await delay(2000)` before answering
 * (instance.controller.ts connectToWhatsapp, tags 2.3.6 and 2.4.0-rc2): a connect call's timeout
 * covers that on top of the caller's budget.
 */
export const CONNECT_DELAY_MS = 2000;
/** How long a leftover's name may stay taken after its delete (Evolution removes it from memory and its database asynchronously). */
const NAME_RELEASE_MS = 3000;
/** A cleanup after a failed create: each call's budget, and how long an instance created late is looked for. */
const CLEANUP_TIMEOUT_MS = 5000;
const CLEANUP_WINDOW_MS = 2000;
const POLL_MS = 100;

export interface CreateInstanceOptions {
  /** Start pairing once created (a QR code to show): default true. */
  qrcode?: boolean;
  /**
   * The name is the caller's own (derived from its records, so nobody else uses it): an instance
   * already under it is a leftover of an earlier try of the caller's (one that timed out after the
   * manager had created it), and is deleted and created afresh instead of refusing (403).
   */
  replaceLeftover?: boolean;
}

export interface CreatedInstance {
  instanceName: string;
  /** The instance's own apikey (`hash`), null when the manager gave none. */
  token: string | null;
  body: unknown;
  /** The first codes when pairing was started; null when not asked for, or when connect failed (the instance is there: pair it later). */
  pairing: Pairing | null;
}

/**
 * Creates an instance on the manager. Never with `qrcode: true`: Evolution then connects and
 * `await delay(5000)` before it answers (instance.controller.ts createInstance ~l.145-147 at
 * 2.3.6, the same in 2.4.0-rc2), which outlasts a short timeout and leaves the instance behind,
 * pairing. Instead the create (quick: rows only) and then `/instance/connect` for the QR.
 *
 * A create that failed without a clear refusal (timeout, connection lost, 5xx) may have created
 * the instance anyway (Evolution saves it before anything slow): it is deleted again, so no
 * stray instance churns QR codes on the customer's server; if even that fails, a later try with
 * `replaceLeftover` finds it (403 "already in use", instanceLoggedGuard in
 * src/api/guards/instance.guard.ts) and replaces it.
 */
export async function createInstance(managerUrl: string, apiKey: string, instanceName: string, timeoutMs = 5000, options: CreateInstanceOptions = {}): Promise<CreatedInstance> {
  let answer = await createOnce(managerUrl, apiKey, instanceName, timeoutMs);
  if (answer.status === 403 && options.replaceLeftover) {
    await deleteInstance(managerUrl, apiKey, instanceName, timeoutMs);
    const until = Date.now() + NAME_RELEASE_MS;
    do {
      answer = await createOnce(managerUrl, apiKey, instanceName, timeoutMs);
      if (answer.status !== 403) break;
      await sleep(POLL_MS);
    } while (Date.now() < until);
  }
  const { status, body } = answer;
  if (status === 403) throw new ManagerHttpError(403, `instance manager answered HTTP 403: the name ${instanceName} is already in use there`, 'name_in_use');
  if (status !== 201 && status !== 200) throw refusal(status, body, 'create the instance');
  const hash = (body as { hash?: unknown }).hash;
  const token = typeof hash === 'string' ? hash : (hash as { apikey?: string } | undefined)?.apikey;
  let pairing: Pairing | null = null;
  if (options.qrcode ?? true) pairing = await connectInstance(managerUrl, token ?? apiKey, instanceName, undefined, timeoutMs).catch(() => null);
  return { instanceName, token: token ?? null, body, pairing };
}

/** One create call; a failure that may have left the instance behind is cleaned up before it is thrown. */
async function createOnce(managerUrl: string, apiKey: string, instanceName: string, timeoutMs: number) {
  let answer;
  try {
    answer = await callManager('POST', `${base(managerUrl)}/instance/create`, apiKey, timeoutMs, { instanceName, qrcode: false, integration: 'WHATSAPP-BAILEYS' }, { route: '/instance/create' });
  } catch (error) {
    await cleanUpAfterFailedCreate(managerUrl, apiKey, instanceName);
    throw error;
  }
  // A 5xx other than the licence gate (which stops the request before the router) may come after the save.
  if (answer.status >= 500 && !isLicenseRequired(answer.status, answer.body)) await cleanUpAfterFailedCreate(managerUrl, apiKey, instanceName);
  return answer;
}

/**
 * Deletes what a failed create may have created. The create may still be on its way to the
 * manager, so a "no such instance" is asked again for a short while; best effort: errors are
 * swallowed (the caller reports the create's own failure).
 */
async function cleanUpAfterFailedCreate(managerUrl: string, apiKey: string, instanceName: string): Promise<void> {
  const until = Date.now() + CLEANUP_WINDOW_MS;
  for (;;) {
    try {
      await deleteInstance(managerUrl, apiKey, instanceName, CLEANUP_TIMEOUT_MS);
      return;
    } catch (error) {
      if (!(error instanceof ManagerHttpError && error.code === 'not_found') || Date.now() >= until) return;
    }
    await sleep(POLL_MS);
  }
}

export async function connectionState(managerUrl: string, apiKey: string, instanceName: string, timeoutMs = 5000): Promise<string> {
  const { status, body } = await callManager('GET', `${base(managerUrl)}/instance/connectionState/${path(instanceName)}`, apiKey, timeoutMs, undefined, {
    route: '/instance/connectionState/{instance}',
  });
  if (status !== 200) throw refusal(status, body, 'the connection state');
  return String((body as { instance?: { state?: unknown } }).instance?.state ?? 'unknown');
}

export interface Pairing {
  qr_base64: string | null;
  qr_code: string | null;
  pairing_code: string | null;
  state: string;
}

/**
 * Starts pairing: the QR as a base64 PNG data URI and its raw code, and a pairing code when a
 * number is given. Evolution uses the number only from `close`: while `connecting` it answers
 * the codes it holds (see `restartPairing`).
 */
export async function connectInstance(managerUrl: string, apiKey: string, instanceName: string, number?: string, timeoutMs = 5000): Promise<Pairing> {
  const query = number ? `?number=${encodeURIComponent(number.replace(/^\+/, ''))}` : '';
  const { status, body } = await callManager('GET', `${base(managerUrl)}/instance/connect/${path(instanceName)}${query}`, apiKey, timeoutMs + CONNECT_DELAY_MS, undefined, {
    route: '/instance/connect/{instance}',
  });
  if (status !== 200) throw refusal(status, body, 'connect');
  const answer = body as { base64?: unknown; code?: unknown; pairingCode?: unknown; instance?: { state?: unknown } };
  return {
    qr_base64: typeof answer.base64 === 'string' ? answer.base64 : null,
    qr_code: typeof answer.code === 'string' ? answer.code : null,
    pairing_code: typeof answer.pairingCode === 'string' ? answer.pairingCode : null,
    state: typeof answer.instance?.state === 'string' ? answer.instance.state : 'connecting',
  };
}

/** Asks the manager to log the instance out. In 2.3.x it answers before the logout is done (see `waitUntilClosed`). */
export async function logoutInstance(managerUrl: string, apiKey: string, instanceName: string, timeoutMs = 5000): Promise<void> {
  const { status, body } = await callManager('DELETE', `${base(managerUrl)}/instance/logout/${path(instanceName)}`, apiKey, timeoutMs, undefined, {
    route: '/instance/logout/{instance}',
  });
  if (status !== 200) throw refusal(status, body, 'logout');
}

/**
 * Polls the connection state until it is `close`, for at most `withinMs` (the dashboard's
 * DASHBOARD_PAIRING_CLOSE_WAIT_MS, passed down). Evolution 2.3.x's
 * logout calls logoutInstance without awaiting it (instance.controller.ts logout, 2.3.6): the
 * state turns close only when Baileys closes the socket (connectionUpdate in
 * whatsapp.baileys.service.ts). Throws `not_closed` when it does not in time.
 */
export async function waitUntilClosed(managerUrl: string, apiKey: string, instanceName: string, withinMs: number, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + withinMs;
  for (;;) {
    if ((await connectionState(managerUrl, apiKey, instanceName, timeoutMs)) === 'close') return;
    if (Date.now() >= until) {
      throw new ManagerHttpError(200, `the instance manager did not close ${instanceName} within ${Math.round(withinMs / 1000)} s of the logout`, 'not_closed');
    }
    await sleep(Math.min(250, Math.max(0, until - Date.now())));
  }
}

/**
 * Pairing afresh, e.g. with a phone number for a pairing code: Evolution's connect ignores the
 * number unless the instance is `close` (instance.controller.ts connectToWhatsapp: `connecting`
 * answers the QR it holds; Evolution issue #2197), so a pairing under way is logged out and
 * waited for until closed before connecting with the number.
 */
export async function restartPairing(managerUrl: string, apiKey: string, instanceName: string, number: string | undefined, options: { closeWithinMs: number; timeoutMs?: number }): Promise<Pairing> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const state = await connectionState(managerUrl, apiKey, instanceName, timeoutMs);
  if (state === 'connecting') {
    await logoutInstance(managerUrl, apiKey, instanceName, timeoutMs);
    await waitUntilClosed(managerUrl, apiKey, instanceName, options.closeWithinMs, timeoutMs);
  }
  return connectInstance(managerUrl, apiKey, instanceName, number, timeoutMs);
}

/** Evolution 2.3+ logs a connecting or open instance out before deleting it. A 404 means there is no such instance (any more). */
export async function deleteInstance(managerUrl: string, apiKey: string, instanceName: string, timeoutMs = 5000): Promise<void> {
  const { status, body } = await callManager('DELETE', `${base(managerUrl)}/instance/delete/${path(instanceName)}`, apiKey, timeoutMs, undefined, {
    route: '/instance/delete/{instance}',
  });
  if (status !== 200) throw refusal(status, body, 'delete');
}

/**
 * Points the instance's webhook at `url` for the given Evolution events, posted with `headers`
 * (e.g. the gateway's `Authorization`, so no credential sits in the URL, which Evolution logs and
 * shows). Every supported release stores `webhook.headers` and sends them with each post:
 * webhook.schema.ts (`headers: { type: 'object' }`) and webhook.controller.ts set()/emit(), 2.3.6,
 * 2.3.7 and 2.4.0-rc2 (2.4.0-rc2 adds its X-Instance-* headers after them). The call replaces any
 * headers set before. A header named `jwt_key` would be turned into a signed JWT: never send one.
 */
export async function setWebhook(
  managerUrl: string,
  apiKey: string,
  instanceName: string,
  url: string,
  events: string[],
  options: { headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<void> {
  const { status, body } = await callManager('POST', `${base(managerUrl)}/webhook/set/${path(instanceName)}`, apiKey, options.timeoutMs ?? 5000, {
    webhook: { enabled: true, url, ...(options.headers ? { headers: options.headers } : {}), byEvents: false, base64: false, events },
  }, { route: '/webhook/set/{instance}' });
  if (status !== 200 && status !== 201) throw refusal(status, body, 'webhook/set');
}
