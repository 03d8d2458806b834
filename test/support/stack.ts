import { spawn, type ChildProcess } from 'node:child_process';
import { startMailCatcher, type MailCatcher } from './mail-catcher.ts';
import { createWriteStream } from 'node:fs';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startSimulator, type Harness } from '../../services/instance-simulator/src/testing/sim-harness.ts';
import { isolate, type Isolation } from './infra.ts';
import { freePort } from './ports.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LOG_DIR = `${ROOT}.run/test-logs`;

export type ServiceName = 'api' | 'policy' | 'delivery';
/** Every service the stack can run; instance-events and webhooks are started only by the suites that need them. */
export type StackServiceName = ServiceName | 'instance-events' | 'webhooks';
/**
 * One process of a service: the service's name is its first process (slot 0); with replicas,
 * `policy#1` is the second, and so on. Each is its own member of the service's consumer group.
 */
export type StackProcess = StackServiceName | `${StackServiceName}#${number}`;

const PORT_VARIABLE: Record<StackServiceName, string> = {
  api: 'API_PORT',
  policy: 'POLICY_PORT',
  delivery: 'DELIVERY_PORT',
  'instance-events': 'INSTANCE_EVENTS_PORT',
  webhooks: 'WEBHOOKS_PORT',
};

function parseProcess(process: StackProcess): { service: StackServiceName; slot: number } {
  const [service, slot] = process.split('#') as [StackServiceName, string | undefined];
  return { service, slot: slot === undefined ? 0 : Number(slot) };
}

const ENTRY: Record<StackServiceName, string> = {
  api: 'services/api/src/main.ts',
  policy: 'services/policy/src/main.ts',
  delivery: 'services/delivery/src/main.ts',
  'instance-events': 'services/instance-events/src/main.ts',
  webhooks: 'services/webhooks/src/main.ts',
};

/**
 * As deploy/local/services.sh starts them: a larger young generation, because the services
 * allocate many short-lived objects per record and scavenges otherwise run every few ms.
 */
const SERVICE_NODE_FLAGS = ['--max-semi-space-size=32'];
/** Extra node flags for the services only, e.g. STACK_NODE_FLAGS="--cpu-prof --cpu-prof-dir=.run/prof" to profile a bench. */
const EXTRA_NODE_FLAGS = (process.env.STACK_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);

export interface Stack {
  isolation: Isolation;
  simulator: Harness;
  /** The mail catcher (maildev) the API sends to. */
  mail: MailCatcher;
  /** The first API process; `apiUrls` has one per API process. */
  apiUrl: string;
  apiUrls: string[];
  env: Record<string, string>;
  /** Every process of the stack (one per service, or `replicas` of each). */
  processes: StackProcess[];
  readyUrl(name: StackProcess): string;
  metricsUrl(name: StackProcess): string;
  /** The file a process's stdout and stderr go to (JSON log lines). */
  logFile(name: StackProcess): string;
  start(name: StackProcess): Promise<void>;
  /** Kills a process with the given signal and waits for it to exit. */
  kill(name: StackProcess, signal?: NodeJS.Signals): Promise<void>;
  /** The processes started that have exited without being killed through `kill` (a crash, an exit on a lost broker). */
  exited(): StackProcess[];
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Another checkout whose services and migrations run instead of this one's (the bench compares the commit before a change with it). */
  root?: string;
  /** Processes of each service (default 1). */
  replicas?: number;
}

