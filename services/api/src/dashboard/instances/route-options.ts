// What the instance routes share: their dependencies.
import type { AuditTrail } from '@gw/accounts';
import type { Pool } from '@gw/db';
import type { SecretBox } from '@gw/security';
import type { SendDeps as SendMessageDeps } from '@gw/send';

export interface InstanceRoutesOptions {
  pool: Pool;
  box: SecretBox;
  audit: AuditTrail;
  /** How long a re-pair or a disconnect waits for the manager to close the instance after its logout (config.dashboard.pairingCloseWaitMs). */
  pairingCloseWaitMs: number;
  /** Where new instances are created (Evolution API v2 compatible), with its global apikey. */
  instanceManager: { url: string; apiKey: string };
  /** The gateway's public address: the instance's manager posts its events there. */
  publicBaseUrl: string;
  /** The send path of POST /api/send-message, for test sends. */
  send: SendMessageDeps;
}
