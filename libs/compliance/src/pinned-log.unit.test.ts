// A policy log recorded before the decider's state was reshaped (test/fixtures/policy-log/README.md),
// replayed through today's engine: every entry, and so every hash of the chain, must come out the same.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { AnyEvent, SendDecided } from '@gw/events';
import { createPolicy, DEFAULT_POLICY_CONFIG } from '@gw/policy';
import { entryHash, GENESIS_HASH } from '@gw/policy-log';
import { Replayer } from './replay.ts';

type Recorded = Omit<SendDecided, 'dispatch' | 'prev_hash'>;
interface PinnedLog {
  built_from: string;
  inputs: Array<{ p: number; o: string; type: AnyEvent['type']; payload: AnyEvent['payload'] }>;
  entries: Recorded[];
}

const log = JSON.parse(gunzipSync(readFileSync(new URL('../../../test/fixtures/policy-log/log-68ee338.json.gz', import.meta.url))).toString('utf8')) as PinnedLog;

describe('a policy log recorded before the state rework (68ee338)', () => {
  it('replays to the same entries and the same hash chains', () => {
    const recorded = new Map(log.entries.map((e) => [e.correlation_id, e]));
    const replayer = new Replayer();
    const heads = new Map<number, string>();
    let compared = 0;
    for (const input of log.inputs) {
      const event = { type: input.type, payload: input.payload } as AnyEvent;
      // Decided with the policy of the version the log recorded (the log predates later versions).
      const version = event.type === 'SendRequested' ? recorded.get(event.payload.correlation_id)?.policy_version : undefined;
      const step = replayer.step(event, input.p, version);
      expect(step.kind, `${input.p}@${input.o}`).not.toBe('error');
      if (step.kind !== 'decided') continue;
      expect(step.versionMismatch, `policy version ${version} unknown to this code`).toBe(false);
      const entry = recorded.get(step.expected.correlation_id);
      expect(entry, `no recorded entry for ${step.expected.correlation_id}`).toBeDefined();
      // What the log assigns (ids, the chain), taken from the record; all else is the engine's.
      const { dispatch: _dispatch, ...replayed } = { ...step.expected, log_id: entry!.log_id, event_id: entry!.event_id, prev_hash: heads.get(input.p) ?? GENESIS_HASH };
      replayed.entry_hash = entryHash(replayed.prev_hash, replayed as SendDecided);
      heads.set(input.p, replayed.entry_hash);
      const { prev_hash: _prev, ...comparable } = replayed;
      expect(comparable).toEqual(entry);
      compared++;
    }
    expect(compared).toBe(log.entries.length);
    expect(log.entries.length).toBeGreaterThan(3000);
  });
});

describe('the replayer and policy versions', () => {
  it('decides a command with the policy of the version recorded for it, and flags a version it does not know', () => {
    const command = log.inputs.find((i) => i.type === 'SendRequested')!;
    const facts = log.inputs.filter((i) => i.p === command.p && i.type === 'PolicyInputRecorded' && BigInt(i.o) < BigInt(command.o));
    const current = createPolicy();
    const older = createPolicy({ ...DEFAULT_POLICY_CONFIG, version: '2000-01-01.1' });
    const replay = (version: string) => {
      const replayer = new Replayer(current, (v) => (v === older.version ? older : v === current.version ? current : null));
      for (const f of facts) replayer.step({ type: f.type, payload: f.payload } as AnyEvent, f.p);
      return replayer.step({ type: command.type, payload: command.payload } as AnyEvent, command.p, version);
    };
    const known = replay(older.version);
    expect(known.kind === 'decided' && known.versionMismatch).toBe(false);
    expect(known.kind === 'decided' && known.expected.policy_version).toBe(older.version);
    const unknown = replay('1999-01-01.1+content-1999-01-01.1');
    expect(unknown.kind === 'decided' && unknown.versionMismatch).toBe(true);
    expect(unknown.kind === 'decided' && unknown.expected.policy_version).toBe(current.version);
  });
});
