// Builds verifier.js into a component with the JS API of componentize-js:
// the `jco componentize` command fails on Node 20 ("failed to get path
// metadata"), and all features are disabled so the component imports no
// wasi:http (the host offers only its own guarded http import).
import { componentize } from '@bytecodealliance/componentize-js';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2] ?? join(here, 'js-verifier.wasm');
const { component } = await componentize({
  sourcePath: join(here, 'verifier.js'),
  witPath: join(here, '../../../wit'),
  worldName: 'email-verifier',
  disableFeatures: ['stdio', 'random', 'clocks', 'http', 'fetch-event'],
});
await writeFile(out, component);
console.log(`wrote ${out} (${component.length} bytes)`);
