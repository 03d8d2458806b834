import { sql, z, type Queryable } from '@gw/db';
import { SEAL_USES, type SecretBox } from '@gw/security';

export interface ManagerTarget {
  managerUrl: string;
  apiKey: string;
  instance: string;
}

const InstanceTarget = z.object({ name: z.string(), manager_url: z.string(), manager_api_key_enc: z.string(), manager_instance: z.string() });

interface Entry {
  row: z.infer<typeof InstanceTarget> | null;
  /** Opened on the first lookup (not for the name alone: a key that does not open fails the send, as before). */
  target?: ManagerTarget | null;
  /** The instance's display name (instances.name), which the outcome events carry for the customer's webhooks. */
  name: string | null;
  expires: number;
}

/**
 * Where and with which key an instance is reached, and its display name; cached briefly so a hot
 * path does not query per send. (The instances directory is the accounts' table, read here as
 * the one place delivery learns how to reach a manager: see docs/architecture.md, "Tables and
 * their owners".)
 */
export class InstanceDirectory {
  private readonly cache = new Map<string, Entry>();

  constructor(private readonly db: Queryable, private readonly box: SecretBox, private readonly ttlMs = 30_000) {}

  async lookup(instanceId: string, now = Date.now()): Promise<ManagerTarget | null> {
    const entry = await this.entry(instanceId, now);
    if (entry.target === undefined) {
      const row = entry.row;
      entry.target = row ? { managerUrl: row.manager_url, apiKey: this.box.open(row.manager_api_key_enc, SEAL_USES.managerApiKey(instanceId)), instance: row.manager_instance } : null;
    }
    return entry.target;
  }

  /** The display name, or null for an instance the directory does not know. */
  async displayName(instanceId: string, now = Date.now()): Promise<string | null> {
    return (await this.entry(instanceId, now)).name;
  }

  private async entry(instanceId: string, now: number): Promise<Entry> {
    const cached = this.cache.get(instanceId);
    if (cached && cached.expires > now) return cached;
    const row = await this.db.maybeOne(sql.type(InstanceTarget)`
      SELECT name, manager_url, manager_api_key_enc, manager_instance FROM instances WHERE id = ${instanceId}`);
    const entry: Entry = { row, name: row?.name ?? null, expires: now + this.ttlMs };
    this.cache.set(instanceId, entry);
    return entry;
  }
}
