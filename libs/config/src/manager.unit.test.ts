import { describe, expect, it } from 'vitest';
import { loadConfig } from './index.ts';

// The production instance manager (Evolution API v2, or the local simulator): MANAGER_URL and
// MANAGER_GLOBAL_API_KEY (the key the gateway calls it with). SIMULATOR_URL and SIM_GLOBAL_API_KEY,
// the old names, are read for one release with a warning (docs/decisions.md).
describe('the instance manager settings', () => {
  it('a key set but empty is refused with a message naming it, never replaced by the well-known default', () => {
    for (const value of ['', ' ']) {
      expect(() => loadConfig({ MANAGER_GLOBAL_API_KEY: value })).toThrow(/MANAGER_GLOBAL_API_KEY is set but empty/);
      expect(() => loadConfig({ SIM_GLOBAL_API_KEY: value })).toThrow(/SIM_GLOBAL_API_KEY is set but empty/);
    }
  });

  it('unset: the local simulator\'s address and key; set: those', () => {
    expect(loadConfig({}).manager).toEqual({ url: 'http://127.0.0.1:18090', globalApiKey: 'sim-global-key' });
    expect(loadConfig({ SIM_PORT: '18555' }).manager.url).toBe('http://127.0.0.1:18555');
    expect(loadConfig({ MANAGER_URL: 'https://evolution.example.com', MANAGER_GLOBAL_API_KEY: 'the-manager-key' }).manager)
      .toEqual({ url: 'https://evolution.example.com', globalApiKey: 'the-manager-key' });
    expect(loadConfig({}).deprecations).toEqual([]);
  });

  it('the old names still work for one release, each with a deprecation to log at start; the new name wins', () => {
    const old = loadConfig({ SIMULATOR_URL: 'http://old:8080', SIM_GLOBAL_API_KEY: 'old-key' });
    expect(old.manager).toEqual({ url: 'http://old:8080', globalApiKey: 'old-key' });
    expect(old.deprecations).toEqual([
      expect.stringMatching(/^SIMULATOR_URL is deprecated .*set MANAGER_URL instead$/),
      expect.stringMatching(/^SIM_GLOBAL_API_KEY is deprecated .*set MANAGER_GLOBAL_API_KEY instead$/),
    ]);
    const both = loadConfig({ SIMULATOR_URL: 'http://old:8080', MANAGER_URL: 'http://new:8080' });
    expect(both.manager.url).toBe('http://new:8080');
    expect(both.deprecations).toEqual([expect.stringMatching(/MANAGER_URL is set and wins/)]);
  });
});
