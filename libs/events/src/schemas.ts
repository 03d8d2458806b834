import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EventType } from './event-types.ts';

const SCHEMA_DIR = fileURLToPath(new URL('../../../schemas/', import.meta.url));

export const AVRO_NAMESPACE = 'chatgateway.events';

/** Reads the .avsc file of an event type; the file name is the record name. */
export function loadSchema(type: EventType): string {
  return readFileSync(`${SCHEMA_DIR}${type}.avsc`, 'utf8');
}
