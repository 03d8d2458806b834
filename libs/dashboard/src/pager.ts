// Paging of the operations views' tables (/policy-log, /suppressed-recipients, /messages, and the
// page size of /inbound-logs): one page size, one last page, and the newer/older links the
// `pager` partial (views/pager.eta) draws.
import { count } from './format.ts';

/** Rows per page, in every paged table. */
export const PAGE_SIZE = 50;
/** The last page number a link may ask for (an offset beyond it would only cost the database). */
export const MAX_PAGE = 10_000;

/** The rows of page `page` (from 1) of a table read PAGE_SIZE at a time. */
export const pageRows = (page: number) => ({ limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE });

/** Page `at` of a counted table: what it shows ("51–100 of 1,234") and its links. */
export interface NumberedPager {
  from: number;
  to: number;
  total: number;
  totalText: string;
  /** The page before (newer rows), or null on the first. */
  newer: string | null;
  /** The page after (older rows), or null on the last. */
  older: string | null;
  /** The first page, when `at` is past the last one (the table shrank, or a link was typed). */
  beyond: string | null;
}

/** `link(page)` is the address of a page, '' standing for the first (which carries no number). */
export function numberedPager(at: number, total: number, link: (page: number | '') => string): NumberedPager {
  return {
    from: total === 0 ? 0 : Math.min((at - 1) * PAGE_SIZE + 1, total),
    to: Math.min(at * PAGE_SIZE, total),
    total,
    totalText: count(total),
    newer: at > 1 ? link(at - 1 > 1 ? at - 1 : '') : null,
    older: at * PAGE_SIZE < total ? link(at + 1) : null,
    beyond: total > 0 && (at - 1) * PAGE_SIZE >= total ? link('') : null,
  };
}
