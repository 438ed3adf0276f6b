/**
 * The Node.js the product supports. .nvmrc pins the exact release every npm script runs on
 * (scripts/with-pinned-node.sh); package.json's engines, the Dockerfile's FROM and this major agree
 * (test/settings/node-runtime.test.ts). Older majors are end of life or lack what ky 2 needs, so a process
 * started on one refuses at configuration time, naming the runtime, instead of failing later.
 */
export const SUPPORTED_NODE_MAJOR = 24;

/** Why `version` (as in process.versions.node) cannot run the product, or undefined when it can. */
export function nodeRuntimeProblem(version: string): string | undefined {
  const major = Number.parseInt(version, 10);
  if (Number.isInteger(major) && major >= SUPPORTED_NODE_MAJOR) return undefined;
  return (
    `Node.js ${version}: this product runs on Node.js ${SUPPORTED_NODE_MAJOR} LTS (the release in .nvmrc). ` +
    'Run it through its npm scripts, which bring that runtime, or `nvm use` / `volta install node@' +
    `${SUPPORTED_NODE_MAJOR}\``
  );
}
