import { existsSync } from 'node:fs';
import { Option, type Command } from 'commander';
import type { CrmName } from '../../crm/types.js';
import { formatProblem, MappingError } from '../../mapping/errors.js';
import { loadMappings, mappingFilePath } from '../../mapping/load.js';
import { formatPreview, previewCall, type PreviewSource } from '../../mapping/preview.js';

const CRMS: CrmName[] = ['hubspot', 'salesforce'];

export interface MappingsCommandDeps {
  /**
   * Opens the read-only sources `preview` needs (Service client + CRM adapter). Wired by the
   * caller; without it `preview` explains that it is unavailable.
   */
  openPreviewSource?: (options: {
    crm: CrmName;
    configDir: string;
  }) => Promise<PreviewSource & { close?(): Promise<void> }>;
  out?: (text: string) => void;
  err?: (text: string) => void;
}

export interface CommandResult {
  exitCode: number;
  output: string;
  /** Where the output goes: problems to stderr, results to stdout. */
  stream: 'out' | 'err';
}

/** `mappings check`: every problem of the mapping file(s) as `file:line:col: path: message`, or `ok`. */
export function runMappingsCheck(options: { configDir: string; crm?: CrmName | undefined }): CommandResult {
  const crms = options.crm
    ? [options.crm]
    : CRMS.filter((c) => existsSync(mappingFilePath(options.configDir, c)));
  if (crms.length === 0) {
    const output = `no mapping files in ${options.configDir}/mappings (expected hubspot.yaml or salesforce.yaml)`;
    return { exitCode: 1, output, stream: 'err' };
  }
  const lines: string[] = [];
  for (const crm of crms) {
    try {
      loadMappings(options.configDir, crm);
    } catch (err) {
      if (!(err instanceof MappingError)) throw err;
      lines.push(...err.problems.map(formatProblem));
    }
  }
  return lines.length === 0
    ? {
        exitCode: 0,
        output: `ok (${crms.map((c) => mappingFilePath(options.configDir, c)).join(', ')})`,
        stream: 'out',
      }
    : { exitCode: 1, output: lines.join('\n'), stream: 'err' };
}

/** `mappings preview <callId>`: what one call would push and write, writing nothing. */
export async function runMappingsPreview(
  deps: MappingsCommandDeps,
  options: { configDir: string; crm: CrmName; callId: string; json?: boolean | undefined },
): Promise<CommandResult> {
  let mapping;
  try {
    mapping = loadMappings(options.configDir, options.crm);
  } catch (err) {
    if (err instanceof MappingError) {
      return { exitCode: 1, output: err.problems.map(formatProblem).join('\n'), stream: 'err' };
    }
    throw err;
  }
  if (!deps.openPreviewSource) {
    const output = 'mappings preview is not available in this build (no Service/CRM connection wired)';
    return { exitCode: 1, output, stream: 'err' };
  }
  const source = await deps.openPreviewSource({ crm: options.crm, configDir: options.configDir });
  try {
    const preview = await previewCall(source, mapping, options.callId);
    const failed =
      !preview.context.ok || !preview.activity.ok || !preview.followups.ok || preview.deal?.ok === false;
    return {
      exitCode: failed ? 1 : 0,
      output: options.json ? JSON.stringify(preview, null, 2) : formatPreview(preview),
      stream: 'out',
    };
  } finally {
    await source.close?.();
  }
}

export function registerMappings(program: Command, deps: MappingsCommandDeps = {}): void {
  const out = deps.out ?? ((text: string) => console.log(text));
  const err = deps.err ?? ((text: string) => console.error(text));
  const configDirOption = () =>
    new Option('--config-dir <dir>', 'directory holding mappings/<crm>.yaml').default(
      process.env.CONFIG_DIR ?? './config',
    );
  const crmOption = (description: string) => new Option('--crm <crm>', description).choices(CRMS);

  const mappings = program.command('mappings').description('Check and preview the CRM field-mapping files');
  mappings
    .command('check')
    .description('Validate the mapping file(s); prints ok or each problem as file:line:col: path: message')
    .addOption(crmOption('check only this CRM (default: every mapping file present)'))
    .addOption(configDirOption())
    .action((opts: { crm?: CrmName; configDir: string }) => {
      const result = runMappingsCheck({ configDir: opts.configDir, crm: opts.crm });
      (result.stream === 'out' ? out : err)(result.output);
      process.exitCode = result.exitCode;
    });
  mappings
    .command('preview')
    .argument('<callId>', 'Service call id')
    .description('Show the context that would be pushed and the records that would be written for one call')
    .addOption(crmOption('CRM whose mapping to use').default(process.env.CRM ?? 'hubspot'))
    .addOption(configDirOption())
    .option('--json', 'print the preview as JSON')
    .action(async (callId: string, opts: { crm: CrmName; configDir: string; json?: boolean }) => {
      const result = await runMappingsPreview(deps, { ...opts, callId });
      (result.stream === 'out' ? out : err)(result.output);
      process.exitCode = result.exitCode;
    });
}
