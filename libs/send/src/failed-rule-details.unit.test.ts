import { describe, expect, it } from 'vitest';
import type { SendDecided } from '@gw/events';
import { failedRuleDetails } from './outcome.ts';

// The one parser of a refusal's failed rule (the JSON API and the PBX webhook answer with it).
const refusedBy = (...reasons: SendDecided['reasons']) => ({ reasons });

describe('failedRuleDetails', () => {
  it('given a failed rule with JSON details, when parsed, then the details are returned as recorded', () => {
    const decision = refusedBy(
      { rule: 'purpose_allowed', outcome: 'pass', detail: '{"ignored":true}' },
      { rule: 'daily_limit', outcome: 'fail', detail: '{"rule":"daily_limit","limit":100,"used":100}' },
    );
    expect(failedRuleDetails(decision)).toEqual({ rule: 'daily_limit', limit: 100, used: 100 });
  });

  it('given a failed rule without details, when parsed, then the rule name stands in', () => {
    expect(failedRuleDetails(refusedBy({ rule: 'content_rule', outcome: 'fail', detail: null }))).toEqual({ rule: 'content_rule' });
  });

  it('given details that are not JSON, or JSON that is no object, when parsed, then the rule name stands in (never a throw)', () => {
    for (const detail of ['not json {', '42', '"text"', 'null', '[1,2]']) {
      expect(failedRuleDetails(refusedBy({ rule: 'content_rule', outcome: 'fail', detail }))).toEqual({ rule: 'content_rule' });
    }
  });

  it('given no failed rule at all, when parsed, then the rule is null', () => {
    expect(failedRuleDetails(refusedBy({ rule: 'purpose_allowed', outcome: 'pass', detail: null }))).toEqual({ rule: null });
    expect(failedRuleDetails(refusedBy())).toEqual({ rule: null });
  });
});
