// Malformed requests for the three POST endpoints of the API, drawn from a seeded PRNG (the same
// seed and targets give the same requests). Every request is one the gateway must refuse with a
// 4xx ApiError: each family is reasoned against the order of the checks in the routes (below),
// and `mustBeRefused` re-checks every request independently before it is handed out, so a
// generator bug can never send a message or record a valid event.
//
// Order of the checks (what decides the expected status when a request has several defects):
//   send   (services/api/src/send-message/route.ts): Bearer key 401 -> media type 415 -> body size
//          413 -> JSON (with prototype-poisoning refusal) 400 -> schema 422 (body before headers)
//          -> phone 422 -> instance 404
//   pbx    (services/api/src/pbx/route.ts): body size 413 -> secret/HMAC/replay 401 -> rate 429 ->
//          JSON 400 -> schema 400 -> safe text anywhere 400 -> missing_phone / bad phone /
//          missing_message_text 400
//   ingest (services/api/src/instance-events/route.ts): body size 413 -> instance + token 401 ->
//          JSON 400 -> object with a string "event" 400 -> envelopeProblem (event name, safe text,
//          JIDs) 400
import { createHmac } from 'node:crypto';
import { Ajv } from 'ajv';
import {
  MESSAGE_PURPOSES,
  normalizePhone,
  PBX_EVENT_TYPES,
  PbxWebhookRequestSchema,
  SendMessageRequestSchema,
  TEMPLATE_EVENTS,
  type ErrorCode,
} from '@gw/contract';
import { envelopeProblem, parseJid, withoutBinaryFields } from '@gw/evolution';
import { Rng } from './prng.ts';

export type Endpoint = 'send' | 'pbx' | 'ingest';

/** API_BODY_LIMIT_BYTES (default), PBX_BODY_LIMIT, INSTANCE_EVENT_BODY_LIMIT_BYTES (default). */
/**
 * The fuzz runs the ingest with a 1 MiB body limit (INSTANCE_EVENT_BODY_LIMIT_BYTES in its stack):
 * an over-limit body then stays small enough that the server's early 413 does not cut off a client
 * still writing tens of MiB (EPIPE). The 32 MiB default is covered by the ingest route's int test.
 */
export const FUZZ_INGEST_BODY_LIMIT = 1024 * 1024;
export const LIMITS = { send: 64 * 1024, pbx: 256 * 1024, ingest: FUZZ_INGEST_BODY_LIMIT } as const;
/** PBX_REPLAY_WINDOW_S (default). */
export const PBX_WINDOW_S = 300;
/** Deeper than MAX_JSON_DEPTH (64) is refused (libs/contract findUnsafeText); the fuzz nests at least this deep. */
const DEEP_ENOUGH = 100;

/** What the fuzz aims at: the fuzz account's instance, keys, PBX integration and ingest URL. */
export interface FuzzTargets {
  instanceId: string;
  instanceName: string;
  managerInstance: string;
  apiKey: string;
  revokedApiKey: string;
  /** An HMAC-signed integration whose rate limit is raised out of the way. */
  pbxIntegrationId: number;
  pbxSecret: string;
  pbxSigningSecret: string;
  /** Another integration of the account (not the signed one): its id with the signed one's secret is refused. */
  otherPbxIntegrationId: number;
  /** The instance's ingest token (the last segment of the URL the manager was given). */
  ingestToken: string;
}

export interface Expectation {
  /** Always 4xx; exact when the generator is certain. */
  status?: number;
  code?: ErrorCode;
}

/** How the runner signs a PBX request at the moment it is sent (the timestamp must be fresh). */
export interface PbxSigning {
  /** The HMAC key: the integration's own for a valid signature. */
  key: string;
  /** Seconds added to now: beyond the window both ways for stale and future timestamps. */
  offsetS: number;
  /** A literal X-Chat-Gateway-Timestamp instead of the computed one; null: no header. */
  timestampHeader?: string | null;
  form: 'prefixed' | 'bare' | 'upper-hex' | 'upper-prefix' | 'other-body' | 'absent' | 'literal';
  literal?: string;
}

export interface FuzzRequest {
  n: number;
  endpoint: Endpoint;
  /** The family of the defect (authentication failures: `auth.<mode>`). */
  family: string;
  /** The family of the body (the same as `family` for authenticated requests). */
  bodyFamily: string;
  /** Carries valid credentials (and, for PBX, a valid fresh signature), so it reaches parsing. */
  authenticated: boolean;
  path: string;
  /** Every header but the PBX signing ones (content-type included when sent). */
  headers: Record<string, string>;
  body: Buffer;
  /** PBX only. */
  signing?: PbxSigning;
  /** PBX only: sent a second time, unchanged, once answered; the second answer must be 401. */
  replay?: boolean;
  expect: Expectation;
  /** Phone numbers and texts the request carries that no answer may echo. */
  markers: string[];
}

export interface FuzzOptions {
  seed: number;
  total: number;
  /** Share of requests with bad credentials (default 0.08). */
  unauthenticatedShare?: number;
}

// ---------------------------------------------------------------------------------------------
// Building blocks

const MARKER_ALPHABET = 'ghjkmnpqrstvwxyz23456789';
/** Valid text oddities: bidi marks and overrides, zero-width characters, combining marks, emoji. */
export const ODDITIES = [
  '\u200f', '\u200e', '\u202e', '\u2066', '\u200b', '\u200d', '\u2060', 'e\u0301', '\u{1F44D}\u{1F3FD}',
  '\u{1F468}\u200d\u{1F469}\u200d\u{1F467}', '\u{1F1FA}\u{1F1F8}', '\u0645\u0631\u062d\u0628\u0627', '\u05e9\u05dc\u05d5\u05dd',
  '\u4f60\u597d', '\u0130', '\u00df', '\uff11\uff12\uff13', '\u0663\u0664\u0665', 'Z\u0364\u0351a\u0308\u0316', '\u{1D573}', '\ufffd', '\u2028',
];
/** Characters String.prototype.trim removes: a field of only these is blank. */
const BLANKS = ['', ' ', '  ', '\t', '\n', '\u00a0', '\ufeff', '\u2028', '\u3000', ' \u00a0\ufeff '];
const TEMPLATES = ['Your code is', 'Order shipped:', 'Appointment confirmed', 'Ticket updated', 'Reminder for', 'Password reset'];
const SEND_FIELDS = ['instance_id', 'phone', 'message', 'message_purpose'] as const;
const PBX_TEXT_FIELDS = ['to', 'customer_phone', 'conversation_id', 'external_message_id', 'agent_extension', 'queue', 'call_time'] as const;
const PBX_FIELDS = ['event_type', ...PBX_TEXT_FIELDS, 'message_text', 'message_purpose'] as const;
const BAD_PURPOSES = ['marketing', 'political', 'promotional', 'bulk', 'cold_outreach', 'Transactional', 'TRANSACTIONAL', ' support', 'support ', '', 'otp', 'transactional,support', 'null', 'support\u200b', 'sup\u0000port', 'auth\ud800'];
const UNKNOWN_PBX_EVENTS = ['fax_received', 'TEST', 'Test', 'test ', ' test', 'outbound-message', 'outboundMessage', '', 'missed call', 'sms', 'outbound_message\u0000', 'call_\ud800', '\u200ftest'];

const marker = (rng: Rng) => `FUZZ-${rng.chars(8, MARKER_ALPHABET)}`;

function text(rng: Rng, markers: string[]): string {
  const m = marker(rng);
  markers.push(m);
  const s = `${rng.pick(TEMPLATES)} ${m}`;
  if (!rng.chance(0.4)) return s;
  return rng.chance(0.5) ? `${rng.pick(ODDITIES)} ${s}` : `${s} ${rng.pick(ODDITIES)}`;
}

function goodPhone(rng: Rng, markers: string[]): string {
  const digits = `1415555${rng.digits(4)}`;
  markers.push(digits);
  const phone = `+${digits}`;
  if (!normalizePhone(phone)) throw new Error(`not a possible number: ${phone}`);
  return phone;
}

const goodJid = (rng: Rng, markers: string[]) => `${goodPhone(rng, markers).slice(1)}@s.whatsapp.net`;

/** A string the API's phone rule refuses (checked with the rule itself). */
function badPhone(rng: Rng, markers: string[]): string {
  const d4 = () => rng.digits(4);
  const makers: Array<() => string> = [
    () => `call me ${marker(rng)}`,
    () => `+${rng.digits(rng.between(1, 4))}`,
    () => `+1${rng.digits(rng.between(20, 28))}`,
    () => `++1415555${d4()}`,
    () => `1415+555${d4()}`,
    () => `+1415555O${rng.digits(3)}`,
    () => '\uff0b\uff11\uff14\uff11\uff15\uff15\uff15\uff15\uff10\uff11\uff12\uff13',
    () => '+\u0661\u0664\u0661\u0665\u0665\u0665\u0665\u0660\u0661\u0662\u0663',
    () => `\u200f+1415555${d4()}`,
    () => `+1415\u200b555${d4()}`,
    () => `\u{1F4DE}+1415555${d4()}`,
    () => `+999 ${rng.digits(8)}`,
    () => `+0${rng.digits(9)}`,
    () => `+1415555${d4()} ext 12`,
    () => `+1/415/555/${d4()}`,
    () => '+',
    () => marker(rng),
    () => `1415555${d4()}@example.com`,
    () => `1415555${d4()}@s.whatsapp.net`,
    () => `+1 (415) 555-${rng.digits(2)}`,
    () => `tel:+1415555${d4()}`,
    () => `+1-800-FLOWERS`,
    () => `+44 20 7946 ${rng.digits(2)}`,
  ];
  for (let tries = 0; tries < 20; tries++) {
    const candidate = rng.pick(makers)();
    if (normalizePhone(candidate) === null) {
      addMarker(markers, candidate);
      return candidate;
    }
  }
  const fallback = marker(rng);
  markers.push(fallback);
  return fallback;
}

