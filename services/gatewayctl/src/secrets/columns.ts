/**
 * Every column that holds a value sealed by SecretBox, in one place: `gatewayctl secrets rotate`
 * and `status` walk exactly these. Found from the migrations (libs/db/migrations, the `*_enc`
 * columns) and the code that seals and opens them; columns.unit.test.ts fails when a migration
 * adds a `*_enc` column that is not listed here.
 */
import { SEAL_USES } from '@gw/security';

export interface SealedColumn {
  table: string;
  /** The row's primary key. */
  key: string;
  /** The sealed column (nullable columns are skipped where null). */
  column: string;
  /** What is sealed, and who seals and opens it. */
  holds: string;
  /** The use a row's value is sealed for (its associated data, libs/security SEAL_USES). */
  use: (id: string) => string;
  /**
   * The column held values sealed for no use (v3) before its code bound them (issue 25): they still
   * open (SecretBox.openFormerlyUnbound), and `rotate` re-seals them bound to their row.
   */
  formerlyUnbound?: true;
}

export const SEALED_COLUMNS: readonly SealedColumn[] = [
  {
    table: 'instances',
    key: 'id',
    column: 'manager_api_key_enc',
    holds: "the instance manager's apikey (sealed by gatewayctl instance create / demo; opened by delivery and gatewayctl)",
    use: SEAL_USES.managerApiKey,
  },
  {
    table: 'pbx_integrations',
    key: 'id',
    column: 'hmac_secret_enc',
    holds: 'the optional PBX HMAC signing secret (sealed by gatewayctl pbx create / rotate-secret; opened by the API)',
    use: SEAL_USES.pbxHmacSecret,
    formerlyUnbound: true,
  },
  {
    table: 'webhook_endpoints',
    key: 'instance_id',
    column: 'signing_secret_enc',
    holds: 'the customer webhook signing secret (sealed by gatewayctl webhook set / rotate-secret; opened by the webhooks service)',
    use: SEAL_USES.webhookSigningSecret,
    formerlyUnbound: true,
  },
  {
    table: 'webhook_endpoints',
    key: 'instance_id',
    column: 'previous_signing_secret_enc',
    holds: 'the webhook signing secret a rotation replaced, signing beside the new one until previous_secret_expires_at (moved there by rotate-secret; opened by the webhooks service; the same use as signing_secret_enc)',
    use: SEAL_USES.webhookSigningSecret,
    formerlyUnbound: true,
  },
  {
    table: 'users',
    key: 'id',
    column: 'totp_secret_enc',
    holds: "a dashboard user's TOTP secret (sealed at MFA enrolment; opened by the API to check a code)",
    use: SEAL_USES.totpSecret,
    formerlyUnbound: true,
  },
];
