#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx gatewayctl` works from a fresh install without a build.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
