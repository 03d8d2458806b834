import { describe, expect, it } from 'vitest';
import { browserName } from './browser-name.ts';

describe('browserName', () => {
  it('names the common browsers and systems as a person would', () => {
    const cases: [string, string][] = [
      ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36', 'Chrome on Linux'],
      ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0', 'Edge on Windows'],
      ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15', 'Safari on macOS'],
      ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1', 'Safari on iPhone'],
      ['Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0', 'Firefox on Android'],
      ['Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36', 'Samsung Internet on Android'],
      ['curl/8.5.0', 'Unknown browser'],
      ['SomeBot/1.0 (Windows)', 'Unknown browser on Windows'],
    ];
    for (const [agent, name] of cases) expect(browserName(agent), agent).toBe(name);
    expect(browserName(null)).toBe('Unknown browser');
    expect(browserName('')).toBe('Unknown browser');
  });
});
