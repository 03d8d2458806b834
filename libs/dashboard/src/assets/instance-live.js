// Keeps an instance's manage page live: asks GET /instances/:id/state every few seconds and shows
// the connection state, the current QR code (the manager replaces it as it expires) and the
// pairing code. The page is rendered right at load time; this only keeps it current, so without
// JavaScript a reload does the same. Parts are shown by their data-when="<states>" attribute.
(function () {
  'use strict';
  var root = document.getElementById('connection');
  if (!root || !window.fetch) return;
  var url = root.getAttribute('data-state-url');
  var labels = {};
  try { labels = JSON.parse(root.getAttribute('data-labels') || '{}'); } catch (e) { labels = {}; }
  var stateEl = document.getElementById('connection-state');
  var qrBox = document.getElementById('qr-box');
  var qrImage = document.getElementById('qr-image');
  var pairingBox = document.getElementById('pairing-box');
  var pairingCode = document.getElementById('pairing-code');
  var PERIOD_MS = 2500;
  var timer = null;
  var stopped = false;

  function tone(state) {
    return state === 'open' ? 'good' : state === 'connecting' ? '' : 'bad';
  }

  function show(live) {
    var state = String(live.connection_state);
    if (stateEl && stateEl.getAttribute('data-state') !== state) {
      stateEl.setAttribute('data-state', state);
      stateEl.className = ('status ' + tone(state)).trim();
      stateEl.textContent = labels[state] || state;
    }
    var parts = root.querySelectorAll('[data-when]');
    for (var i = 0; i < parts.length; i++) {
      parts[i].hidden = parts[i].getAttribute('data-when').split(' ').indexOf(state) < 0;
    }
    var qr = typeof live.qr === 'string' && live.qr.indexOf('data:image/png;base64,') === 0 ? live.qr : null;
    if (qrBox && qrImage) {
      if (qr && qrImage.getAttribute('src') !== qr) qrImage.setAttribute('src', qr);
      qrBox.hidden = !qr;
    }
    if (pairingBox && pairingCode) {
      pairingCode.textContent = live.pairing_code || '';
      pairingBox.hidden = !live.pairing_code;
    }
  }

  function stop(message) {
    stopped = true;
    if (timer) clearTimeout(timer);
    timer = null;
    if (stateEl && message) stateEl.textContent = message;
  }

  function poll() {
    timer = null;
    // A hidden tab asks nothing; it catches up when shown again.
    if (document.hidden) return schedule();
    fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store', redirect: 'manual' })
      .then(function (response) {
        var json = (response.headers.get('content-type') || '').indexOf('application/json') === 0;
        // Signed out (redirected to sign-in), or the instance is gone: stop, and say to reload.
        if (!response.ok || !json) return stop('Reload the page to see the current state.');
        return response.json().then(function (live) { show(live); schedule(); });
      })
      .catch(function () { schedule(); });
  }

  function schedule() {
    if (!timer && !stopped) timer = setTimeout(poll, PERIOD_MS);
  }

  schedule();
})();
