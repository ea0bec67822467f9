/**
 * Regenerates api.json, the committed API contract (docs/architecture.md, "How the code is built"):
 *   npm run api
 * test/framework/contract.test.ts fails when the code and the file drift.
 */
import { writeFileSync } from 'node:fs';
import { apiContract, contractText } from '../src/framework/api.js';
import { buildRegistry } from '../src/objects/index.js';

writeFileSync(new URL('../api.json', import.meta.url), contractText(apiContract(buildRegistry())));
process.stdout.write('api.json written\n');