/** A value that is not a well-formed JID (checked with the ingest's own parser). */
function badJid(rng: Rng, markers: string[]): unknown {
  const d = () => `1415555${rng.digits(4)}`;
  const makers: Array<() => unknown> = [
    () => `STOP ${marker(rng)}`,
    () => `please stop ${marker(rng)}`,
    () => `+${d()}`,
    () => d(),
    () => Number(d()),
    () => `${d()}@example.com`,
    () => `${d()}@s.whatsapp.net.example.com`,
    () => `${d()}@S.WHATSAPP.NET`,
    () => '12@s.whatsapp.net',
    () => '1234@s.whatsapp.net',
    () => `999${rng.digits(9)}@s.whatsapp.net`,
    () => ` ${d()}@s.whatsapp.net`,
    () => `${d()}@s.whatsapp.net `,
    () => `\u202e${d()}@s.whatsapp.net`,
    () => `${d()}@c.us\u200b`,
    () => '@s.whatsapp.net',
    () => '@g.us',
    () => 'abc-def@g.us',
    () => `${d()}:@s.whatsapp.net`,
    () => `${d()}:1234@s.whatsapp.net`,
    () => `${'7'.repeat(70)}@s.whatsapp.net`,
    () => `${d()}@lid.example`,
    () => `${marker(rng)}@broadcast`,
    () => [`${d()}@s.whatsapp.net`],
    () => ({ jid: `${d()}@s.whatsapp.net` }),
    () => true,
    () => 0,
  ];
  for (let tries = 0; tries < 20; tries++) {
    const candidate = rng.pick(makers)();
    if (parseJid(candidate) === null) {
      addMarker(markers, typeof candidate === 'string' ? candidate : JSON.stringify(candidate));
      return candidate;
    }
  }
  const fallback = `STOP ${marker(rng)}`;
  addMarker(markers, fallback);
  return fallback;
}

/** The distinctive parts of a value: a FUZZ marker, or a run of at least 8 ASCII digits. */
function addMarker(markers: string[], value: string): void {
  for (const m of value.match(/FUZZ-[a-z0-9]{8}/g) ?? []) markers.push(m);
  for (const run of value.match(/\d{8,}/g) ?? []) markers.push(run);
}

/** A value of the wrong type for a string field. */
function wrongType(rng: Rng, markers: string[]): unknown {
  return rng.pick<() => unknown>([
    () => Number(`1415555${rng.digits(4)}`),
    () => rng.between(-5, 5),
    () => 3.14,
    () => 1e308,
    () => true,
    () => false,
    () => null,
    () => [],
    () => [text(rng, markers)],
    () => ({}),
    () => ({ value: text(rng, markers) }),
    () => [[[]]],
  ])();
}

/**
 * JSON text nested `depth` levels deep (built as text: JSON.stringify itself overflows on it), at
 * most `budget` bytes long (fewer levels when the kind drawn costs more bytes a level).
 */
function deepJson(rng: Rng, depth: number, budget: number): string {
  const kind = rng.pick(['array', 'object', 'mixed'] as const);
  const levels = Math.max(DEEP_ENOUGH, Math.min(depth, Math.floor(budget / { array: 2, object: 6, mixed: 4 }[kind])));
  if (kind === 'array') return `${'['.repeat(levels)}0${']'.repeat(levels)}`;
  if (kind === 'object') return `${'{"a":'.repeat(levels)}0${'}'.repeat(levels)}`;
  const half = Math.ceil(levels / 2);
  return `${'[{"b":'.repeat(half)}1${'}]'.repeat(half)}`;
}

/** `value` with `bad` inserted at a random place; for an unpaired surrogate, never where it would pair up. */
function insert(rng: Rng, value: string, bad: string): string {
  const at = rng.int(value.length + 1);
  const candidate = value.slice(0, at) + bad + value.slice(at);
  if (candidate.includes('\u0000') || !candidate.isWellFormed()) return candidate;
  return value + bad;
}

/** `body` with the string value "@@DEEP@@" replaced by raw JSON text. */
function withRaw(body: unknown, raw: string): string {
  const json = JSON.stringify(body);
  if (!json.includes('"@@DEEP@@"')) throw new Error('no placeholder');
  return json.replace('"@@DEEP@@"', () => raw);
}

/** A JSON document broken in one of many ways (checked: JSON.parse refuses it, with or without a BOM). */
function brokenJson(rng: Rng, valid: string): { text: string; kind: string } {
  const open = valid.slice(0, -1);
  const variants: Array<[string, () => string]> = [
    ['truncated', () => valid.slice(0, rng.between(1, valid.length - 1))],
    ['trailing_garbage', () => valid + rng.pick(['x', '}', ']', ',', ' {}', '{"a":1}', '\u0000', 'null', '#', '\n--', ' true'])],
    ['single_quotes', () => valid.replaceAll('"', "'")],
    ['non_finite', () => `${open},"n":${rng.pick(['NaN', 'Infinity', '-Infinity', 'undefined', '+1', '0x1F', '012', '.5', '1.', '1e', '--1'])}}`],
    ['trailing_comma', () => `${open},}`],
    ['unquoted_key', () => `${open},key:1}`],
    ['comment', () => rng.pick([`/*c*/${valid}`, `${open}//c\n}`, `${valid}// end`])],
    ['raw_control_char', () => `${open},"t":"a${rng.pick(['\n', '\t', '\r', '\u0001', '\u001f'])}b"}`],
    ['bad_escape', () => `${open},"t":"${rng.pick(['\\x41', '\\u12G4', '\\u12', "\\'", '\\a', '\\'])}"}`],
    ['duplicate_colon', () => valid.replace(':', '::')],
    ['missing_brace', () => valid.slice(1)],
    ['invalid_utf8', () => `\u0000${valid}`],
    ['fragment', () => rng.pick(['', ' ', '\n\t ', '{', '[', '{"', '{"a"}', '{,}', '{"a":}', '{:1}', 'nul', 'tru', '"unterminated', '[1,]', '{}{}', '\ufeff', 'undefined', 'NaN', '{"a":1}}', "{'a':1}", '\ufeff\ufeff{}'])],
  ];
  for (let tries = 0; tries < 10; tries++) {
    const [kind, make] = rng.pick(variants);
    const candidate = make();
    if (!parsesAsJson(candidate, true) && !parsesAsJson(candidate, false)) return { text: candidate, kind };
  }
  return { text: '{', kind: 'fragment' };
}

