import { rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { GENERATED_DIR, generatedSources } from './generate-types.ts';

// make events: rewrites libs/events/src/generated from the schemas.
rmSync(GENERATED_DIR, { recursive: true, force: true });
mkdirSync(GENERATED_DIR, { recursive: true });
for (const [file, source] of generatedSources()) writeFileSync(`${GENERATED_DIR}${file}`, source);
process.stdout.write(`wrote ${GENERATED_DIR}\n`);
