// The inbound log's page and the data its template reads (see DashboardPages in plugins/views.ts).
import type { instancesOf } from './data.ts';
import type { ChatFilter, FlagFilter, inboundFilterValues } from './query.ts';

export interface InboundLogRow {
  id: string;
  received: string;
  receivedIso: string;
  instance: string;
  chat: string;
  sender: string | null;
  senderLabel: string | null;
  text: string;
  flag: string | null;
  flagLabel: string;
  senderSuppressed: boolean;
  suppressHref: string | null;
  optOutsHref: string | null;
}

declare module '../plugins/views.ts' {
  interface DashboardPages {
    'inbound/inbound-logs': {
      title: string;
      single: boolean;
      rows: InboundLogRow[];
      newer: string | null;
      older: string | null;
      newest: string | null;
      retention: number;
      instances: Awaited<ReturnType<typeof instancesOf>>;
      filters: ReturnType<typeof inboundFilterValues> & { chat: ChatFilter; flag: FlagFilter };
      filtered: boolean;
      problems: string[];
    };
  }
}
