// The usage page and the data its template reads (see DashboardPages in plugins/views.ts).
import type { Chart } from '../charts/stacked-bars.ts';
import type { GuardView, RestrictionView } from './guard-view.ts';
import type { LimitRequestValues } from './limit-request-form.ts';
import type { requestView } from './routes.ts';
import type { PauseView, PlanFacts, QuotaView, SendsChart, VelocityView } from './view.ts';

export interface UsagePage {
  title: string;
  notice: string | null;
  plan: PlanFacts;
  today: QuotaView | null;
  month: QuotaView | null;
  velocity: VelocityView | null;
  suppressed: { optOut: number; manual: number };
  canSeeSuppressions: boolean;
  pauses: PauseView[];
  guard: GuardView[];
  /** The restricted instances' notices (usage/restriction-notices.eta, also on the instance pages). */
  restrictions: RestrictionView[];
  sends: SendsChart;
  optOuts: Chart;
  requests: ReturnType<typeof requestView>[];
  pending: ReturnType<typeof requestView> | null;
  canRequest: boolean;
  current: { daily: string; monthly: string } | null;
  reasonMax: number;
  error: { field: string; message: string } | null;
  values: LimitRequestValues;
}

declare module '../plugins/views.ts' {
  interface DashboardPages {
    'usage/usage': UsagePage;
  }
}
