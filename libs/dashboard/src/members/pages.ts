// The members pages and the data each template reads (see DashboardPages in plugins/views.ts).
import type { Role } from '../roles/permissions.ts';
import type { InvitableRole, listMembers, listOpenInvites } from './store.ts';

export interface MembersPage {
  title: string;
  members: Awaited<ReturnType<typeof listMembers>>;
  invites: Awaited<ReturnType<typeof listOpenInvites>>;
  roles: readonly Role[];
  invitable: readonly InvitableRole[];
  days: number;
  /** The invitation just made, shown once with whom it was for. */
  link: string | null;
  invitedEmail?: string;
  error: string | null;
}

declare module '../plugins/views.ts' {
  interface DashboardPages {
    'members/members': MembersPage;
    'members/invite': {
      title: string;
      invite: { email: string; customer_id: string; customer_name: string; role: InvitableRole };
      token: string;
      signedInAs: string | null;
      hasAccount: boolean;
      min: number;
      error: string | null;
    };
  }
}