async function waitReady(url: string, child: ChildProcess, timeoutMs: number, name: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode} during start; see ${LOG_DIR}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${name} was not ready within ${timeoutMs} ms; see ${LOG_DIR}`);
}

/**
 * Sends `signal` and waits for the process to exit. A graceful stop that hangs is escalated to
 * SIGKILL after `graceMs`, so a test or bench run never leaves a process behind.
 */
export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const escalate = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(escalate);
}

/**
 * Starts the gateway's services as real processes against the real infrastructure. `options.root`: run
 * another checkout's services and migrations instead of this one's (the bench compares the commit
 * before a change with it).
 */
export async function startStack(services: StackServiceName[] = ['api', 'policy', 'delivery'], extraEnv: Record<string, string> = {}, options: StackOptions = {}): Promise<Stack> {
  const { root = ROOT, replicas = 1 } = options;
  mkdirSync(LOG_DIR, { recursive: true });
  const isolation = await isolate(root === ROOT ? undefined : root);
  const simulator = await startSimulator({ logger: false });
  // The API's mail (verification and reset links, notices) goes to a catcher of this stack; tests read it over its REST API.
  const mail = await startMailCatcher();
  const allServices: StackServiceName[] = ['api', 'policy', 'delivery', 'instance-events', 'webhooks'];
  const processesOf = (service: StackServiceName): StackProcess[] => Array.from({ length: replicas }, (_, slot) => (slot === 0 ? service : (`${service}#${slot}` as const)));
  const ports = new Map<StackProcess, number>();
  for (const process of allServices.flatMap(processesOf)) ports.set(process, await freePort());
  const portOf = (name: StackProcess) => ports.get(name) ?? (() => { throw new Error(`no such process in this stack: ${name}`); })();
  const env: Record<string, string> = {
    ...isolation.env,
    // Every process knows the first process's port of each service (gatewayctl run by tests reads these).
    ...Object.fromEntries(allServices.map((service) => [PORT_VARIABLE[service], String(portOf(service))])),
    MANAGER_URL: simulator.baseUrl,
    MANAGER_GLOBAL_API_KEY: simulator.globalKey,
    SMTP_URL: mail.smtpUrl,
    // The services shut down should this process die without stopping them (libs/runtime).
    STOP_WITH_PARENT_PID: String(process.pid),
    SEND_DEADLINE_MS: '15000',
    DELIVERY_SEND_TIMEOUT_MS: '2000',
    // Human pacing on, as in production (typing passed as sendText `delay`, one send at a time per
    // instance, a gap between them), but in milliseconds: suites send bursts of a hundred messages
    // on one instance (typing 1 ms a character, 10 to 50 ms; a 10 to 15 ms gap). Its own test runs
    // the real defaults (services/delivery/src/dispatch/pacing.int.test.ts).
    DELIVERY_TYPING_MS_PER_CHAR: '1',
    DELIVERY_TYPING_MIN_MS: '10',
    DELIVERY_TYPING_MAX_MS: '50',
    DELIVERY_SEND_GAP_MS: '10',
    // The test receivers are plain http on loopback (https only is the default: docs/webhooks.md).
    WEBHOOK_ALLOW_HTTP: 'true',
    ...extraEnv,
  };
  const children = new Map<StackProcess, ChildProcess>();
  const readyUrl = (name: StackProcess) => `http://127.0.0.1:${portOf(name)}/readyz`;
  const metricsUrl = (name: StackProcess) => `http://127.0.0.1:${portOf(name)}/metrics`;
  const logFile = (name: StackProcess) => `${LOG_DIR}/${isolation.suffix}-${name.replace('#', '-')}.log`;

  const start = async (name: StackProcess) => {
    const { service, slot } = parseProcess(name);
    const log = createWriteStream(logFile(name), { flags: 'a' });
    const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...EXTRA_NODE_FLAGS, '--import', 'tsx', ENTRY[service]], {
      cwd: root,
      // Its own port, and its own slot in its consumer group (part of its transactional id).
      env: { ...process.env, ...env, [PORT_VARIABLE[service]]: String(portOf(name)), CONSUMER_INSTANCE_ID: String(slot) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Both streams share one file: neither may end it while the other still writes.
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
    child.once('exit', () => setTimeout(() => log.end(), 100));
    children.set(name, child);
    await waitReady(readyUrl(name), child, 90_000, name);
  };

  const kill = async (name: StackProcess, signal: NodeJS.Signals = 'SIGKILL') => {
    const child = children.get(name);
    if (!child) return;
    await stopProcess(child, signal);
    children.delete(name);
  };

  const exited = () => [...children].filter(([, child]) => child.exitCode !== null || child.signalCode !== null).map(([name]) => name);

  const stopAll = async () => {
    await Promise.all([...children.keys()].map((name) => kill(name, 'SIGTERM')));
    await simulator.close();
    await mail.stop().catch(() => undefined);
    await isolation.cleanup().catch(() => undefined);
  };
  const processes = services.flatMap(processesOf);
  try {
    await Promise.all(processes.map((name) => start(name)));
  } catch (error) {
    // Leave nothing running when the stack cannot start.
    await Promise.all([...children.keys()].map((name) => kill(name, 'SIGKILL')));
    await stopAll();
    throw error;
  }

  return {
    isolation,
    simulator,
    mail,
    apiUrl: `http://127.0.0.1:${portOf('api')}`,
    apiUrls: processesOf('api').map((name) => `http://127.0.0.1:${portOf(name)}`),
    env,
    processes,
    readyUrl,
    metricsUrl,
    logFile,
    start,
    kill,
    exited,
    stop: stopAll,
  };
}
