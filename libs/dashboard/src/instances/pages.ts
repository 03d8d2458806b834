// The instance pages and the data each template reads (see DashboardPages in plugins/views.ts).
import type { InstanceSummary } from '@gw/accounts';
import type { RestrictionView } from '../usage/guard-view.ts';
import type { managePage } from './manage-page.ts';

type ManagePage = Awaited<ReturnType<typeof managePage>>;

export interface InstancesPage {
  title: string;
  instances: (InstanceSummary & { state: string; label: string; tone: string })[];
  canManage: boolean;
  nameRule: string;
  name: string;
  error: string | null;
  deleted: boolean;
  /** The number guard's notices of the restricted instances (usage/restriction-notices.eta). */
  restrictions: RestrictionView[];
}

declare module '../plugins/views.ts' {
  interface DashboardPages {
    'instances/instances': InstancesPage;
    /** Every answer with it is `managePage`'s, the webhook tab's POSTs included (webhookTabAnswer). */
    'instances/instance-manage': ManagePage;
  }
}
