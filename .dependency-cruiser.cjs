/**
 * The house's import rules, checked by `npm run lint` (docs/architecture.md, "The floors"):
 * - no circle anywhere in src/;
 * - each room imports only rooms on its own floor or below (the floors listed bottom up);
 * - no app imports another: the CLI, the console, the pipeline entry and the worker each stand on
 *   the libraries beneath them alone;
 * - the product does not import the sandbox (sandbox/, outside src/: a stand-in of the service for
 *   development, tests and demos, not in the product's image); the sandbox may import the product's
 *   schemas and settings loader.
 */
const FLOORS = [
  ['aggregator', 'audit', 'budget', 'logging', 'bundle', 'payload-store', 'presentation', 'retry', 'sdk', 'validation'],
  ['contract'],
  ['admission', 'codec', 'identity', 'callbacks', 'http'],
  ['metrics', 'settings'],
  ['temporal'],
  ['activities'],
  ['workflows'],
  ['tracing'],
  ['client'],
  ['nexus', 'cli', 'console', 'pipeline-entry'],
  ['worker'],
];
/** The apps: processes of their own. The Nexus service is not one: the worker hosts it. */
const APPS = ['cli', 'console', 'pipeline-entry', 'worker'];

/** A room's files: src/<room>/…, and for the worker also src/worker.ts. */
const room = (name) => (name === 'worker' ? '^src/(worker/|worker\\.ts$)' : `^src/${name}/`);
const anyOf = (names) => names.map(room).join('|');

const floorRules = FLOORS.flatMap((rooms, floor) => {
  const above = FLOORS.slice(floor + 1).flat();
  return above.length === 0
    ? []
    : [
        {
          name: `floor-${floor}-looks-up`,
          comment: `${rooms.join(', ')} stand below ${above.join(', ')}: an import upwards makes the lower room depend on its users.`,
          severity: 'error',
          from: { path: anyOf(rooms) },
          to: { path: anyOf(above) },
        },
      ];
});

const appRules = APPS.map((app) => ({
  name: `no-app-imports-another-${app}`,
  comment: `${app} is an app: no other app imports it; what they share lives in a library room below.`,
  severity: 'error',
  from: { path: anyOf(APPS.filter((other) => other !== app)) },
  to: { path: room(app) },
}));

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'A circle of imports has no floor to stand on.', severity: 'error', from: { path: '^src/' }, to: { circular: true } },
    {
      name: 'rooms-are-listed',
      comment: 'Every room of src/ has a floor in .dependency-cruiser.cjs and a row on the architecture page.',
      severity: 'error',
      from: { path: '^src/', pathNot: `${anyOf(FLOORS.flat())}` },
      to: {},
    },
    {
      name: 'product-imports-no-sandbox',
      comment: 'The sandbox is a stand-in of the service for development and tests: nothing the product ships may need it.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^sandbox/' },
    },
    ...floorRules,
    ...appRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^(src|sandbox)/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
