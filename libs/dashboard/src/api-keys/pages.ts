// The API keys page and the data its template reads (see DashboardPages in plugins/views.ts).
import type { listApiKeys } from '@gw/accounts';

export interface ApiKeysPage {
  title: string;
  keys: Awaited<ReturnType<typeof listApiKeys>>;
  canManage: boolean;
  nameMax: number;
  name: string;
  /** The key just made, shown once. */
  created: { key_id: string; name: string; api_key: string } | null;
  error: string | null;
  notice: string | null;
}

declare module '../plugins/views.ts' {
  interface DashboardPages {
    'api-keys/api-keys': ApiKeysPage;
  }
}
