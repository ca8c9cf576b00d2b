// The import rules `npm run lint` enforces on src/ (docs/architecture.md explains the layers).
// A folder imports its own files and folders of lower tiers only; folders of one tier do not
// import each other. No import cycles anywhere in the product, type-only imports included.
const TIERS = [
  ['util', 'log', 'version.ts'],
  ['budget', 'sync'],
  ['service', 'crm'],
  ['deals', 'config'],
  ['mapping', 'metrics'],
  ['store', 'generated'],
  ['pipelines'],
  ['drift'],
  ['ops', 'http'],
  ['console'],
  ['worker'],
  ['cli'],
];

const pathOf = (name) => (name.endsWith('.ts') ? `^src/${name.replace('.', '\\.')}$` : `^src/${name}/`);

const layerRules = TIERS.flatMap((tier, rank) =>
  tier.map((name) => {
    const allowed = [name, ...TIERS.slice(0, rank).flat()];
    return {
      name: `layer-${name.replace('.ts', '')}`,
      comment: `src/${name} imports only ${allowed.slice(1).join(', ') || 'nothing else in src'} (docs/architecture.md)`,
      severity: 'error',
      from: { path: pathOf(name) },
      to: { path: '^src/', pathNot: allowed.map(pathOf) },
    };
  }),
);

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle: move what both sides need into a module of its own (docs/architecture.md)',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-unknown-folder',
      comment: 'A new folder under src/ needs its tier in .dependency-cruiser.mjs and docs/architecture.md',
      severity: 'error',
      from: { path: '^src/', pathNot: TIERS.flat().map(pathOf) },
      to: {},
    },
    ...layerRules,
  ],
  options: {
    // The Prisma client is generated. (The sandboxes are a package of their own, packages/sandboxes.)
    exclude: { path: '^src/generated/' },
    doNotFollow: { path: ['node_modules', '^src/generated/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
