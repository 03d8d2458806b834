// The chat network's restriction signals as an instance manager reports them (issue 27,
// docs/policy.md "The number guard"). Pure: the mapping calls these on the envelope's data.
//
// Baileys reports a send the network refused as messages.update {status: 0, messageStubParameters:
// [code]} (Baileys 7.0.0-rc.9 src/Socket/messages-recv.ts ~l.1366-1395): 463 a "reachout timelock"
// (new contacts refused until an end time), 475 "message capping" (a quota of new contacts per
// cycle), 479 another refusal of the send. Evolution 2.3.6, 2.3.7 and 2.4.0-rc2 keep only the
// status (src/utils/renderStatus.ts l.3-10: 0 → "ERROR") and drop messageStubParameters
// (whatsapp.baileys.service.ts messages.update data, l.1475-1483 in 2.3.6, l.1613-1621 in 2.3.7,
// l.1803-1811 in 2.4.0-rc2): from them a refusal is an ERROR on our own send with no code. A
// manager that forwards the code (or Baileys' reachoutTimeLock {isActive, timeEnforcementEnds},
// which newer Baileys puts on connection.update) is read too, with the end time when given.
// A close is posted only for the codes Evolution does not reconnect on (l.402 in 2.3.6, l.428 in
// 2.3.7, l.498 in 2.4.0-rc2): 401 loggedOut and 403 forbidden are the ones that speak of the number.

import type { RestrictionSignal } from '@gw/policy';

/** A restriction signal the envelope carries; the stage adds who and when. */
export interface RestrictionReport {
  signal: RestrictionSignal;
  /** The network's code when the manager forwarded it ('463', '475', '479'), else null. */
  code: string | null;
  /** When the restriction ends (epoch ms), when the manager said. */
  until: number | null;
  /** The manager's id of the refused message (messages.update), if any. */
  externalMessageId?: string;
  /**
   * True for an ERROR with no code: a possible restriction only when the message is one of ours
   * (an ERROR on a message the phone sent itself says nothing the gateway can act on).
   */
  ourSendOnly: boolean;
  /** What makes two reports of one signal the same one (the message id, the close's date_time). */
  ref?: string;
}

const CODE_SIGNALS: Record<string, RestrictionSignal> = { '463': 'reachout_timelock', '475': 'message_capping', '479': 'send_error' };
const CLOSE_SIGNALS: Record<number, RestrictionSignal> = { 401: 'logged_out', 403: 'banned' };

/** The first restriction code among a message's stub parameters (Baileys writes them as strings). */
export function restrictionCode(stubParameters: unknown): string | null {
  if (!Array.isArray(stubParameters)) return null;
  for (const parameter of stubParameters) {
    const code = typeof parameter === 'number' ? String(parameter) : typeof parameter === 'string' ? parameter.trim() : '';
    if (Object.hasOwn(CODE_SIGNALS, code)) return code;
  }
  return null;
}

export const signalOfCode = (code: string): RestrictionSignal => CODE_SIGNALS[code]!;

/** The signal of a close's statusReason (401 logged out, 403 banned), or null for any other. */
export const signalOfClose = (statusReason: unknown): RestrictionSignal | null => (typeof statusReason === 'number' ? (CLOSE_SIGNALS[statusReason] ?? null) : null);

/** The largest epoch ms a JS Date holds (ECMA-262 21.4.1.1). */
const MAX_DATE_MS = 8.64e15;

/**
 * An end time as the tools write it: epoch seconds or ms (a number or digits, whatsmeow's
 * UnixString), or an ISO date (a JS Date through JSON). Null when absent or not a time.
 */
export function endTime(value: unknown): number | null {
  if (typeof value === 'number' || (typeof value === 'string' && /^\d{9,13}$/.test(value))) {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) return null;
    const ms = n < 1e12 ? n * 1000 : n;
    // Beyond what a Date can hold the time could not be written as ISO anywhere downstream.
    return ms <= MAX_DATE_MS ? ms : null;
  }
  if (typeof value === 'string' && value.length <= 40 && /^\d{4}-\d{2}-\d{2}T/.test(value)) {
    const at = Date.parse(value);
    return Number.isFinite(at) ? at : null;
  }
  return null;
}
