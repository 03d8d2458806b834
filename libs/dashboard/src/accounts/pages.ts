// The account pages and the data each template reads (see DashboardPages in plugins/views.ts).
import type { ListedSession } from '../sessions/store.ts';

export interface AccountPage {
  title: string;
  sessions: (ListedSession & { browser: string })[];
  min: number;
  passwordError: string | null;
  notice: string | null;
}

declare module '../plugins/views.ts' {
  interface DashboardPages {
    'accounts/account': AccountPage;
    'accounts/forgot-password': { title: string; email: string; sent: boolean; error: string | null; minutes: number };
    'accounts/reset-password': { title: string; token: string; mfa: boolean; min: number; error: string | null };
    'accounts/sign-in': { title: string; next: string; email: string; error: string | null; notice: string | null };
    'accounts/sign-in-code': { title: string; next: string; error: string | null };
    'accounts/sign-up': { title: string; values: { organisation?: string; email?: string }; errors: Record<string, string>; min: number };
    'accounts/verify-email': { title: string; pending: string | null; sent: boolean; resent: boolean; hours: number };
    'accounts/verify-email-confirm': { title: string; token: string };
  }
}
