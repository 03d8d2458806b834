// The policy log's pages and the data each template reads (see DashboardPages in plugins/views.ts).
import type { CHECKS_EXPLAINED } from '@gw/compliance';
import type { NumberedPager } from '../pager.ts';
import type { FilterForm, InstanceChoice } from './query.ts';
import type { VerifyOutcome } from './verify-gate.ts';

interface Shown {
  iso: string;
  shown: string;
}

export interface PolicyLogRow {
  logId: number;
  messageId: string;
  href: string;
  decided: Shown;
  recipient: string;
  purpose: string;
  instance: string;
  accepted: boolean;
  code: string | null;
  codeHref: string | null;
  why: string | null;
}

declare module '../plugins/views.ts' {
  interface DashboardPages {
    'policy-log/policy-log': {
      title: string;
      form: FilterForm;
      problems: string[];
      filtered: boolean;
      decisions: { value: string; label: string }[];
      codes: { code: string; rules: string }[];
      purposes: { value: string; label: string }[];
      instances: readonly InstanceChoice[];
      rows: PolicyLogRow[];
      pager: NumberedPager;
      exports: { format: string; label: string; hint: string; href: string }[];
      exportable: boolean;
      totalHeader: string;
      verifyAction: string;
      checks: typeof CHECKS_EXPLAINED;
    };
    'policy-log/policy-log-verify': {
      title: string;
      verifyAction: string;
      checks: typeof CHECKS_EXPLAINED;
      running: Shown | null;
      last: (Omit<VerifyOutcome, 'at'> & { at: Shown }) | null;
    };
  }
}
