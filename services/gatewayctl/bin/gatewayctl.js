#!/usr/bin/env -S node --max-semi-space-size=64
// Runs the TypeScript CLI through tsx, so `npx gatewayctl` works from a fresh install without a build.
// A larger young generation: verify, export and rebuild read hundreds of thousands of records,
// and with the default one the garbage collector took a fifth of verify's time.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
