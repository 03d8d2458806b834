import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, withLocalSettings } from './index.ts';

const settingsFile = () => {
  const file = join(mkdtempSync(join(tmpdir(), 'gw-local-')), 'local.env');
  writeFileSync(file, '# written by make run\nGATEWAY_ENV=local\nWEBHOOK_ALLOW_CIDRS=127.0.0.0/8\nAPI_PORT=18555\n');
  return file;
};

describe('withLocalSettings (gatewayctl on a local stack)', () => {
  it('puts the local stack\'s settings under the environment when GATEWAY_ENV is not set', () => {
    const config = loadConfig(withLocalSettings({ API_PORT: '18666' }, settingsFile()));
    expect(config.gatewayEnv).toBe('local');
    expect(config.webhooks.allowCidrs).toEqual(['127.0.0.0/8']);
    // The environment wins over the file.
    expect(config.api.port).toBe(18666);
  });

  it('reads nothing when GATEWAY_ENV is set (a deployment, or a test) or there is no file', () => {
    expect(withLocalSettings({ GATEWAY_ENV: 'production' }, settingsFile())).toEqual({ GATEWAY_ENV: 'production' });
    expect(withLocalSettings({}, '/nonexistent/local.env')).toEqual({});
  });
});
