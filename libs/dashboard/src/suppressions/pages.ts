// The opt-outs page and the data its template reads (see DashboardPages in plugins/views.ts).
import type { NumberedPager } from '../pager.ts';
import type { SourceFilter } from './query.ts';

export type FormName = 'add' | 'lift';

export interface SuppressedRow {
  recipient: string;
  recipientText: string;
  linkedFrom: string | null;
  source: string;
  sourceLabel: string;
  reason: string;
  by: string;
  since: string;
  sinceIso: string;
  /** The inbound message an opt-out came from (null for a manual suppression). */
  cause: { recorded: boolean; kept: boolean; text: string | null; receivedAt: string; href: string | null; instance: string | null } | null;
  liftHref: string | null;
}

export interface HistoryRowView {
  id: number;
  at: string;
  atIso: string;
  recipient: string;
  what: string;
  linkedFrom: string | null;
  tone: string;
  reason: string;
  by: string;
  instance: string | null;
  message: { kept: boolean; href: string } | null;
}

declare module '../plugins/views.ts' {
  interface DashboardPages {
    'suppressions/suppressed-recipients': {
      title: string;
      current: SuppressedRow[];
      history: HistoryRowView[];
      currentPager: NumberedPager;
      historyPager: NumberedPager;
      filters: { source: SourceFilter; phone: string; from: string; to: string };
      filtered: boolean;
      problems: string[];
      csvHref: string;
      notice: string | null;
      canManage: boolean;
      retention: number;
      optIn: string;
      optOut: string;
      firstOptOut: string;
      reasonMax: number;
      error: { where: FormName; message: string } | null;
      /** The add and lift forms' values (filled in again after a refusal). */
      add: { phone: string; reason: string };
      lift: { phone: string; reason: string };
    };
  }
}
