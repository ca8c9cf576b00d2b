/** The field-mapping engine: load a mapping file, then build context and write-back from it. */
export { loadMappings, parseMapping, mappingFilePath } from './load.js';
export { buildContext, capContext, contextBytes, CONTEXT_MAX_BYTES } from './context.js';
export {
  buildActivity,
  buildFollowups,
  followupCallIdField,
  followupsGeneratedAtField,
  FOLLOWUPS_GENERATED_AT_FIELD,
  linksOf,
  writtenQueryFor,
} from './writeback.js';
export { buildDealWrite, dealTarget, type DealInput } from './deal.js';
export { lookupFieldsFor, dealRuleFor, ALWAYS_READ } from './lookupFields.js';
export { requiredFields, isCustomFieldName } from './requirements.js';
export { previewCall, formatPreview, type PreviewSource, type Preview } from './preview.js';
export {
  MappingError,
  MappingRequiredMissingError,
  MappingEvaluationError,
  formatProblem,
  type MappingProblem,
} from './errors.js';
export type {
  Mapping,
  CompiledField,
  WritebackTarget,
  DealTarget,
  ContextBody,
  ContextInput,
  WritebackInput,
  CallInput,
  FollowupDraftInput,
} from './types.js';
