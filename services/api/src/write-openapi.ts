import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openapiDocument } from './openapi-document.ts';

// `npm run openapi -w @gw/api` (or `make openapi`): regenerates the committed openapi.json.
const target = fileURLToPath(new URL('../../../openapi.json', import.meta.url));
writeFileSync(target, `${JSON.stringify(await openapiDocument(), null, 2)}\n`);
process.stdout.write(`wrote ${target}\n`);
