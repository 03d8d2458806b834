import { sql, z, type Queryable } from '@gw/db';
import { SEAL_USES, type SecretBox } from '@gw/security';

export interface ManagerTarget {
  managerUrl: string;
  apiKey: string;
  instance: string;
}

const InstanceTarget = z.object({ manager_url: z.string(), manager_api_key_enc: z.string(), manager_instance: z.string() });

/** Where and with which key an instance is reached; cached briefly so a hot path does not query per send. */
export class InstanceDirectory {
  private readonly cache = new Map<string, { target: ManagerTarget | null; expires: number }>();

  constructor(private readonly db: Queryable, private readonly box: SecretBox, private readonly ttlMs = 30_000) {}

  async lookup(instanceId: string, now = Date.now()): Promise<ManagerTarget | null> {
    const cached = this.cache.get(instanceId);
    if (cached && cached.expires > now) return cached.target;
    const row = await this.db.maybeOne(sql.type(InstanceTarget)`
      SELECT manager_url, manager_api_key_enc, manager_instance FROM instances WHERE id = ${instanceId}`);
    const target = row ? { managerUrl: row.manager_url, apiKey: this.box.open(row.manager_api_key_enc, SEAL_USES.managerApiKey(instanceId)), instance: row.manager_instance } : null;
    this.cache.set(instanceId, { target, expires: now + this.ttlMs });
    return target;
  }
}
