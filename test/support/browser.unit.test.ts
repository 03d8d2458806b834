import { describe, expect, it } from 'vitest';
import { chromiumPath } from './browser.ts';

describe('chromiumPath', () => {
  it('takes CHROMIUM_PATH when it is an executable', () => {
    expect(chromiumPath({ CHROMIUM_PATH: process.execPath }, [])).toBe(process.execPath);
  });

  it('takes the first system binary found', () => {
    expect(chromiumPath({}, ['/nonexistent/chromium', process.execPath])).toBe(process.execPath);
  });

  it('says how to install it when there is none', () => {
    expect(() => chromiumPath({}, ['/nonexistent/chromium', '/nonexistent/chromium-browser'])).toThrow(/not installed.*make browser.*sudo apt-get install -y chromium/);
    expect(() => chromiumPath({ CHROMIUM_PATH: '/nonexistent/chrome' })).toThrow(/CHROMIUM_PATH is \/nonexistent\/chrome.*make browser/);
  });
});