function parsesAsJson(text: string, stripBom: boolean): boolean {
  try {
    JSON.parse(stripBom && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    return true;
  } catch {
    return false;
  }
}

/** Replaces the JSON-level "\u0000" lead-in of an invalid_utf8 variant with real invalid UTF-8 bytes. */
function toBytes(text: string, kind?: string): Buffer {
  if (kind === 'invalid_utf8') return Buffer.concat([Buffer.from([0xff, 0xfe, 0xc3, 0x28]), Buffer.from(text.slice(1), 'utf8')]);
  return Buffer.from(text, 'utf8');
}

function pad(rng: Rng, over: number): string {
  return 'p'.repeat(over + rng.between(1, 40_000));
}

interface Draft {
  family: string;
  body: Buffer;
  expect: Expectation;
  markers: string[];
  contentType?: string | null;
  headers?: Record<string, string>;
}

const draft = (family: string, body: string | Buffer, expect: Expectation, markers: string[], extra: Partial<Draft> = {}): Draft => ({
  family,
  body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
  expect,
  markers,
  ...extra,
});

type Family = (rng: Rng, t: FuzzTargets, n: number) => Draft;

// ---------------------------------------------------------------------------------------------
// POST /api/send-message

function sendBase(rng: Rng, t: FuzzTargets, markers: string[]): Record<string, unknown> {
  return {
    instance_id: rng.chance(0.7) ? t.instanceId : t.instanceName,
    phone: goodPhone(rng, markers),
    message: text(rng, markers),
    message_purpose: rng.pick(MESSAGE_PURPOSES),
  };
}

/** The code of a schema failure confined to one field. */
const sendFieldCode = (field: string, rule: 'type' | 'pattern' | 'length' | 'enum'): Expectation => {
  if (field !== 'message_purpose') return { status: 422, code: 'validation_error' };
  // message_purpose has an enum only: a string outside it is message_purpose_not_allowed; a wrong
  // type also fails the enum, and which of the two errors comes first is Ajv's business.
  return rule === 'type' ? { status: 422 } : { status: 422, code: 'message_purpose_not_allowed' };
};

const SEND_FAMILIES: Array<[string, Family, number]> = [
  ['json.broken', (rng, t) => {
    const m: string[] = [];
    const broken = brokenJson(rng, JSON.stringify(sendBase(rng, t, m)));
    return draft(`json.${broken.kind}`, toBytes(broken.text, broken.kind), { status: 400, code: 'invalid_json' }, m);
  }, 12],
  ['json.bom', (rng, t) => {
    // A BOM before the JSON is skipped by the send route's parser: the extra property refuses it.
    const m: string[] = [];
    return draft('json.bom', `\ufeff${JSON.stringify({ ...sendBase(rng, t, m), [rng.pick(['extra', 'bom'])]: 1 })}`, { status: 422, code: 'validation_error' }, m);
  }, 2],
  ['shape.non_object', (rng, t) => {
    const m: string[] = [];
    const body = rng.pick<() => string>([
      () => '[]',
      () => JSON.stringify([sendBase(rng, t, m)]),
      () => String(rng.between(-1000, 1000)),
      () => '1e999',
      () => '-0.0',
      () => JSON.stringify(text(rng, m)),
      () => 'null',
      () => 'true',
      () => 'false',
      () => '""',
    ])();
    return draft('shape.non_object', body, { status: 422, code: 'validation_error' }, m);
  }, 4],
  ['shape.missing_fields', (rng, t) => {
    const m: string[] = [];
    const body = sendBase(rng, t, m);
    const missing = rng.subset(SEND_FIELDS);
    for (const field of missing) delete body[field];
    const onlyPurpose = missing.length === 1 && missing[0] === 'message_purpose';
    return draft('shape.missing_fields', JSON.stringify(body), { status: 422, code: onlyPurpose ? 'message_purpose_required' : 'validation_error' }, m);
  }, 6],
  ['shape.wrong_types', (rng, t) => {
    const m: string[] = [];
    const body = sendBase(rng, t, m);
    const fields = rng.subset(SEND_FIELDS).slice(0, 2);
    for (const field of fields) body[field] = wrongType(rng, m);
    const expect = fields.length === 1 ? sendFieldCode(fields[0]!, 'type') : { status: 422, code: 'validation_error' as const };
    return draft('shape.wrong_types', JSON.stringify(body), expect, m);
  }, 7],
  ['shape.extra_properties', (rng, t) => {
    const m: string[] = [];
    const body = sendBase(rng, t, m);
    const names = ['extra', 'Phone', 'message_purpose ', 'callback_url', 'priority', 'm\u00e9ssage', '', 'a.b', '$ref', 'toString', 'hasOwnProperty', 'valueOf', 'constructor', 'prototype', 'apikey', 'idempotency_key', 'instance'];
    for (const name of rng.subset(names).slice(0, 3)) body[name] = rng.chance(0.5) ? text(rng, m) : wrongType(rng, m);
    return draft('shape.extra_properties', JSON.stringify(body), { status: 422, code: 'validation_error' }, m);
  }, 5],
  ['text.too_long', (rng, t) => {
    const m: string[] = [];
    const body = sendBase(rng, t, m);
    const field = rng.pick(['instance_id', 'phone', 'message', 'message_astral'] as const);
    if (field === 'instance_id') body.instance_id = `ins_${'a'.repeat(rng.between(125, 400))}`;
    if (field === 'phone') body.phone = `+1${'4'.repeat(rng.between(32, 200))}`;
    if (field === 'message') body.message = `${text(rng, m)} ${'x'.repeat(rng.between(4097, 12_000))}`;
    // Ajv counts code points: 4097 astral characters are over the limit.
    if (field === 'message_astral') body.message = `${text(rng, m)} ${'\u{1F600}'.repeat(rng.between(4097, 6000))}`;
    return draft('text.too_long', JSON.stringify(body), { status: 422, code: 'validation_error' }, m);
  }, 5],
  ['text.nul', (rng, t) => unsafeSendText(rng, t, 'text.nul', '\u0000'), 4],
  ['text.surrogate', (rng, t) => unsafeSendText(rng, t, 'text.surrogate', rng.pick(['\ud800', '\udfff', '\udc00x\ud83d', '\ud83d'])), 4],
  ['phone.invalid', (rng, t) => {
    const m: string[] = [];
    const body = sendBase(rng, t, m);
    body.phone = rng.chance(0.1) ? '' : badPhone(rng, m);
    return draft('phone.invalid', JSON.stringify(body), { status: 422, code: 'validation_error' }, m);
  }, 7],
  ['purpose.unknown', (rng, t) => {
    const m: string[] = [];
    const body = sendBase(rng, t, m);
    body.message_purpose = rng.pick(BAD_PURPOSES);
    // An empty purpose was not given at all: required, like a missing one.
    const code = body.message_purpose === '' ? 'message_purpose_required' : 'message_purpose_not_allowed';
    return draft('purpose.unknown', JSON.stringify(body), { status: 422, code }, m);
  }, 5],
  ['nesting.deep', (rng, t) => {
    const m: string[] = [];
    const body = sendBase(rng, t, m);
    const field = rng.pick([...SEND_FIELDS, 'nested'] as const);
    body[field] = '@@DEEP@@';
    const raw = deepJson(rng, rng.pick([DEEP_ENOUGH, 1000, 5000, 10_000]), 56_000);
    return draft('nesting.deep', withRaw(body, raw), field === 'message_purpose' ? { status: 422 } : { status: 422, code: 'validation_error' }, m);
  }, 3],
  ['array.huge', (rng, t) => {
    const m: string[] = [];
    const body = sendBase(rng, t, m);
    const field = rng.pick([...SEND_FIELDS, 'items'] as const);
    const size = rng.between(1000, 12_000);
    body[field] = rng.chance(0.5) ? new Array(size).fill(0) : new Array(Math.floor(size / 4)).fill('ab');
    return draft('array.huge', JSON.stringify(body), field === 'message_purpose' ? { status: 422 } : { status: 422, code: 'validation_error' }, m);
  }, 2],
  ['proto.keys', (rng, t) => {
    // The send route's JSON parser refuses prototype poisoning outright, at any depth.
    const m: string[] = [];
    const base = JSON.stringify(sendBase(rng, t, m)).slice(1);
    const poison = rng.pick([
      '"__proto__":{"isAdmin":true},',
      '"__proto__":null,',
      '"\\u005f_proto__":{"x":1},',
      '"constructor":{"prototype":{"polluted":true}},',
      '"meta":{"__proto__":{"x":1}},',
      '"meta":[{"constructor":{"prototype":{}}}],',
    ]);
    return draft('proto.keys', `{${poison}${base}`, { status: 400, code: 'invalid_json' }, m);
  }, 4],
  ['content_type.wrong', (rng, t) => {
    const m: string[] = [];
    const contentType = rng.pick([
      'text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml',
      'text/json', 'application/jsonp', 'application/json-patch+json', 'application/problem+json', 'application/vnd.api+json', 'json',
      'application', '*/*', 'application/json, text/plain', 'application/ json', 'application/octet-stream', '', null,
    ]);
    const body = rng.chance(0.5) ? JSON.stringify(sendBase(rng, t, m)) : brokenJson(rng, JSON.stringify(sendBase(rng, t, m))).text;
    return draft('content_type.wrong', body, { status: 415, code: 'unsupported_media_type' }, m, { contentType });
  }, 6],
  ['content_type.odd_json', (rng, t) => {
    // Unusual spellings of application/json, with a body refused anyway (an unknown instance).
    const m: string[] = [];
    const contentType = rng.pick(['Application/JSON', 'APPLICATION/JSON', 'application/json;charset=UTF-8', 'application/json; charset=latin1', 'application/json; charset=', 'application/json;;', 'application/json; x="y;z"', 'application/json ;charset=utf-8']);
    const body = { ...sendBase(rng, t, m), instance_id: `ins_${rng.hex(24)}` };
    return draft('content_type.odd_json', JSON.stringify(body), {}, m, { contentType });
  }, 2],
  ['size.over_limit', (rng, t) => {
    const m: string[] = [];
    const body = rng.chance(0.5) ? { ...sendBase(rng, t, m), pad: pad(rng, LIMITS.send) } : { ...sendBase(rng, t, m), message: `${text(rng, m)} ${pad(rng, LIMITS.send)}` };
    const json = JSON.stringify(body);
    return draft('size.over_limit', rng.chance(0.2) ? json.slice(0, -1) : json, { status: 413, code: 'payload_too_large' }, m);
  }, 1.5],
  ['numbers.as_strings', (rng, t) => {
    const m: string[] = [];
    const body = sendBase(rng, t, m);
    const field = rng.pick(['phone', 'instance_id', 'message'] as const);
    body[field] = field === 'phone' ? Number(goodPhone(rng, m).slice(1)) : rng.pick([42, 1.5, -7, 0, Number(rng.digits(12))]);
    return draft('numbers.as_strings', JSON.stringify(body), { status: 422, code: 'validation_error' }, m);
  }, 3],
  ['instance.unknown', (rng, t) => {
    // Well-formed and otherwise valid, but no instance of this account: 404 (it echoes instance_id only).
    const m: string[] = [];
    const body = sendBase(rng, t, m);
    body.instance_id = rng.pick([
      `ins_${rng.hex(24)}`,
      `demo-${rng.hex(6)}`,
      t.instanceId.toUpperCase(),
      `${t.instanceId} `,
      ` ${t.instanceName}`,
      `\u200f${t.instanceId}`,
      `${t.instanceName.slice(0, 3)}\u200b${t.instanceName.slice(3)}`,
      `${t.instanceId}\u0301`,
      '*',
      '%',
      "' OR 1=1 --",
      'ins_%',
      t.managerInstance,
    ]);
    return draft('instance.unknown', JSON.stringify(body), { status: 404, code: 'invalid_instance' }, m);
  }, 4],
  ['unicode.with_defect', (rng, t) => {
    // Valid unicode oddities in the text, with a real defect beside them.
    const m: string[] = [];
    const body = sendBase(rng, t, m);
    body.message = `${rng.pick(ODDITIES)}${text(rng, m)}${rng.pick(ODDITIES)}${rng.pick(ODDITIES)}`;
    const defect = rng.pick(['phone', 'instance', 'purpose'] as const);
    if (defect === 'phone') body.phone = `${rng.pick(['\u200f', '\u202e', '\u200b', '\u2066'])}${goodPhone(rng, m)}`;
    if (defect === 'instance') body.instance_id = `${t.instanceId}${rng.pick(['\u200d', '\u200e', '\u{1F600}'])}`;
    if (defect === 'purpose') body.message_purpose = `support${rng.pick(['\u200b', '\u200f', '\u0301'])}`;
    const expect: Expectation = defect === 'phone' ? { status: 422, code: 'validation_error' } : defect === 'instance' ? { status: 404, code: 'invalid_instance' } : { status: 422, code: 'message_purpose_not_allowed' };
    return draft('unicode.with_defect', JSON.stringify(body), expect, m);
  }, 3],
  ['header.idempotency_key', (rng, t) => {
    // A valid body with an Idempotency-Key outside 1-255 printable ASCII characters.
    const m: string[] = [];
    const key = rng.pick(['key with spaces', 'x'.repeat(rng.between(256, 600)), '', 'caf\u00e9', 'a"b c']);
    return draft('header.idempotency_key', JSON.stringify(sendBase(rng, t, m)), { status: 422, code: 'validation_error' }, m, { headers: { 'idempotency-key': key } });
  }, 2],
];

function unsafeSendText(rng: Rng, t: FuzzTargets, family: string, bad: string): Draft {
  const m: string[] = [];
  const body = sendBase(rng, t, m);
  const where = rng.pick([...SEND_FIELDS, 'key'] as const);
  if (where === 'key') {
    body[`note${bad}`] = 1;
    return draft(family, JSON.stringify(body), { status: 422, code: 'validation_error' }, m);
  }
  body[where] = insert(rng, String(body[where]), bad);
  return draft(family, JSON.stringify(body), sendFieldCode(where, 'pattern'), m);
}

const SEND_AUTH_MODES: Array<[string, number]> = [
  ['missing', 2], ['bearer_only', 1], ['unknown_key', 2], ['wrong_secret', 2], ['malformed_key', 1], ['basic', 1], ['token_scheme', 1],
  ['trailing_garbage', 1], ['two_keys', 1], ['lowercase_prefix', 1], ['other_header', 1], ['revoked', 2],
];

function sendAuthorization(rng: Rng, t: FuzzTargets, mode: string): { headers: Record<string, string>; code: ErrorCode } {
  const keyId = /^gw_([0-9a-f]{16})_/.exec(t.apiKey)?.[1] ?? '0'.repeat(16);
  const b64 = (n: number) => rng.chars(n, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');
  switch (mode) {
    case 'missing': return { headers: {}, code: 'invalid_api_key' };
    case 'bearer_only': return { headers: { authorization: rng.pick(['Bearer', 'Bearer ', 'Bearer\t']) }, code: 'invalid_api_key' };
    case 'unknown_key': return { headers: { authorization: `Bearer gw_${rng.hex(16)}_${b64(43)}` }, code: 'invalid_api_key' };
    case 'wrong_secret': return { headers: { authorization: `Bearer gw_${keyId}_${b64(43)}` }, code: 'invalid_api_key' };
    case 'malformed_key': return { headers: { authorization: `Bearer ${rng.pick([`gw_${rng.hex(15)}_x`, t.apiKey.slice(0, -1), `${t.apiKey}A`, t.apiKey.toUpperCase(), `gw-${t.apiKey.slice(3)}`])}` }, code: 'invalid_api_key' };
    case 'basic': return { headers: { authorization: `Basic ${Buffer.from(`user:${t.apiKey}`).toString('base64')}` }, code: 'invalid_api_key' };
    case 'token_scheme': return { headers: { authorization: `Token ${t.apiKey}` }, code: 'invalid_api_key' };
    case 'trailing_garbage': return { headers: { authorization: `Bearer ${t.apiKey} x` }, code: 'invalid_api_key' };
    case 'two_keys': return { headers: { authorization: `Bearer ${t.apiKey},${t.apiKey}` }, code: 'invalid_api_key' };
    case 'lowercase_prefix': return { headers: { authorization: `Bearer ${t.apiKey.replace(/^gw_/, 'GW_')}` }, code: 'invalid_api_key' };
    case 'other_header': return { headers: { 'x-api-key': t.apiKey, apikey: t.apiKey }, code: 'invalid_api_key' };
    case 'revoked': return { headers: { authorization: `Bearer ${t.revokedApiKey}` }, code: 'revoked_api_key' };
    default: throw new Error(`unknown mode ${mode}`);
  }
}

function sendRequest(rng: Rng, t: FuzzTargets, n: number, unauthenticated: boolean): FuzzRequest {
  const families = unauthenticated ? SEND_FAMILIES.filter(([name]) => !name.startsWith('size.')) : SEND_FAMILIES;
  const [, make] = rng.weighted(families.map((f) => [f, f[2]] as const));
  const d = make(rng, t, n);
  const headers: Record<string, string> = { ...(d.headers ?? {}) };
  if (d.contentType !== null) headers['content-type'] = d.contentType ?? 'application/json';
  let family = d.family;
  let expect = d.expect;
  if (unauthenticated) {
    const mode = rng.weighted(SEND_AUTH_MODES);
    const auth = sendAuthorization(rng, t, mode);
    Object.assign(headers, auth.headers);
    family = `auth.${mode}`;
    // The key is checked first of all (an onRequest hook), whatever the body or its media type.
    expect = { status: 401, code: auth.code };
  } else {
    headers.authorization = `Bearer ${t.apiKey}`;
  }
  return { n, endpoint: 'send', family, bodyFamily: d.family, authenticated: !unauthenticated, path: '/api/send-message', headers, body: d.body, expect, markers: d.markers };
}

// ---------------------------------------------------------------------------------------------
// POST /integrations/pbx/webhook/{integration_id}

function pbxBase(rng: Rng, n: number, markers: string[], type: string = rng.pick(PBX_EVENT_TYPES)): Record<string, unknown> {
  // The nonce keeps bodies distinct: a PBX signature may be used once.
  const body: Record<string, unknown> = { event_type: type, fuzz_nonce: `n${n}-${rng.hex(6)}` };
  if (type === 'outbound_message') {
    body.to = goodPhone(rng, markers);
    body.message_text = text(rng, markers);
  } else if ((TEMPLATE_EVENTS as readonly string[]).includes(type)) {
    body.customer_phone = goodPhone(rng, markers);
    if (rng.chance(0.5)) body.call_time = '14:05';
    if (rng.chance(0.3)) body.queue = 'front desk';
  } else if (rng.chance(0.5)) {
    body.customer_phone = goodPhone(rng, markers);
  }
  if (rng.chance(0.3)) body.message_purpose = rng.pick(MESSAGE_PURPOSES);
  if (rng.chance(0.3)) body.external_message_id = `ext-${rng.hex(10)}`;
  if (rng.chance(0.3)) body.agent_extension = String(rng.between(100, 999));
  if (rng.chance(0.3)) body.conversation_id = `conv-${rng.hex(8)}`;
  return body;
}

/** An outbound_message without a usable `to`: refused with missing_phone whatever else it carries (and no other defect). */
function pbxNoTo(rng: Rng, n: number, markers: string[]): Record<string, unknown> {
  const body = pbxBase(rng, n, markers, 'outbound_message');
  delete body.to;
  return body;
}

const PBX_FAMILIES: Array<[string, Family, number]> = [
  ['json.broken', (rng, _t, n) => {
    const m: string[] = [];
    const broken = brokenJson(rng, JSON.stringify(pbxBase(rng, n, m)));
    return draft(`json.${broken.kind}`, toBytes(broken.text, broken.kind), { status: 400, code: 'invalid_json' }, m);
  }, 10],
  ['json.bom', (rng, _t, n) => {
    // The raw body is parsed as is: a BOM is not JSON (and the body also lacks its `to`).
    const m: string[] = [];
    return draft('json.bom', `\ufeff${JSON.stringify(pbxNoTo(rng, n, m))}`, { status: 400, code: 'invalid_json' }, m);
  }, 2],
  ['shape.non_object', (rng, _t, n) => {
    const m: string[] = [];
    const body = rng.pick<() => string>([
      () => `[${n}]`,
      () => JSON.stringify([pbxBase(rng, n, m)]),
      () => String(n),
      () => `${n}.5e3`,
      () => JSON.stringify(`${text(rng, m)} ${n}`),
      () => `${' '.repeat(n % 7)}null`,
      () => `true${' '.repeat(n % 7)}`,
      () => `"outbound_message ${n}"`,
    ])();
    return draft('shape.non_object', body, { status: 400, code: 'validation_error' }, m);
  }, 4],
  ['shape.missing_event_type', (rng, _t, n) => {
    const m: string[] = [];
    const body = pbxBase(rng, n, m);
    delete body.event_type;
    if (rng.chance(0.3)) body.eventType = 'outbound_message';
    if (rng.chance(0.3)) body.EVENT_TYPE = 'test';
    return draft('shape.missing_event_type', JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
  }, 4],
  ['shape.unknown_event_type', (rng, _t, n) => {
    const m: string[] = [];
    const body = pbxBase(rng, n, m);
    body.event_type = rng.pick(UNKNOWN_PBX_EVENTS);
    return draft('shape.unknown_event_type', JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
  }, 5],
  ['shape.wrong_types', (rng, _t, n) => {
    const m: string[] = [];
    const body = pbxBase(rng, n, m);
    for (const field of rng.subset(PBX_FIELDS).slice(0, 2)) body[field] = wrongType(rng, m);
    return draft('shape.wrong_types', JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
  }, 7],
  ['purpose.unknown', (rng, _t, n) => {
    const m: string[] = [];
    const body = pbxBase(rng, n, m, rng.pick(['outbound_message', ...TEMPLATE_EVENTS, 'test']));
    body.message_purpose = rng.pick(BAD_PURPOSES);
    return draft('purpose.unknown', JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
  }, 3],
  ['text.too_long', (rng, _t, n) => {
    const m: string[] = [];
    const body = pbxBase(rng, n, m);
    const where = rng.pick([...PBX_TEXT_FIELDS, 'message_text', 'message_text_astral', 'key'] as const);
    if (where === 'message_text') body.message_text = `${text(rng, m)} ${'x'.repeat(rng.between(4097, 20_000))}`;
    else if (where === 'message_text_astral') body.message_text = `${text(rng, m)} ${'\u{1F600}'.repeat(rng.between(4097, 6000))}`;
    else if (where === 'key') body[`k${'e'.repeat(rng.between(256, 1000))}`] = 1;
    else body[where] = `${text(rng, m)} ${'y'.repeat(rng.between(1025, 5000))}`;
    return draft('text.too_long', JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
  }, 4],
  ['text.nul', (rng, _t, n) => unsafePbxText(rng, n, 'text.nul', '\u0000'), 4],
  ['text.surrogate', (rng, _t, n) => unsafePbxText(rng, n, 'text.surrogate', rng.pick(['\ud800', '\udfff', '\udc00x\ud83d', '\ud83d'])), 4],
  ['semantic.outbound_missing_to', (rng, _t, n) => {
    const m: string[] = [];
    const body = pbxNoTo(rng, n, m);
    if (rng.chance(0.6)) body.to = rng.pick(BLANKS);
    return draft('semantic.outbound_missing_to', JSON.stringify(body), { status: 400, code: 'missing_phone' }, m);
  }, 4],
  ['semantic.outbound_bad_to', (rng, _t, n) => {
    const m: string[] = [];
    const body = pbxBase(rng, n, m, 'outbound_message');
    body.to = badPhone(rng, m);
    return draft('semantic.outbound_bad_to', JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
  }, 4],
  ['semantic.outbound_missing_text', (rng, _t, n) => {
    const m: string[] = [];
    const body = pbxBase(rng, n, m, 'outbound_message');
    delete body.message_text;
    if (rng.chance(0.6)) body.message_text = rng.pick(BLANKS);
    return draft('semantic.outbound_missing_text', JSON.stringify(body), { status: 400, code: 'missing_message_text' }, m);
  }, 4],
  ['semantic.template_missing_phone', (rng, _t, n) => {
    const m: string[] = [];
    const body = pbxBase(rng, n, m, rng.pick(TEMPLATE_EVENTS));
    delete body.customer_phone;
    if (rng.chance(0.5)) body.customer_phone = rng.pick(BLANKS);
    if (rng.chance(0.3)) body.to = goodPhone(rng, m);
    return draft('semantic.template_missing_phone', JSON.stringify(body), { status: 400, code: 'missing_phone' }, m);
  }, 3],
  ['semantic.template_bad_phone', (rng, _t, n) => {
    const m: string[] = [];
    const body = pbxBase(rng, n, m, rng.pick(TEMPLATE_EVENTS));
    body.customer_phone = badPhone(rng, m);
    return draft('semantic.template_bad_phone', JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
  }, 3],
  ['nesting.deep', (rng, _t, n) => {
    // Deep in a field of the PBX's own (refused for its depth; without that, for the missing `to`),
    // or in a contract field (a wrong type).
    const m: string[] = [];
    const body = pbxNoTo(rng, n, m);
    const field = rng.pick(['crm', 'meta', 'to', 'queue'] as const);
    body[field] = '@@DEEP@@';
    const raw = deepJson(rng, rng.pick([DEEP_ENOUGH, 1000, 10_000, 50_000, 100_000]), 240_000);
    return draft('nesting.deep', withRaw(body, raw), { status: 400, code: 'validation_error' }, m);
  }, 3],
  ['array.huge', (rng, _t, n) => {
    const m: string[] = [];
    const body = pbxNoTo(rng, n, m);
    const inContract = rng.chance(0.3);
    const size = rng.between(5000, 100_000);
    body[inContract ? 'message_text' : 'items'] = rng.chance(0.5) ? new Array(size).fill(1) : new Array(Math.floor(size / 5)).fill('ab');
    return draft('array.huge', JSON.stringify(body), { status: 400, code: inContract ? 'validation_error' : 'missing_phone' }, m);
  }, 2],
  ['proto.keys', (rng, _t, n) => {
    // Fields hidden behind __proto__ / constructor.prototype are not the event's own: still missing.
    const m: string[] = [];
    const variant = rng.int(4);
    if (variant === 3) {
      const base = JSON.stringify(pbxBase(rng, n, m)).replace('"event_type":', '"__proto__":{"event_type":"test"},"_event_type":');
      return draft('proto.keys', base, { status: 400, code: 'validation_error' }, m);
    }
    const body = pbxNoTo(rng, n, m);
    const hidden = JSON.stringify({ to: goodPhone(rng, m) });
    const json = JSON.stringify(body).slice(1);
    const poison = variant === 0 ? `"__proto__":${hidden},` : variant === 1 ? `"constructor":{"prototype":${hidden}},` : `"\\u005f_proto__":${hidden},`;
    return draft('proto.keys', `{${poison}${json}`, { status: 400, code: 'missing_phone' }, m);
  }, 3],
  ['size.over_limit', (rng, _t, n) => {
    const m: string[] = [];
    const json = JSON.stringify({ ...pbxBase(rng, n, m), pad: pad(rng, LIMITS.pbx) });
    return draft('size.over_limit', rng.chance(0.2) ? json.slice(0, -1) : json, { status: 413, code: 'payload_too_large' }, m);
  }, 1.5],
  ['numbers.as_strings', (rng, _t, n) => {
    const m: string[] = [];
    const body = pbxBase(rng, n, m, rng.pick(['outbound_message', ...TEMPLATE_EVENTS]));
    const field = rng.pick(['to', 'customer_phone', 'message_text', 'queue', 'call_time', 'agent_extension', 'external_message_id'] as const);
    body[field] = field === 'to' || field === 'customer_phone' ? Number(goodPhone(rng, m).slice(1)) : rng.pick([204, 14.05, -1, 0]);
    return draft('numbers.as_strings', JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
  }, 3],
  ['unicode.with_defect', (rng, _t, n) => {
    const m: string[] = [];
    const body = pbxBase(rng, n, m, 'outbound_message');
    body.message_text = `${rng.pick(ODDITIES)}${text(rng, m)}${rng.pick(ODDITIES)}`;
    if (rng.chance(0.5)) {
      delete body.to;
      return draft('unicode.with_defect', JSON.stringify(body), { status: 400, code: 'missing_phone' }, m);
    }
    const phone = `${rng.pick(['\u200f', '\u202e', '\u200b', '\u2066', '\u{1F4DE}'])}${goodPhone(rng, m)}`;
    body.to = phone;
    return draft('unicode.with_defect', JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
  }, 3],
];

function unsafePbxText(rng: Rng, n: number, family: string, bad: string): Draft {
  const m: string[] = [];
  const body = pbxBase(rng, n, m);
  const where = rng.pick(['event_type', 'message_text', ...PBX_TEXT_FIELDS, 'own_value', 'own_key', 'own_nested'] as const);
  if (where === 'own_value') body.crm_note = `note ${bad} ${text(rng, m)}`;
  else if (where === 'own_key') body[`crm${bad}`] = 'x';
  else if (where === 'own_nested') body.meta = { tags: ['a', { deep: [`v${bad}`] }] };
  else {
    body[where] = insert(rng, typeof body[where] === 'string' ? (body[where] as string) : text(rng, m), bad);
  }
  return draft(family, JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
}

/** A path parameter over the router's 100 characters (414), or not a valid percent-encoding (400): the API's generic refusal. */
const badPath = (long: boolean): Expectation => ({ status: long ? 414 : 400, code: 'validation_error' });

const PBX_AUTH_MODES: Array<[string, number]> = [
  ['wrong_secret', 2], ['missing_secret', 1], ['other_integration_secret', 1], ['wrong_hmac_key', 2], ['signature_of_other_body', 1],
  ['stale_timestamp', 2], ['future_timestamp', 1], ['missing_timestamp', 1], ['missing_signature', 1], ['malformed_signature', 2],
  ['bad_timestamp', 1], ['unknown_integration', 2], ['replay', 2], ['bad_path', 0.5],
];

function pbxRequest(rng: Rng, t: FuzzTargets, n: number, unauthenticated: boolean): FuzzRequest {
  const mode = unauthenticated ? rng.weighted(PBX_AUTH_MODES) : 'valid';
  // A body too large is refused before anything else (413), whatever the credentials.
  const families = mode === 'valid' ? PBX_FAMILIES : PBX_FAMILIES.filter(([name]) => !name.startsWith('size.'));
  const [, make] = rng.weighted(families.map((f) => [f, f[2]] as const));
  const d = make(rng, t, n);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-chat-gateway-pbx-secret': t.pbxSecret };
  let path = `/integrations/pbx/webhook/${t.pbxIntegrationId}`;
  const valid: PbxSigning = { key: t.pbxSigningSecret, offsetS: -rng.int(30), form: rng.weighted([['prefixed', 8], ['bare', 1], ['upper-hex', 1]]) };
  let signing: PbxSigning = valid;
  let expect: Expectation = { status: 401, code: 'invalid_pbx_webhook' };
  const b64 = (len: number) => rng.chars(len, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');
  switch (mode) {
    case 'valid':
    case 'replay':
      expect = d.expect;
      break;
    case 'wrong_secret':
      headers['x-chat-gateway-pbx-secret'] = rng.pick([`pbx_${b64(43)}`, t.pbxSecret.slice(0, -1), `${t.pbxSecret}x`, t.pbxSecret.toUpperCase(), '', t.pbxSigningSecret]);
      break;
    case 'missing_secret':
      delete headers['x-chat-gateway-pbx-secret'];
      break;
    case 'other_integration_secret':
      path = `/integrations/pbx/webhook/${t.otherPbxIntegrationId}`;
      break;
    case 'wrong_hmac_key':
      signing = { ...valid, key: rng.pick([`pbxsig_${b64(43)}`, t.pbxSecret, t.pbxSigningSecret.slice(0, -1), ''] ) };
      break;
    case 'signature_of_other_body':
      signing = { ...valid, form: 'other-body' };
      break;
    case 'stale_timestamp':
      signing = { ...valid, offsetS: -(PBX_WINDOW_S + rng.between(30, 100_000)) };
      break;
    case 'future_timestamp':
      signing = { ...valid, offsetS: PBX_WINDOW_S + rng.between(30, 100_000) };
      break;
    case 'missing_timestamp':
      signing = { ...valid, timestampHeader: null };
      break;
    case 'missing_signature':
      signing = { ...valid, form: 'absent' };
      break;
    case 'malformed_signature': {
      const choice = rng.int(7);
      signing = choice === 0 ? { ...valid, form: 'upper-prefix' } : { ...valid, form: 'literal', literal: [
        'sha256=', `sha256=${rng.hex(63)}`, `sha256=${'g'.repeat(64)}`, `sha1=${rng.hex(40)}`, `sha256=${rng.hex(65)}`, `sha256:${rng.hex(64)}`,
      ][choice - 1]! };
      break;
    }
    case 'bad_timestamp':
      signing = { ...valid, timestampHeader: rng.pick(['abc', '1.7e9', '-5', '0x6553F100', `1${rng.digits(13)}`, '', '99999999999', `${Math.floor(Date.now() / 1000)}.5`]) };
      break;
    case 'unknown_integration':
      path = `/integrations/pbx/webhook/${rng.pick(['999999', '0', '2147483647', '999999999', 'abc', '-1', '1e3', '1.0', '01x', '%20', '%E2%80%8F1', '0000000001', String(t.pbxIntegrationId) + '0000', `${t.pbxIntegrationId}%00`])}`;
      break;
    case 'bad_path': {
      // Malformed or over-long path parameters: refused before the route, still as an ApiError.
      const long = rng.chance(0.5);
      path = `/integrations/pbx/webhook/${long ? rng.pick(['1', 'x']).repeat(rng.between(101, 400)) : rng.pick(['%', '%zz', '%E0%A4%A'])}`;
      expect = badPath(long);
      break;
    }
    default:
      throw new Error(`unknown mode ${mode}`);
  }
  const authenticated = mode === 'valid' || mode === 'replay';
  return {
    n,
    endpoint: 'pbx',
    family: authenticated ? d.family : `auth.${mode}`,
    bodyFamily: d.family,
    authenticated,
    path,
    headers,
    body: d.body,
    signing,
    ...(mode === 'replay' ? { replay: true } : {}),
    expect,
    markers: d.markers,
  };
}

/**
 * The signing headers for a PBX request sent now. A valid signature is never handed out twice
 * (the same body within the same second would be a replay): the timestamp steps back instead.
 */
export function pbxSigningHeaders(request: FuzzRequest, nowS: number, used: Set<string>): Record<string, string> {
  const signing = request.signing;
  if (!signing) return {};
  const sign = (ts: number, body: Buffer) => createHmac('sha256', signing.key).update(`${ts}.`).update(body).digest('hex');
  let ts = nowS + signing.offsetS;
  let hex = sign(ts, signing.form === 'other-body' ? Buffer.concat([request.body, Buffer.from(' ')]) : request.body);
  if (request.authenticated) {
    while (used.has(hex)) hex = sign(--ts, request.body);
    used.add(hex);
  }
  const headers: Record<string, string> = {};
  if (signing.timestampHeader === undefined) headers['x-chat-gateway-timestamp'] = String(ts);
  else if (signing.timestampHeader !== null) headers['x-chat-gateway-timestamp'] = signing.timestampHeader;
  const signature = {
    prefixed: `sha256=${hex}`,
    bare: hex,
    'upper-hex': `sha256=${hex.toUpperCase()}`,
    'upper-prefix': `SHA256=${hex}`,
    'other-body': `sha256=${hex}`,
    absent: null,
    literal: signing.literal ?? '',
  }[signing.form];
  if (signature !== null) headers['x-chat-gateway-signature'] = signature;
  return headers;
}

// ---------------------------------------------------------------------------------------------
// POST /integrations/instances/{instance_id}/events/{token}

/** The manager events whose JIDs the ingest checks, the spellings Evolution uses, and where the JIDs are. */
const JID_EVENTS: Array<{ names: string[]; slots: Array<{ path: string[]; required?: boolean }> }> = [
  { names: ['messages.upsert', 'MESSAGES_UPSERT'], slots: [{ path: ['key', 'remoteJid'], required: true }, { path: ['key', 'participant'] }, { path: ['key', 'remoteJidAlt'] }] },
  { names: ['messages.update', 'MESSAGES_UPDATE'], slots: [{ path: ['remoteJid'] }, { path: ['key', 'remoteJid'] }] },
  { names: ['send.message', 'SEND_MESSAGE'], slots: [{ path: ['key', 'remoteJid'], required: true }] },
  { names: ['call', 'CALL'], slots: [{ path: ['from'] }, { path: ['chatId'] }] },
  { names: ['groups.update', 'GROUPS_UPDATE', 'group.update', 'GROUP_UPDATE', 'group-participants.update', 'GROUP_PARTICIPANTS_UPDATE'], slots: [{ path: ['id'] }] },
  { names: ['chats.upsert', 'CHATS_UPSERT', 'chats.update', 'CHATS_UPDATE'], slots: [{ path: ['remoteJid'] }] },
];
const OTHER_EVENTS = ['presence.update', 'PRESENCE_UPDATE', 'contacts.upsert', 'labels.edit', 'connection.update', 'qrcode.updated', 'messages.delete', 'typebot.start'];

/** A well-formed data item of the event kind (its JIDs valid). */
function dataItem(rng: Rng, kind: (typeof JID_EVENTS)[number], markers: string[]): Record<string, unknown> {
  const name = kind.names[0]!;
  const id = `3EB0${rng.hex(16).toUpperCase()}`;
  switch (name) {
    case 'messages.upsert':
      return { key: { remoteJid: goodJid(rng, markers), fromMe: false, id }, pushName: 'Fuzz', message: { conversation: text(rng, markers) }, messageType: 'conversation', messageTimestamp: 1_700_000_000 };
    case 'messages.update':
      return { remoteJid: goodJid(rng, markers), keyId: id, status: rng.pick(['DELIVERY_ACK', 'READ', 'SERVER_ACK']) };
    case 'send.message':
      return { key: { remoteJid: goodJid(rng, markers), fromMe: true, id }, message: { conversation: text(rng, markers) }, messageType: 'conversation' };
    case 'call':
      return { id, from: goodJid(rng, markers), chatId: goodJid(rng, markers), status: rng.pick(['offer', 'timeout', 'reject']) };
    case 'groups.update':
      return { id: `120363${rng.digits(12)}@g.us`, subject: text(rng, markers) };
    default:
      return { remoteJid: goodJid(rng, markers), id: goodJid(rng, markers) };
  }
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const step of path.slice(0, -1)) {
    if (typeof node[step] !== 'object' || node[step] === null) node[step] = {};
    node = node[step] as Record<string, unknown>;
  }
  if (value === undefined) delete node[path[path.length - 1]!];
  else node[path[path.length - 1]!] = value;
}

function envelope(rng: Rng, t: FuzzTargets, event: string, data: unknown): Record<string, unknown> {
  return {
    event,
    instance: t.managerInstance,
    data,
    destination: 'http://gateway.invalid/hook',
    date_time: '2026-01-01T10:00:00.000Z',
    sender: `1415555${rng.digits(4)}@s.whatsapp.net`,
    server_url: 'http://manager.invalid',
    apikey: `k${rng.hex(12)}`,
  };
}

/** An envelope of a JID-checked kind with one bad (or missing required) JID; as an object, or an array of items with one bad. */
function badJidEnvelope(rng: Rng, t: FuzzTargets, markers: string[], value?: unknown): Record<string, unknown> {
  const kind = rng.pick(JID_EVENTS);
  const slot = rng.pick(kind.slots);
  const bad = value !== undefined ? value : slot.required && rng.chance(0.3) ? rng.pick([undefined, null, '']) : badJid(rng, markers);
  const item = dataItem(rng, kind, markers);
  setPath(item, slot.path, bad);
  let data: unknown = item;
  if (rng.chance(0.3)) {
    const items = Array.from({ length: rng.between(1, 4) }, () => dataItem(rng, kind, markers));
    items.splice(rng.int(items.length + 1), 0, item);
    data = items;
  }
  return envelope(rng, t, rng.pick(kind.names), data);
}

/** Any envelope, including kinds without JID checks (for defects the ingest checks everywhere). */
function anyEnvelope(rng: Rng, t: FuzzTargets, markers: string[]): Record<string, unknown> {
  if (rng.chance(0.3)) return envelope(rng, t, rng.pick(OTHER_EVENTS), { id: `x${rng.hex(8)}`, text: text(rng, markers) });
  const kind = rng.pick(JID_EVENTS);
  return envelope(rng, t, rng.pick(kind.names), dataItem(rng, kind, markers));
}

const INGEST_FAMILIES: Array<[string, Family, number]> = [
  ['json.broken', (rng, t) => {
    const m: string[] = [];
    const broken = brokenJson(rng, JSON.stringify(anyEnvelope(rng, t, m)));
    return draft(`json.${broken.kind}`, toBytes(broken.text, broken.kind), { status: 400, code: 'invalid_json' }, m);
  }, 8],
  ['json.bom', (rng, t) => {
    const m: string[] = [];
    return draft('json.bom', `\ufeff${JSON.stringify(badJidEnvelope(rng, t, m))}`, { status: 400, code: 'invalid_json' }, m);
  }, 1],
  ['shape.non_object', (rng, t) => {
    const m: string[] = [];
    const body = rng.pick<() => string>([
      () => '[]',
      () => JSON.stringify([anyEnvelope(rng, t, m)]),
      () => String(rng.between(-10, 1e6)),
      () => JSON.stringify(text(rng, m)),
      () => 'null',
      () => 'true',
      () => '"messages.upsert"',
    ])();
    return draft('shape.non_object', body, { status: 400, code: 'validation_error' }, m);
  }, 4],
  ['shape.no_event', (rng, t) => {
    const m: string[] = [];
    const body = anyEnvelope(rng, t, m);
    const value = rng.pick<unknown>([undefined, 42, null, true, ['messages.upsert'], { name: 'messages.upsert' }, 1.5]);
    if (value === undefined) delete body.event;
    else body.event = value;
    if (rng.chance(0.3)) body.type = 'messages.upsert';
    return draft('shape.no_event', JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
  }, 4],
  ['event.bad_name', (rng, t) => {
    const m: string[] = [];
    const body = anyEnvelope(rng, t, m);
    body.event = rng.pick(['', 'messages upsert', 'messages.upsert\n', 'e'.repeat(rng.between(65, 300)), 'messages/upsert', '\u00c9V\u00c9NEMENT', 'messages.upsert\u200b', '\u{1F4AC}', '<script>', 'messages.upsert;drop', '\u202emessages.upsert', 'a b']);
    return draft('event.bad_name', JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
  }, 4],
  ['jid.bad', (rng, t) => {
    const m: string[] = [];
    return draft('jid.bad', JSON.stringify(badJidEnvelope(rng, t, m)), { status: 400, code: 'validation_error' }, m);
  }, 22],
  ['text.nul', (rng, t) => unsafeEnvelope(rng, t, 'text.nul', '\u0000'), 4],
  ['text.surrogate', (rng, t) => unsafeEnvelope(rng, t, 'text.surrogate', rng.pick(['\ud800', '\udfff', '\udc00x\ud83d', '\ud83d'])), 4],
  ['text.too_long', (rng, t) => {
    const m: string[] = [];
    const body = anyEnvelope(rng, t, m);
    if (rng.chance(0.3)) body[`k${'e'.repeat(rng.between(256, 2000))}`] = 1;
    else body.data = { note: `${text(rng, m)} ${'z'.repeat(rng.between(65_536, 80_000))}` };
    return draft('text.too_long', JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
  }, 1.5],
  ['nesting.deep', (rng, t) => {
    // Deep nesting beside a bad JID: refused for its depth, or (without that rule) for the JID.
    const m: string[] = [];
    const body = badJidEnvelope(rng, t, m);
    const where = rng.pick(['top', 'data'] as const);
    if (where === 'top' || typeof body.data !== 'object' || body.data === null || Array.isArray(body.data)) body.extra = '@@DEEP@@';
    else (body.data as Record<string, unknown>).contextInfo = '@@DEEP@@';
    const raw = deepJson(rng, rng.pick([DEEP_ENOUGH, 1000, 10_000, 100_000, 400_000]), 1_000_000);
    return draft('nesting.deep', withRaw(body, raw), { status: 400, code: 'validation_error' }, m);
  }, 3],
  ['array.huge', (rng, t) => {
    const m: string[] = [];
    const body = badJidEnvelope(rng, t, m);
    const kind = JID_EVENTS.find((k) => k.names.includes(String(body.event)))!;
    const bad = Array.isArray(body.data) ? body.data : [body.data];
    const fillers = rng.chance(0.5)
      ? new Array(rng.between(1000, 100_000)).fill(0)
      : Array.from({ length: rng.between(100, 3000) }, () => dataItem(rng, kind, []));
    // Numbers as items of a kind with a required JID are refused at the first item: put them after it there.
    body.data = kind.slots.some((s) => s.required) ? [...bad, ...fillers] : [...fillers, ...bad];
    return draft('array.huge', JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
  }, 2],
  ['proto.keys', (rng, t) => {
    // A JID hidden behind __proto__ / constructor.prototype is not the item's own: still missing.
    const m: string[] = [];
    const kind = rng.pick(JID_EVENTS.filter((k) => k.slots.some((s) => s.required)));
    const item = dataItem(rng, kind, m);
    const hidden = JSON.stringify({ key: { remoteJid: goodJid(rng, m), id: 'X' } });
    delete item.key;
    const itemJson = JSON.stringify(item).slice(1);
    const variant = rng.int(4);
    if (variant === 3) {
      const env = JSON.stringify(envelope(rng, t, 'x', item)).replace('"event":"x",', `"__proto__":{"event":"${rng.pick(kind.names)}"},`);
      return draft('proto.keys', env, { status: 400, code: 'validation_error' }, m);
    }
    const poison = variant === 0 ? `"__proto__":${hidden},` : variant === 1 ? `"constructor":{"prototype":${hidden}},` : `"\\u005f_proto__":${hidden},`;
    const env = JSON.stringify(envelope(rng, t, rng.pick(kind.names), '@@DEEP@@'));
    return draft('proto.keys', env.replace('"@@DEEP@@"', () => `{${poison}${itemJson}`), { status: 400, code: 'validation_error' }, m);
  }, 3],
  ['size.over_limit', (rng, t) => {
    const m: string[] = [];
    const json = JSON.stringify({ ...anyEnvelope(rng, t, m), pad: pad(rng, LIMITS.ingest) });
    return draft('size.over_limit', rng.chance(0.2) ? json.slice(0, -1) : json, { status: 413, code: 'payload_too_large' }, m);
  }, 0.7],
  ['numbers.as_strings', (rng, t) => {
    const m: string[] = [];
    if (rng.chance(0.3)) {
      const body = anyEnvelope(rng, t, m);
      body.event = rng.pick([1, 200, 3.5]);
      return draft('numbers.as_strings', JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
    }
    return draft('numbers.as_strings', JSON.stringify(badJidEnvelope(rng, t, m, Number(`1415555${rng.digits(4)}`))), { status: 400, code: 'validation_error' }, m);
  }, 2],
  ['unicode.with_defect', (rng, t) => {
    const m: string[] = [];
    const jid = `${rng.pick(['\u200f', '\u202e', '\u200b', '\u2066', '\u{1F4DE}'])}1415555${rng.digits(4)}@s.whatsapp.net`;
    addMarker(m, jid);
    const body = badJidEnvelope(rng, t, m, jid);
    body.sender = `${rng.pick(ODDITIES)} ${text(rng, m)}`;
    return draft('unicode.with_defect', JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
  }, 3],
];

function unsafeEnvelope(rng: Rng, t: FuzzTargets, family: string, bad: string): Draft {
  const m: string[] = [];
  const body = anyEnvelope(rng, t, m);
  const where = rng.pick(['event', 'text', 'key', 'nested', 'instance'] as const);
  if (where === 'event') body.event = `${String(body.event)}${bad}`;
  else if (where === 'text') body.data = { ...(body.data as object), note: `${text(rng, m)}${bad}` };
  else if (where === 'key') body.data = { ...(body.data as object), [`n${bad}`]: 1 };
  else if (where === 'nested') body.data = { ...(body.data as object), list: [1, { deep: [`x${bad}`] }] };
  else body.instance = `${t.managerInstance}${bad}`;
  return draft(family, JSON.stringify(body), { status: 400, code: 'validation_error' }, m);
}

const INGEST_AUTH_MODES: Array<[string, number]> = [
  ['wrong_token', 4], ['short_token', 1], ['unknown_instance', 2], ['malformed_instance', 1], ['other_case_token', 1], ['bad_path', 0.5],
];

function ingestRequest(rng: Rng, t: FuzzTargets, n: number, unauthenticated: boolean): FuzzRequest {
  const mode = unauthenticated ? rng.weighted(INGEST_AUTH_MODES) : 'valid';
  const families = mode === 'valid' ? INGEST_FAMILIES : INGEST_FAMILIES.filter(([name]) => !name.startsWith('size.'));
  const [, make] = rng.weighted(families.map((f) => [f, f[2]] as const));
  const d = make(rng, t, n);
  let instance = encodeURIComponent(t.instanceId);
  let token = t.ingestToken;
  let expect: Expectation = { status: 401, code: 'invalid_api_key' };
  const b64 = (len: number) => rng.chars(len, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');
  switch (mode) {
    case 'valid':
      expect = d.expect;
      break;
    case 'wrong_token':
      token = b64(t.ingestToken.length);
      break;
    case 'short_token':
      token = rng.pick([b64(8), t.ingestToken.slice(0, -1), 'null', 'undefined', '0']);
      break;
    case 'unknown_instance':
      instance = `ins_${rng.hex(24)}`;
      break;
    case 'malformed_instance':
      instance = rng.pick([`${instance}%20`, 'x'.repeat(65), `${instance}%00`, 'ins.x', `%E2%80%8F${instance}`, encodeURIComponent(t.instanceName)]);
      break;
    case 'other_case_token': {
      const swapped = t.ingestToken.replace(/[a-z]/, (c) => c.toUpperCase());
      token = swapped === t.ingestToken ? `${t.ingestToken}A` : swapped;
      break;
    }
    case 'bad_path': {
      const long = rng.chance(0.5);
      token = long ? rng.pick(['x'.repeat(rng.between(101, 400)), `${t.ingestToken}${'A'.repeat(80)}`]) : rng.pick(['%', '%zz', `${t.ingestToken}%E0%A4%A`]);
      expect = badPath(long);
      break;
    }
    default:
      throw new Error(`unknown mode ${mode}`);
  }
  // Evolution's webhookByEvents posts to the URL with the event name appended.
  const suffix = rng.chance(0.2) ? `/${rng.pick(['messages-upsert', 'send-message', 'call', 'chats-update'])}` : '';
  return {
    n,
    endpoint: 'ingest',
    family: mode === 'valid' ? d.family : `auth.${mode}`,
    bodyFamily: d.family,
    authenticated: mode === 'valid',
    path: `/integrations/instances/${instance}/events/${token}${suffix}`,
    headers: { 'content-type': 'application/json' },
    body: d.body,
    expect,
    markers: d.markers,
  };
}

// ---------------------------------------------------------------------------------------------
// The independent check: every request is one the gateway refuses

const ajv = new Ajv({ allErrors: true, coerceTypes: false, useDefaults: false, removeAdditional: false, strict: false });
const validSend = ajv.compile(SendMessageRequestSchema);
const validPbx = ajv.compile(PbxWebhookRequestSchema);

/** The JSON value parsed as the route would, or undefined when it is not JSON. */
function parsed(body: Buffer, stripBom: boolean): { value: unknown } | undefined {
  const text = body.toString('utf8');
  try {
    return { value: JSON.parse(stripBom && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) };
  } catch {
    return undefined;
  }
}

/** Depth, unsafe text (NUL, unpaired surrogate), over-long keys, and prototype-poisoning keys anywhere in a JSON value, iteratively. */
function scan(value: unknown, maxText: number): { depth: number; unsafe: boolean; poisoned: boolean } {
  let depth = 0;
  let unsafe = false;
  let poisoned = false;
  const bad = (s: string, max: number) => s.includes('\u0000') || !s.isWellFormed() || s.length > max;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, level] = stack.pop()!;
    depth = Math.max(depth, level);
    if (typeof node === 'string') unsafe ||= bad(node, maxText);
    else if (Array.isArray(node)) for (const item of node) stack.push([item, level + 1]);
    else if (typeof node === 'object' && node !== null) {
      if (Object.hasOwn(node, '__proto__')) poisoned = true;
      const ctor = (node as Record<string, unknown>).constructor;
      if (Object.hasOwn(node, 'constructor') && typeof ctor === 'object' && ctor !== null && Object.hasOwn(ctor, 'prototype')) poisoned = true;
      for (const [key, inner] of Object.entries(node)) {
        unsafe ||= bad(key, 256);
        stack.push([inner, level + 1]);
      }
    }
  }
  return { depth, unsafe, poisoned };
}

const blank = (value: unknown) => value === undefined || (typeof value === 'string' && value.trim() === '');

/** Why the gateway refuses the request; throws when it would not (a generator bug, never sent). */
export function refusalReason(request: FuzzRequest, t: FuzzTargets): string {
  if (!request.authenticated) return 'credentials';
  const { body } = request;
  if (request.endpoint === 'send') {
    const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') return 'media type';
    if (body.length > LIMITS.send) return 'size';
    const json = parsed(body, true);
    if (!json) return 'json';
    if (scan(json.value, Infinity).poisoned) return 'poisoned json';
    if (!validSend(json.value)) return 'schema';
    const value = json.value as Record<string, string>;
    const key = request.headers['idempotency-key'];
    if (key !== undefined && !/^[\x21-\x7E]{1,255}$/.test(key)) return 'idempotency key';
    if (normalizePhone(value.phone!) === null) return 'phone';
    if (value.instance_id !== t.instanceId && value.instance_id !== t.instanceName) return 'instance';
  } else if (request.endpoint === 'pbx') {
    if (body.length > LIMITS.pbx) return 'size';
    const json = parsed(body, false);
    if (!json) return 'json';
    if (!validPbx(json.value)) return 'schema';
    const scanned = scan(json.value, LIMITS.pbx);
    if (scanned.unsafe) return 'unsafe text';
    if (scanned.depth > DEEP_ENOUGH - 1) return 'depth';
    const value = json.value as Record<string, string | undefined>;
    if (value.event_type === 'outbound_message') {
      if (blank(value.to) || normalizePhone(value.to!) === null) return 'to';
      if (blank(value.message_text)) return 'message_text';
    }
    if ((TEMPLATE_EVENTS as readonly string[]).includes(value.event_type!) && (blank(value.customer_phone) || normalizePhone(value.customer_phone!) === null)) return 'customer_phone';
  } else {
    if (body.length > LIMITS.ingest) return 'size';
    const json = parsed(body, false);
    if (!json) return 'json';
    const value = json.value;
    if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as { event?: unknown }).event !== 'string') return 'shape';
    if (scan(value, 65_536).depth > DEEP_ENOUGH - 1) return 'depth';
    const { apikey: _apikey, ...recorded } = withoutBinaryFields(value as Record<string, unknown>);
    const problem = envelopeProblem(recorded);
    if (problem) return problem;
  }
  throw new Error(`fuzz generator bug: request ${request.n} (${request.endpoint} ${request.family}) would be accepted: ${body.toString('utf8').slice(0, 300)}`);
}

// ---------------------------------------------------------------------------------------------

/** `total` malformed requests (a replayed PBX request counts once here and is sent twice). */
export function* malformedRequests(targets: FuzzTargets, options: FuzzOptions): Generator<FuzzRequest> {
  const rng = new Rng(options.seed);
  const unauthenticatedShare = options.unauthenticatedShare ?? 0.08;
  for (let n = 0; n < options.total; n++) {
    const endpoint = rng.weighted<Endpoint>([['send', 0.4], ['pbx', 0.3], ['ingest', 0.3]]);
    const unauthenticated = rng.chance(unauthenticatedShare);
    const request =
      endpoint === 'send' ? sendRequest(rng, targets, n, unauthenticated) : endpoint === 'pbx' ? pbxRequest(rng, targets, n, unauthenticated) : ingestRequest(rng, targets, n, unauthenticated);
    if (request.expect.status !== undefined && (request.expect.status < 400 || request.expect.status > 499)) throw new Error(`request ${n}: expected status ${request.expect.status} is not 4xx`);
    refusalReason(request, targets);
    yield request;
  }
}
