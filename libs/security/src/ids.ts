import { randomBytes } from 'node:crypto';

/** Prefixed random identifiers: the prefix tells a reader what kind of record an id names. */
export function newId(prefix: 'cus' | 'ins' | 'cmd' | 'msg' | 'key' | 'usr' | 'lrq'): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}
