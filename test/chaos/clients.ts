// Customers' clients as a demanding customer writes them: every message has its own
// Idempotency-Key, and a client retries with that key until it has a final answer (sent, or a
// definitive refusal or failure), whatever happens in between: connection refused while the API
// restarts, 500 while the broker is away, "queued" while a send is being resolved.

export type FinalAnswer = 'sent' | 'failed' | 'refused';

export interface MessageRecord {
  key: string;
  customerId: string;
  instanceId: string;
  phone: string;
  text: string;
  messageId: string | null;
  final: FinalAnswer | null;
  /** `details.reason` of a final failure (e.g. `outcome_unknown`: the gateway cannot tell whether it went out). */
  reason: string | null;
  /** The last status word or error seen (for the report). */
  last: string;
  attempts: number;
  /** From the first try to the final answer. */
  elapsedMs: number | null;
  /** When the first try began (ms since the epoch). */
  startedAt: number;
  /** Which API process (index in `apiUrls`) gave the final answer. */
  answeredBy: number | null;
  /** The message's number in the run: spreads messages over the API processes. */
  n: number;
}

export interface ClientAccount {
  customer_id: string;
  instance_id: string;
  api_key: string;
  /** The people who wrote to the instance: the load answers them (test/chaos/contacts.ts). */
  recipients: readonly string[];
}

export interface LoadOptions {
  /**
   * The API processes. Message n goes to process n mod count, as a load balancer would spread
   * them; a retry goes to the next one, as a client behind it would land on another.
   */
  apiUrls: () => string[];
  accounts: ClientAccount[];
  clients: number;
  runId: string;
  /** How long a request may take before the client gives up on it and retries (past the send deadline). */
  requestTimeoutMs: number;
  /** A message without a final answer this long after its first try is left unanswered. */
  giveUpAfterMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One try; the answer classified. */
async function tryOnce(options: LoadOptions, account: ClientAccount, record: MessageRecord): Promise<void> {
  const urls = options.apiUrls();
  const api = (record.n + record.attempts) % urls.length;
  record.attempts++;
  try {
    const response = await fetch(`${urls[api]}/api/send-message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${account.api_key}`, 'idempotency-key': record.key },
      body: JSON.stringify({ instance_id: account.instance_id, phone: record.phone, message: record.text, message_purpose: 'operational' }),
      signal: AbortSignal.timeout(options.requestTimeoutMs),
    });
    const body = (await response.json().catch(() => ({}))) as { status?: string; message_id?: string; error?: string; details?: { message_id?: string; reason?: string } };
    record.messageId ??= body.message_id ?? body.details?.message_id ?? null;
    if (response.status === 200 && body.status === 'sent') record.final = 'sent';
    else if (response.status === 502) record.final = 'failed';
    else if (response.status >= 400 && response.status < 500) record.final = 'refused';
    if (record.final !== null) record.answeredBy = api;
    if (record.final === 'failed') record.reason = body.details?.reason ?? null;
    record.last = response.status === 200 ? String(body.status) : `${response.status} ${body.error ?? ''}`.trim();
  } catch (error) {
    record.last = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
  }
}

/**
 * Runs `clients` clients, each sending message after message until `running()` turns false
 * (message n to account n mod the accounts, to that account's people in turn); then each finishes
 * the message it holds. Resolves with every message and what became of it.
 */
export async function sustainedSends(options: LoadOptions, running: () => boolean): Promise<MessageRecord[]> {
  const records: MessageRecord[] = [];
  let next = 0;
  const client = async (index: number) => {
    while (running()) {
      const n = next++;
      const account = options.accounts[n % options.accounts.length]!;
      const record: MessageRecord = {
        key: `${options.runId}-${n}`,
        customerId: account.customer_id,
        instanceId: account.instance_id,
        phone: account.recipients[Math.floor(n / options.accounts.length) % account.recipients.length]!,
        text: `Chaos ${options.runId} message ${n}: your appointment is confirmed.`,
        messageId: null,
        final: null,
        reason: null,
        last: '',
        attempts: 0,
        elapsedMs: null,
        startedAt: Date.now(),
        answeredBy: null,
        n,
      };
      records.push(record);
      const started = record.startedAt;
      for (let retry = 0; record.final === null && Date.now() - started < options.giveUpAfterMs; retry++) {
        await tryOnce(options, account, record);
        if (record.final === null) await sleep(Math.min(250 * 2 ** Math.min(retry, 3), 2_000) + index);
      }
      if (record.final !== null) record.elapsedMs = Date.now() - started;
    }
  };
  await Promise.all(Array.from({ length: options.clients }, (_, i) => client(i)));
  return records;
}

/** Asks once more, with the same key, for each message: the answer a customer gets after the resolution window. */
export async function finalAnswers(options: LoadOptions, records: MessageRecord[]): Promise<void> {
  const byCustomer = new Map(options.accounts.map((a) => [a.customer_id, a]));
  for (let i = 0; i < records.length; i += options.clients) {
    await Promise.all(records.slice(i, i + options.clients).map(async (record) => {
      if (record.final !== null) return;
      await tryOnce(options, byCustomer.get(record.customerId)!, record);
    }));
  }
}
