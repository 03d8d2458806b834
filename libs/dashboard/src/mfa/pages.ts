// The second-factor page and the data its template reads (see DashboardPages in plugins/views.ts).

declare module '../plugins/views.ts' {
  interface DashboardPages {
    'mfa/mfa': {
      title: string;
      enrolled: boolean;
      /** Recovery codes, shown once after an enrolment. */
      codes: string[] | null;
      error: string | null;
      replacing?: boolean;
      replaced?: boolean;
      /** An enrolment in progress: the QR code, its secret, and the sealed form state. */
      qr?: string;
      secret?: string;
      pending?: string;
    };
  }
}

export {};
