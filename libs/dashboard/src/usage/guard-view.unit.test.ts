import { describe, expect, it } from 'vitest';
import { guardViews, restrictionNotices, type GuardRow } from './guard-view.ts';

const NOW = Date.UTC(2026, 0, 7, 10, 0);
const FRONT = { id: 'ins_front', name: 'front-desk' };
const row = (patch: Partial<GuardRow>): GuardRow => ({
  instance_id: FRONT.id,
  first_connected_at: new Date(Date.UTC(2026, 0, 5, 9, 15)),
  age_days: 2,
  warm_up_allowance_today: 20,
  first_contacts_today: 5,
  first_contacts_left_today: 15,
  restricted_until: null,
  restriction_signal: null,
  restriction_signals: 0,
  updated_at: new Date(NOW),
  ...patch,
});

describe('the number guard in words', () => {
  it('says until when and why an instance is restricted, with the date when it ends on another day', () => {
    const [today] = restrictionNotices([row({ restricted_until: new Date(Date.UTC(2026, 0, 7, 14, 5)), restriction_signal: 'send_error' })], [FRONT], NOW);
    expect(today!.text).toBe('Restricted until 14:05 UTC: the chat network rejected a message to a new contact. Replies to people who wrote to you still go; new contacts wait.');
    const [tomorrow] = restrictionNotices([row({ restricted_until: new Date(Date.UTC(2026, 0, 8, 1, 0)), restriction_signal: 'reachout_timelock' })], [FRONT], NOW);
    expect(tomorrow!.text).toBe('Restricted until 2026-01-08 01:00 UTC: the chat network put a time lock on messages to new contacts. Replies to people who wrote to you still go; new contacts wait.');
    const [banned] = restrictionNotices([row({ restricted_until: new Date(NOW + 60_000), restriction_signal: 'banned' })], [FRONT], NOW);
    expect(banned!.text).toMatch(/: the chat network disconnected this number as banned\. Nothing goes out until a phone is linked again;/);
  });

  it('shows no restriction once its end has passed, and the warm-up in words', () => {
    expect(restrictionNotices([row({ restricted_until: new Date(NOW), restriction_signal: 'message_capping' })], [FRONT], NOW)).toEqual([]);
    expect(guardViews([row({})], [FRONT], NOW)[0]).toMatchObject({ age: '2 days (first connected Mon 5 Jan 2026)', allowance: '20 first contacts', firstContacts: '5', left: '15', restriction: null, warnings: null });
    expect(guardViews([row({ warm_up_allowance_today: null, first_contacts_left_today: null, age_days: 0 })], [FRONT], NOW)[0]).toMatchObject({ age: 'Less than a day (first connected Mon 5 Jan 2026)', allowance: 'No warm-up limit', left: 'No limit' });
    expect(guardViews([], [FRONT], NOW)[0]).toMatchObject({ age: 'Not connected yet', allowance: 'Set when it first connects', firstContacts: '0' });
  });
});
