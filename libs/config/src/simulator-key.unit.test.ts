import { describe, expect, it } from 'vitest';
import { loadConfig } from './index.ts';

// SIM_GLOBAL_API_KEY on the gateway's side (the key it calls the instance manager with).
describe('SIM_GLOBAL_API_KEY', () => {
  it('set but empty is refused with a message naming it, never replaced by the well-known default', () => {
    for (const value of ['', ' ']) expect(() => loadConfig({ SIM_GLOBAL_API_KEY: value })).toThrow(/SIM_GLOBAL_API_KEY is set but empty/);
  });

  it('unset: the local simulator\'s key; set: that key', () => {
    expect(loadConfig({}).simulator.globalApiKey).toBe('sim-global-key');
    expect(loadConfig({ SIM_GLOBAL_API_KEY: 'the-manager-key' }).simulator.globalApiKey).toBe('the-manager-key');
  });
});
