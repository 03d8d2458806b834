// The PBX integrations page and the data its template reads (see DashboardPages in plugins/views.ts).
import type { InstanceSummary, PbxIntegrationSummary } from '@gw/accounts';
import type { TemplateValues } from '@gw/contract';

/** A form error, shown beside the form it belongs to. */
export interface PbxFormError {
  /** `create`, `rotate-<id>`, `template-<id>-<event>`, or `page` (at the top). */
  where: string;
  message: string;
}

export interface PbxIntegrationView extends PbxIntegrationSummary {
  webhook_url: string;
  instance_name: string | null;
  events: { event: string; label: string; enabled: boolean; template: string; preview: string }[];
}

export interface PbxPage {
  title: string;
  integrations: PbxIntegrationView[];
  instances: InstanceSummary[];
  moduleOn: boolean;
  canManage: boolean;
  previewValues: Required<TemplateValues>;
  templateMax: number;
  rate: { min: number; max: number; default: number };
  notice: string | null;
  error: PbxFormError | null;
  /** A secret shown once (created or rotated). */
  shown: Record<string, unknown> | null;
  form: Record<string, string>;
}

declare module '../plugins/views.ts' {
  interface DashboardPages {
    'pbx/pbx': PbxPage;
  }
}
