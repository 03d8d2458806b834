// The number guard in words (issue 27): per instance, its age, its warm-up allowance of first
// contacts today and what is left, the first contacts it made today, and a restriction the chat
// network's warnings put on it, with when it ends. The same sentence is the notice /usage, the
// instance list and the instance page show while an instance is restricted. Pure: the
// `instance_guard` rows (data.ts) and the instances in, views out.
import { count, utcUntil } from '../format.ts';
import { dayLabels, type InstanceRef } from './view.ts';

/** A row of `instance_guard`, the policy consumer's projection of the guard. */
export interface GuardRow {
  instance_id: string;
  first_connected_at: Date | null;
  /** Whole days since first connected, as the guard counts them. */
  age_days: number | null;
  /** null: no warm-up limit applies (an established instance). */
  warm_up_allowance_today: number | null;
  first_contacts_today: number;
  first_contacts_left_today: number | null;
  restricted_until: Date | null;
  restriction_signal: string | null;
  restriction_signals: number;
  updated_at: Date;
}

/** What each restriction signal means, for the customer. */
const SIGNAL_WORDS: Record<string, string> = {
  send_error: 'the chat network rejected a message to a new contact',
  reachout_timelock: 'the chat network put a time lock on messages to new contacts',
  message_capping: 'the chat network capped how many new contacts this number may message',
  banned: 'the chat network disconnected this number as banned',
  logged_out: 'the chat network logged this number out',
};

/** What still goes: a disconnected number sends nothing until a phone is linked again. */
const STILL_GOES = 'Replies to people who wrote to you still go; new contacts wait.';
const RELINK = 'Nothing goes out until a phone is linked again; after that, replies to people who wrote to you go and new contacts wait.';

export interface RestrictionView {
  instanceId: string;
  name: string;
  signal: string;
  untilIso: string;
  /** "Restricted until 14:05 UTC" */
  head: string;
  /** "the chat network rejected a message to a new contact. Replies … wait." */
  why: string;
  /** The whole sentence: head, ": ", why. */
  text: string;
}

/** The instance's restriction now, in words; null when it has none or it has ended. */
export function restrictionView(row: GuardRow | undefined, instance: InstanceRef, now: number): RestrictionView | null {
  if (!row?.restricted_until || row.restricted_until.getTime() <= now) return null;
  const signal = row.restriction_signal ?? 'unknown';
  const why = SIGNAL_WORDS[signal] ?? 'the chat network warned this number';
  const disconnected = signal === 'banned' || signal === 'logged_out';
  const head = `Restricted until ${utcUntil(row.restricted_until, now)}`;
  const words = `${why}. ${disconnected ? RELINK : STILL_GOES}`;
  return { instanceId: instance.id, name: instance.name, signal, untilIso: row.restricted_until.toISOString(), head, why: words, text: `${head}: ${words}` };
}

/** The restricted ones among the instances, in their order: the notices. */
export function restrictionNotices(rows: readonly GuardRow[], instances: readonly InstanceRef[], now: number): RestrictionView[] {
  const byId = new Map(rows.map((r) => [r.instance_id, r]));
  return instances.flatMap((i) => restrictionView(byId.get(i.id), i, now) ?? []);
}

export interface GuardView {
  id: string;
  name: string;
  /** "3 days (first connected Mon 5 Jan 2026)", or "Not connected yet". */
  age: string;
  /** "20 first contacts", or "No warm-up limit". */
  allowance: string;
  firstContacts: string;
  /** "12", "None left", or "No limit". */
  left: string;
  leftNone: boolean;
  restriction: RestrictionView | null;
  /** "The chat network has warned this number 2 times; …", or null before any warning. */
  warnings: string | null;
}

const days = (n: number) => (n < 1 ? 'Less than a day' : n === 1 ? '1 day' : `${count(n)} days`);

/** Each live instance's guard; one the guard has not heard of yet has not connected. */
export function guardViews(rows: readonly GuardRow[], instances: readonly InstanceRef[], now: number): GuardView[] {
  const byId = new Map(rows.map((r) => [r.instance_id, r]));
  return instances.map((instance) => {
    const row = byId.get(instance.id);
    const connected = row?.first_connected_at && row.age_days !== null ? row : null;
    const limited = row?.warm_up_allowance_today !== null && row?.warm_up_allowance_today !== undefined;
    const left = row?.first_contacts_left_today ?? null;
    const signals = row?.restriction_signals ?? 0;
    return {
      id: instance.id,
      name: instance.name,
      age: connected ? `${days(connected.age_days!)} (first connected ${dayLabels(connected.first_connected_at!.toISOString().slice(0, 10)).longLabel})` : 'Not connected yet',
      allowance: !row ? 'Set when it first connects' : limited ? `${count(row.warm_up_allowance_today!)} first contacts` : 'No warm-up limit',
      firstContacts: count(row?.first_contacts_today ?? 0),
      left: !row ? '–' : left === null ? 'No limit' : left <= 0 ? 'None left' : count(left),
      leftNone: left !== null && left <= 0,
      restriction: restrictionView(row, instance, now),
      warnings: signals === 0 ? null : `The chat network has warned this number ${signals === 1 ? 'once' : `${count(signals)} times`} lately; repeated warnings pause it for review.`,
    };
  });
}
