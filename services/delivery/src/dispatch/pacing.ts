import { createHash } from 'node:crypto';
import type { Runtime } from '@gw/runtime';

type DeliveryConfig = Runtime['config']['delivery'];

/** Human pacing of sends (docs/decisions.md "Human pacing at delivery"), from config.delivery.pacing. */
export type PacingSettings = DeliveryConfig['pacing'];

/**
 * A number in [0, 1) derived from the message id: the "random" part of a send's pacing. Derived,
 * not drawn, so a redelivered or resent message paces exactly as its first attempt did, and a
 * replay of the log gives the same figures. `salt` keeps the typing and gap draws apart.
 */
export function unitOf(messageId: string, salt: string): number {
  const digest = createHash('sha256').update(`${salt}:${messageId}`).digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/**
 * How long the instance shows "typing…" before the send (Evolution's sendText `delay`, in ms):
 * the text's length at DELIVERY_TYPING_MS_PER_CHAR, times a factor in [1 - jitter, 1 + jitter]
 * from the message id, held within [min, max] (max is a hard bound: the call's timeout counts on
 * it). 0 for the purposes that skip typing (one-time codes) and with a max of 0.
 */
export function typingDelayMs(text: string, messageId: string, purpose: string, s: PacingSettings): number {
  if (s.typingMaxMs === 0 || s.typingSkipPurposes.includes(purpose)) return 0;
  const factor = 1 + s.typingJitter * (2 * unitOf(messageId, 'typing') - 1);
  const jittered = [...text].length * s.typingMsPerChar * factor;
  return Math.round(Math.min(s.typingMaxMs, Math.max(s.typingMinMs, jittered)));
}

/**
 * Least time between the end of this send on its instance and the start of the instance's next:
 * DELIVERY_SEND_GAP_MS lengthened by up to DELIVERY_SEND_GAP_JITTER of it, from the message id.
 */
export function sendGapMs(messageId: string, s: PacingSettings): number {
  return Math.round(s.gapMs * (1 + s.gapJitter * unitOf(messageId, 'gap')));
}

/** The longest a send's manager call may take: its timeout, plus the longest typing delay it waits out first. */
export function longestCallMs(delivery: Pick<DeliveryConfig, 'sendTimeoutMs' | 'pacing'>): number {
  return delivery.sendTimeoutMs + delivery.pacing.typingMaxMs;
}
