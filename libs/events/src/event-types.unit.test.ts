import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENERATED_DIR, generatedSources } from './generate-types.ts';
import { EVENT_TOPIC } from './topics.ts';

describe('event types', () => {
  it('are generated from the Avro schemas, and the committed files are up to date (run `make events`)', () => {
    const sources = generatedSources();
    expect(readdirSync(GENERATED_DIR).sort()).toEqual([...sources.keys()].sort());
    for (const [file, source] of sources) expect(readFileSync(`${GENERATED_DIR}${file}`, 'utf8'), file).toBe(source);
  });

  it('has a topic for every schema, and a schema for every event with a topic', () => {
    expect(Object.keys(EVENT_TOPIC).sort()).toEqual([...generatedSources().keys()].map((f) => f.replace(/\.ts$/, '')).sort());
  });
});
