// Debian's Chromium, headless, for the browser tests (test/browser/): one browser for the run, each
// test file in a context of its own (`chromium.connectOverCDP(inject('peers').chromium)`). Nothing
// of the browser's own reaches the network, so tests see only their pages' requests.
import { join } from 'node:path';
import { httpOk, PEERS_DIR, type Peer } from './peer.ts';

const port = Number(process.env.TEST_CHROMIUM_PORT ?? 9333);

export default {
  name: 'chromium',
  neededBy: 'all',
  program: '/usr/bin/chromium',
  install: 'apt-get install -y chromium',
  address: `http://127.0.0.1:${port}`,
  ready: () => httpOk(`http://127.0.0.1:${port}/json/version`),
  start: {
    command: '/usr/bin/chromium',
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', `--remote-debugging-port=${port}`, '--remote-debugging-address=127.0.0.1',
      `--user-data-dir=${join(PEERS_DIR, 'chromium-profile')}`,
      // What Playwright passes to a headless Chromium it launches itself: pages render and time the
      // same as in a browser of their own (no scrollbars taking width, no throttled background tabs).
      '--hide-scrollbars', '--mute-audio', '--blink-settings=primaryHoverType=2,availableHoverTypes=2,primaryPointerType=4,availablePointerTypes=4',
      '--disable-field-trial-config', '--disable-background-timer-throttling', '--disable-backgrounding-occluded-windows',
      '--disable-renderer-backgrounding', '--disable-back-forward-cache', '--disable-breakpad', '--disable-extensions',
      '--disable-default-apps', '--disable-dev-shm-usage', '--no-default-browser-check', '--disable-hang-monitor',
      '--disable-ipc-flooding-protection', '--disable-popup-blocking', '--disable-prompt-on-repost', '--allow-pre-commit-input',
      '--force-color-profile=srgb', '--metrics-recording-only', '--password-store=basic', '--use-mock-keychain', '--no-service-autorun',
      'about:blank',
    ],
  },
} satisfies Peer;
