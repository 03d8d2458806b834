export { generateApiKey, parseApiKey, secretMatches, hashSecret, type GeneratedApiKey } from './api-keys.ts';
export { SecretBox } from './secret-box.ts';
export { newId } from './ids.ts';
