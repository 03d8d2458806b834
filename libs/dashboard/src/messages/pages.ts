// The message search and timeline pages and the data each template reads (see DashboardPages in
// plugins/views.ts).
import type { SearchForm } from './search.ts';
import type { TimelineView } from './timeline.ts';
import type { resultView } from './words.ts';

export interface MessageResults {
  rows: ReturnType<typeof resultView>[];
  page: number;
  previous: string | null;
  next: string | null;
  range: { from: string | null; before: string | null; defaulted: boolean };
  filtered: boolean;
}

export interface MessagesPage {
  title: string;
  form: SearchForm;
  decisions: { value: string; label: string }[];
  defaultDays: number;
  minDigits: number;
  pageSize: number;
  errors: string[];
  /** Null until a search ran (or when it was refused). */
  results: MessageResults | null;
}

declare module '../plugins/views.ts' {
  interface DashboardPages {
    'messages/messages': MessagesPage;
    'messages/message-timeline': TimelineView & { title: string; canResend: boolean };
  }
}
