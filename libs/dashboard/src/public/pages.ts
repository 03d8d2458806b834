// The public policy pages and the data their templates read (see DashboardPages in plugins/views.ts).
import type { PublicPolicyPages } from '../messaging-rules.ts';
import type { Permission, Role } from '../roles/permissions.ts';

/** The engine's policy in words, with the dashboard's own role matrix (who may read the policy log). */
export type PublicPage = PublicPolicyPages & {
  title: string;
  roles: readonly Role[];
  permissions: { id: Permission; roles: boolean[] }[];
  logReaders: readonly Role[];
};

declare module '../plugins/views.ts' {
  interface DashboardPages {
    'public/acceptable-use': PublicPage;
    'public/responsible-messaging': PublicPage;
  }
}
