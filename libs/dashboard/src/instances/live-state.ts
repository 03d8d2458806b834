// An instance's connection as its manager reports it now (not the projection of its events, which
// lags and is empty until the manager's webhook reaches the gateway), with the QR code and pairing
// code to link a phone while it is pairing.
import type { ManagedInstance } from '@gw/accounts';
import { connectInstance, connectionState, ManagerHttpError } from '@gw/evolution';

/** What GET /instances/:id/state answers, and what the manage page shows at load time. */
export interface LiveState {
  /** Evolution's state (open, connecting, close), or unreachable when the manager did not answer. */
  connection_state: string;
  /** The QR code as a PNG data URL while pairing; null otherwise, or for whom may not pair. */
  qr: string | null;
  pairing_code: string | null;
}

/** How each state reads on the page (the live script takes these from the page, so they are written once). */
export const STATE_LABELS: Record<string, string> = {
  open: 'Connected',
  connecting: 'Waiting for a phone to link',
  close: 'Not connected',
  unreachable: 'Instance manager not reachable',
  license_required: 'Instance manager not activated',
};

/** Evolution 2.4 refuses everything until activated (HTTP 503 LICENSE_REQUIRED): a state of its own, as the customer can act on it. */
const isLicenseRequired = (error: unknown) => error instanceof ManagerHttpError && error.code === 'license_required';

export const stateTone = (state: string) => (state === 'open' ? 'good' : state === 'connecting' ? '' : 'bad');

// Short: a page (and its poll) should not hang on a slow manager.
const TIMEOUT_MS = 3000;
const PNG_DATA_URL = /^data:image\/png;base64,[A-Za-z0-9+/=]+$/;

/**
 * The manager's state of the instance, `unreachable` when it does not answer (or no longer knows
 * it), `license_required` when it is not activated.
 */
export async function connectionOf(instance: ManagedInstance): Promise<string> {
  try {
    return await connectionState(instance.managerUrl, instance.apiKey, instance.managerInstance, TIMEOUT_MS);
  } catch (error) {
    return isLicenseRequired(error) ? 'license_required' : 'unreachable';
  }
}

/**
 * The state, and while pairing (for whom may pair) the current QR and pairing code. Asking
 * Evolution to connect an instance that is already pairing starts nothing new: it answers the
 * code it holds now, which it replaces as the phone app's QR expires; so polling this follows
 * the rotation.
 */
export async function liveState(instance: ManagedInstance, options: { withCodes: boolean }): Promise<LiveState> {
  const state = await connectionOf(instance);
  if (state !== 'connecting' || !options.withCodes) return { connection_state: state, qr: null, pairing_code: null };
  try {
    const pairing = await connectInstance(instance.managerUrl, instance.apiKey, instance.managerInstance, undefined, TIMEOUT_MS);
    // It may have linked in between: connect then answers the state, without codes.
    const qr = pairing.qr_base64 && PNG_DATA_URL.test(pairing.qr_base64) ? pairing.qr_base64 : null;
    return { connection_state: pairing.state, qr, pairing_code: pairing.pairing_code };
  } catch {
    return { connection_state: state, qr: null, pairing_code: null };
  }
}
