import { describe, expect, it } from 'vitest';
import { checkArguments } from './input-checks.ts';
import { checkWebhookChoice } from './webhooks/operator-words.ts';

describe('checkArguments (what an operator types goes to Kafka too)', () => {
  it('takes ordinary text, phone numbers and lists', () => {
    expect(() => checkArguments(['ins_1', { reason: 'asked by phone 🙏', phone: '+14155552671', allow: ['support', 'operational'] }])).not.toThrow();
  });

  it.each([
    [['key\u0000id'], /an argument contains a NUL character/],
    [[{ reason: 'stop\u0000' }], /--reason contains a NUL character/],
    [[{ refillPerMinute: 5, by: 'ops\ud800' }], /--by contains an unpaired surrogate/],
    [[{ enable: ['api', 'pbx\u0000'] }], /--enable contains a NUL character/],
    [[{ text: 'x'.repeat(4097) }], /--text is longer than 4096 characters/],
  ])('refuses case %#', (args, message) => {
    expect(() => checkArguments(args)).toThrow(message);
  });
});

describe('a refused webhook destination', () => {
  it('says which range to open, and that make run opens loopback for the CLI and the services alike', async () => {
    await expect(checkWebhookChoice('http://127.0.0.1:18090/sim/inbox/x', ['recommended'], { allowCidrs: [], httpsOnly: false })).rejects.toThrow(
      /destination_blocked.*WEBHOOK_ALLOW_CIDRS=127\.0\.0\.0\/8.*make run/,
    );
    await expect(checkWebhookChoice('http://127.0.0.1:18090/sim/inbox/x', ['recommended'], { allowCidrs: ['127.0.0.0/8'], httpsOnly: false })).resolves.toBeDefined();
  });
});
