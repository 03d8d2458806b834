// The TypeScript types of the events, generated from the Avro schemas in /schemas (the source of
// truth) by @ovotech/avro-ts: one file per schema in src/generated. `make events` writes them;
// a unit test fails when a committed file differs from what the schema generates.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { toTypeScript } from '@ovotech/avro-ts';

const SCHEMA_DIR = fileURLToPath(new URL('../../../schemas/', import.meta.url));
export const GENERATED_DIR = fileURLToPath(new URL('./generated/', import.meta.url));

// The generator drives its own TypeScript 4 compiler API (through @ovotech/ts-compose), whose
// factory functions print deprecation warnings on every call; they say nothing about our schemas.
const require = createRequire(import.meta.url);
for (const owner of ['@ovotech/avro-ts', '@ovotech/ts-compose']) {
  const compiler = require(require.resolve('typescript', { paths: [require.resolve(owner)] })) as { Debug: { enableDeprecationWarnings: boolean } };
  compiler.Debug.enableDeprecationWarnings = false;
}

/** File name → generated source, for every schema. */
export function generatedSources(): Map<string, string> {
  const sources = new Map<string, string>();
  for (const file of readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.avsc')).sort()) {
    const schema = JSON.parse(readFileSync(`${SCHEMA_DIR}${file}`, 'utf8'));
    const header = `// Generated from schemas/${file} by libs/events/src/generate-types.ts (make events). Do not edit.\n`;
    sources.set(file.replace(/\.avsc$/, '.ts'), header + toTypeScript(schema));
  }
  return sources;
}
