import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SimContext } from '../sim-context.ts';

// GET /sim/instances/{instance}/phone: a plain page to play the phone by hand. The page
// itself needs no key; its buttons call the /sim and /instance API, which do. The global
// key is embedded only when the simulator runs with pageKeyInline (SIM_PAGE_KEY_INLINE=1)
// AND the page is requested from a loopback address; otherwise the page asks for the key
// and keeps it in sessionStorage. A strict CSP (nonce script, connect-src 'self') and
// no-store/no-referrer headers keep an embedded key on this origin.

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

function isLoopback(request: FastifyRequest): boolean {
  return LOOPBACK.has(request.socket.remoteAddress ?? '');
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** JSON safe inside <script>: no `</script>`, no HTML comment openers, no U+2028/9. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export function registerPhonePage(app: FastifyInstance, ctx: SimContext): void {
  app.get<{ Params: { instanceName?: string } }>('/sim/instances/:instanceName/phone', async (request, reply) => {
    const name = request.params.instanceName ?? '';
    const nonce = randomBytes(16).toString('base64');
    reply
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff')
      .header(
        'content-security-policy',
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'`,
      )
      .type('text/html; charset=utf-8');
    if (!ctx.store.has(name)) {
      return reply.code(404).send(`<!doctype html><title>Not found</title><p>No instance "${escapeHtml(name)}".</p>`);
    }
    const inlineKey = ctx.options.pageKeyInline && isLoopback(request) ? ctx.options.globalApiKey : null;
    return reply.send(renderPage(name, inlineKey, nonce));
  });
}

function renderPage(instanceName: string, inlineKey: string | null, nonce: string): string {
  const title = escapeHtml(instanceName);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Phone · ${title}</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 0; background: #ece5dd; color: #111; }
  header { background: #075e54; color: #fff; padding: 12px 16px; display: flex; gap: 12px; align-items: center; }
  header h1 { font-size: 18px; margin: 0; flex: 1; }
  main { max-width: 720px; margin: 0 auto; padding: 12px; display: grid; gap: 12px; }
  section { background: #fff; border-radius: 8px; padding: 12px; }
  h2 { font-size: 15px; margin: 0 0 8px; }
  .state { font-weight: bold; }
  #qr img { width: 240px; height: 240px; image-rendering: pixelated; display: block; margin: 8px 0; }
  ul { list-style: none; padding: 0; margin: 0; display: grid; gap: 6px; }
  li { padding: 6px 10px; border-radius: 6px; max-width: 85%; }
  li.out { background: #dcf8c6; justify-self: end; }
  li.in { background: #f1f1f1; justify-self: start; }
  li small { display: block; color: #555; font-size: 11px; }
  form, .row { display: flex; gap: 6px; flex-wrap: wrap; }
  input { padding: 6px; flex: 1; min-width: 120px; }
  button { padding: 6px 12px; cursor: pointer; }
  .error { color: #b00020; }
</style>
</head>
<body>
<header><h1>📱 ${title}</h1><span>state: <span class="state" id="state">…</span></span></header>
<main>
  <section id="keybox" hidden>
    <h2>Simulator global key</h2>
    <form id="keyform"><input id="key" type="password" autocomplete="off" placeholder="SIM_GLOBAL_API_KEY"><button>Use</button></form>
  </section>
  <section id="qr">
    <h2>Link a device</h2>
    <div id="qrbody"></div>
    <div class="row">
      <button id="connect" type="button">Connect (new QR)</button>
      <button id="scan" type="button">Scan (pair)</button>
      <button id="disconnect" type="button">Disconnect</button>
    </div>
  </section>
  <section>
    <h2>Chat</h2>
    <ul id="messages"></ul>
  </section>
  <section>
    <h2>Reply as the recipient</h2>
    <form id="reply">
      <input id="from" placeholder="from (number)" required>
      <input id="pushname" placeholder="name (optional)">
      <input id="text" placeholder="message" required>
      <button>Send</button>
    </form>
    <div class="row" style="margin-top:6px">
      <button id="call-missed" type="button">Missed call from this number</button>
      <button id="call-answered" type="button">Answered call</button>
    </div>
  </section>
  <p id="error" class="error"></p>
</main>
<script nonce="${nonce}">
(() => {
  const instance = ${scriptJson(instanceName)};
  const inlineKey = ${scriptJson(inlineKey)};
  const base = '/sim/instances/' + encodeURIComponent(instance);
  const $ = (id) => document.getElementById(id);
  let key = inlineKey || sessionStorage.getItem('sim-key') || '';
  if (!inlineKey) $('keybox').hidden = false;
  $('key').value = key;
  $('keyform').addEventListener('submit', (event) => {
    event.preventDefault();
    key = $('key').value;
    sessionStorage.setItem('sim-key', key);
    refresh();
  });

  async function api(method, path, body) {
    const headers = { apikey: key };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const data = await response.json().catch(() => null);
    if (!response.ok) throw new Error(method + ' ' + path + ': ' + response.status + ' ' + JSON.stringify(data && data.response ? data.response.message : data));
    return data;
  }
  const run = (fn) => async () => { try { $('error').textContent = ''; await fn(); await refresh(); } catch (error) { $('error').textContent = String(error.message || error); } };

  $('connect').addEventListener('click', run(() => api('GET', '/instance/connect/' + encodeURIComponent(instance))));
  $('scan').addEventListener('click', run(() => api('POST', base + '/pair', {})));
  $('disconnect').addEventListener('click', run(() => api('POST', base + '/disconnect', {})));
  $('reply').addEventListener('submit', (event) => {
    event.preventDefault();
    const body = { from: $('from').value, text: $('text').value };
    if ($('pushname').value) body.push_name = $('pushname').value;
    run(async () => { await api('POST', base + '/inbound', body); $('text').value = ''; })();
  });
  $('call-missed').addEventListener('click', run(() => api('POST', base + '/call', { from: $('from').value, missed: true })));
  $('call-answered').addEventListener('click', run(() => api('POST', base + '/call', { from: $('from').value, missed: false })));

  function item(cls, text, meta) {
    const li = document.createElement('li');
    li.className = cls;
    li.textContent = text;
    const small = document.createElement('small');
    small.textContent = meta;
    li.appendChild(small);
    return li;
  }
  const ticks = { PENDING: '🕓', SERVER_ACK: '✓', DELIVERY_ACK: '✓✓', READ: '✓✓ read', ERROR: '⚠ error' };

  async function refresh() {
    if (!key) { $('state').textContent = 'key needed'; return; }
    const data = await api('GET', base + '/conversation');
    $('state').textContent = data.state;
    const qr = $('qrbody');
    qr.replaceChildren();
    if (data.qrcode && data.qrcode.base64) {
      const img = document.createElement('img');
      img.alt = 'QR code';
      img.src = data.qrcode.base64;
      qr.appendChild(img);
      if (data.qrcode.pairingCode) qr.appendChild(document.createTextNode('pairing code: ' + data.qrcode.pairingCode));
    } else {
      qr.textContent = data.state === 'open' ? 'Linked as ' + data.owner_jid : 'No QR: press Connect.';
    }
    const rows = [
      ...data.outbound.map((m) => ({ at: m.received_at, li: item('out', m.text, 'to ' + m.remote_jid + ' · ' + (ticks[m.status] || m.status)), number: m.number })),
      ...data.inbound.map((m) => ({ at: m.received_at, li: item('in', m.text, (m.participant ? m.participant + ' in ' : '') + m.push_name + ' · ' + m.remote_jid) })),
    ].sort((a, b) => a.at.localeCompare(b.at));
    $('messages').replaceChildren(...rows.map((row) => row.li));
    const lastOut = data.outbound[data.outbound.length - 1];
    if (!$('from').value && lastOut) $('from').value = lastOut.remote_jid.split('@')[0];
  }

  const tick = () => refresh().catch((error) => { $('error').textContent = String(error.message || error); });
  tick();
  setInterval(tick, 1000);
})();
</script>
</body>
</html>
`;
}
